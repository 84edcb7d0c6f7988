"""The atomic mutation core: serialization across processes, crash safety, stale temps."""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import random
import signal
import time
from pathlib import Path

import pytest

from chorus_tools.tools.mutate.atomic import Current, mutate
from chorus_tools.tools.confine.reserved import TEMP_PREFIX, is_temp_name
from chorus_tools.tools.mutate.temp_names import sweep_temp_files
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.confine.sandbox import Workspace

_FORK = multiprocessing.get_context("fork")
STALE = TEMP_PREFIX + "0123456789abcdef"


def _temps(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if is_temp_name(p.name)]


def test_compute_sees_current_and_target(ctx: ToolContext, root: Path) -> None:
    (root / "sub").mkdir()
    (root / "sub/f.txt").write_bytes(b"abc")
    (root / "link").symlink_to("sub/f.txt")
    seen: list[Current] = []

    def compute(cur: Current) -> bytes:
        seen.append(cur)
        return cur.data + b"d"

    out = mutate(ctx, "link", shown="link", compute=compute)
    assert seen[0].rel == "sub/f.txt" and seen[0].data == b"abc"
    assert (out.created, out.written, out.before, out.after) == (False, True, b"abc", b"abcd")
    assert out.stat.st_size == 4
    assert (root / "sub/f.txt").read_bytes() == b"abcd"


def test_compute_none_leaves_file(ctx: ToolContext, root: Path) -> None:
    (root / "f").write_bytes(b"x")
    before = os.stat(root / "f")
    out = mutate(ctx, "f", shown="f", compute=lambda cur: None)
    assert out.written is False and out.after == b"x"
    assert os.stat(root / "f").st_ino == before.st_ino
    out = mutate(ctx, "absent", shown="absent", compute=lambda cur: None)
    assert (out.created, out.written, out.stat) == (False, False, None)
    assert not (root / "absent").exists()


def test_compute_error_leaves_no_trace(ctx: ToolContext, root: Path) -> None:
    (root / "f").write_bytes(b"x")

    def refuse(cur: Current) -> bytes:
        raise ToolError("find_not_found", "nope", path="f")

    with pytest.raises(ToolError):
        mutate(ctx, "f", shown="f", compute=refuse)
    assert (root / "f").read_bytes() == b"x"
    assert sorted(p.name for p in root.iterdir()) == ["f"]


def test_without_read_current(ctx: ToolContext, root: Path) -> None:
    (root / "f").write_bytes(b"same")
    seen: list[Current] = []
    out = mutate(ctx, "f", shown="f", compute=lambda cur: seen.append(cur) or b"same",
                 read_current=False)
    assert seen[0].data is None and seen[0].stat.st_size == 4
    assert out.written is False


def test_directory_lock_is_held_during_compute(ctx: ToolContext, root: Path) -> None:
    (root / "d").mkdir()
    probe = os.open(root / "d", os.O_RDONLY | os.O_DIRECTORY)

    def compute(cur: Current) -> bytes:
        with pytest.raises(BlockingIOError):
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return b"x"

    try:
        mutate(ctx, "d/f", shown="d/f", compute=compute)
        fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released once mutate returns
    finally:
        os.close(probe)


def _append_lines(root: str, use_openat2: bool, tag: int, count: int) -> None:
    ctx = ToolContext(ws=Workspace(root, use_openat2=use_openat2))
    for i in range(count):
        mutate(ctx, "log.txt", shown="log.txt",
               compute=lambda cur, i=i: (cur.data or b"") + f"{tag}:{i}\n".encode())


def test_concurrent_read_modify_write_loses_nothing(ctx: ToolContext, root: Path) -> None:
    procs, per = 8, 25
    workers = [_FORK.Process(target=_append_lines,
                             args=(str(root), ctx.ws.uses_openat2, tag, per))
               for tag in range(procs)]
    for proc in workers:
        proc.start()
    for proc in workers:
        proc.join()
    assert [proc.exitcode for proc in workers] == [0] * procs
    lines = (root / "log.txt").read_text().splitlines()
    assert sorted(lines) == sorted(f"{t}:{i}" for t in range(procs) for i in range(per))
    for tag in range(procs):  # each writer's lines stay in its own order
        mine = [line for line in lines if line.startswith(f"{tag}:")]
        assert mine == [f"{tag}:{i}" for i in range(per)]
    assert _temps(root) == []


def _write_forever(root: str, use_openat2: bool, contents: list[bytes], ready: int) -> None:
    ctx = ToolContext(ws=Workspace(root, use_openat2=use_openat2))
    n = 0
    while True:
        data = contents[n % len(contents)]
        mutate(ctx, "big.bin", shown="big.bin", compute=lambda cur, d=data: d,
               read_current=False)
        if n == 0:
            os.write(ready, b"1")
        n += 1


def test_sigkill_mid_write_leaves_old_or_new(ctx: ToolContext, root: Path) -> None:
    size = 2 * 1024 * 1024
    contents = [bytes([65 + k]) * size + bytes([97 + k]) for k in range(3)]
    (root / "big.bin").write_bytes(b"initial")
    rng = random.Random(1234)
    for _ in range(12):
        read_fd, write_fd = os.pipe()
        child = _FORK.Process(target=_write_forever,
                              args=(str(root), ctx.ws.uses_openat2, contents, write_fd))
        child.start()
        os.close(write_fd)
        assert os.read(read_fd, 1) == b"1"  # at least one write finished
        os.close(read_fd)
        time.sleep(rng.uniform(0, 0.03))  # land the kill anywhere in a later write
        os.kill(child.pid, signal.SIGKILL)
        child.join()
        assert (root / "big.bin").read_bytes() in contents
    (root / "other").write_bytes(b"")
    mutate(ctx, "other", shown="other", compute=lambda cur: b"after the crashes")
    assert _temps(root) == []


def test_stale_temp_removed_by_next_mutation(ctx: ToolContext, root: Path) -> None:
    (root / "d").mkdir()
    (root / "d" / STALE).write_bytes(b"half")
    (root / "d" / (TEMP_PREFIX + "not-ours")).write_bytes(b"user file, other shape")
    (root / STALE).write_bytes(b"in another directory")
    mutate(ctx, "d/f", shown="d/f", compute=lambda cur: b"x")
    assert sorted(p.name for p in (root / "d").iterdir()) == [TEMP_PREFIX + "not-ours", "f"]
    assert (root / STALE).exists()


def test_reserved_name_refused(ctx: ToolContext, root: Path) -> None:
    (root / "link").symlink_to(STALE)
    for path in (STALE, "link"):
        with pytest.raises(ToolError) as exc:
            mutate(ctx, path, shown=path, compute=lambda cur: b"x")
        assert exc.value.code == "invalid_params"
    assert not (root / STALE).exists()


def test_link_bearing_a_reserved_name_writes_its_target(ctx: ToolContext,
                                                       root: Path) -> None:
    """The reserved-name check is on the file written, as when every path was resolved
    before the lock (now only links are, once the entry shows it is one)."""
    (root / "d").mkdir()
    (root / "d/real.txt").write_bytes(b"old")
    (root / STALE).symlink_to("d/real.txt")
    out = mutate(ctx, STALE, shown=STALE, compute=lambda cur: cur.data + b"!")
    assert out.written and (root / "d/real.txt").read_bytes() == b"old!"
    assert (root / STALE).is_symlink()


def test_create_dirs_through_symlinked_parent(ctx: ToolContext, root: Path) -> None:
    (root / "real").mkdir()
    (root / "alias").symlink_to("real")
    out = mutate(ctx, "alias/new/deeper/f", shown="alias/new/deeper/f",
                 compute=lambda cur: b"x", create_dirs=True)
    assert out.created is True
    assert (root / "real/new/deeper/f").read_bytes() == b"x"


def test_create_dirs_never_escapes(ctx: ToolContext, root: Path, outside: Path) -> None:
    (root / "out").symlink_to("../outside")
    with pytest.raises(ToolError) as exc:
        mutate(ctx, "out/made/f", shown="out/made/f", compute=lambda cur: b"x",
               create_dirs=True)
    assert exc.value.code == "path_outside_workspace"
    assert sorted(p.name for p in outside.iterdir()) == ["canary.txt"]


def test_sweep_temp_files(ctx: ToolContext, root: Path, outside: Path) -> None:
    (root / "a/b/c").mkdir(parents=True)
    for directory in (root, root / "a", root / "a/b/c"):
        (directory / STALE).write_bytes(b"stale")
        (directory / "keep.txt").write_text("keep")
    (root / "a" / (TEMP_PREFIX + "fedcba9876543210")).write_bytes(b"stale too")
    (outside / STALE).write_bytes(b"not ours to touch")
    (root / "out").symlink_to(outside)
    (root / "loop").symlink_to(".")
    assert sweep_temp_files(ctx) == 4
    for directory in (root, root / "a", root / "a/b", root / "a/b/c"):
        assert _temps(directory) == []
    assert (root / "a/b/c/keep.txt").read_text() == "keep"
    assert (outside / STALE).exists()
    assert sweep_temp_files(ctx) == 0
