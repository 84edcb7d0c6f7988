"""tools/mutate/keep.py: what a mutation hands back for the history, in process."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from chorus_tools.tools.confine.sandbox import version_of
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.mutate import keep
from chorus_tools.tools.mutate.atomic import mutate
from chorus_tools.tools.mutate.write import write


def _kept(ctx: ToolContext) -> list[dict[str, Any]]:
    assert ctx.record is not None
    return ctx.record.get("kept", [])


@pytest.fixture
def spooled(ctx: ToolContext, tmp_path: Path):
    fds = tuple(os.open(tmp_path / f"spool{n}", os.O_RDWR | os.O_CREAT, 0o600)
                for n in range(2))
    ctx.history_spools = fds
    ctx.record = {}
    keep._spool = None
    yield ctx
    keep._spool = None
    for fd in fds:
        os.close(fd)


def test_small_content_goes_back_inline_with_its_hash_and_mode(spooled: ToolContext,
                                                               root: Path) -> None:
    (root / "a.txt").write_bytes(b"old\r\n")
    (root / "a.txt").chmod(0o640)
    write(spooled, "a.txt", "new")
    (entry,) = _kept(spooled)
    assert entry["data"] == b"old\r\n" and entry["spool"] is None
    assert entry["sha256"] == hashlib.sha256(b"old\r\n").hexdigest()
    assert entry["mode"] == 0o640 and entry["path"] == "a.txt"
    assert entry["after"] is not None


def test_big_content_is_streamed_into_the_spool_not_held(spooled: ToolContext,
                                                         root: Path) -> None:
    data = os.urandom(3 * keep.INLINE_MAX)
    (root / "big.bin").write_bytes(data)
    write(spooled, "big.bin", "small")
    (entry,) = _kept(spooled)
    index, offset = entry["spool"]
    assert entry["data"] is None and entry["bytes"] == len(data)
    assert spooled.history_spools is not None
    assert os.pread(spooled.history_spools[index], len(data), offset) == data
    assert entry["sha256"] == hashlib.sha256(data).hexdigest()


def test_what_one_call_hands_back_inline_is_bounded(spooled: ToolContext,
                                                    root: Path) -> None:
    """A tree deleted at once: past INLINE_TOTAL the rest goes through the spool."""
    from chorus_tools.tools.mutate.dirs import delete as dir_delete
    (root / "d").mkdir()
    chunk = os.urandom(keep.INLINE_MAX)
    count = keep.INLINE_TOTAL // keep.INLINE_MAX + 3
    for n in range(count):
        (root / "d" / f"{n}.bin").write_bytes(chunk)
    dir_delete(spooled, "d", recursive=True)
    kept = _kept(spooled)
    assert len(kept) == count
    assert sum(len(e["data"]) for e in kept if e["data"] is not None) <= keep.INLINE_TOTAL
    assert sum(1 for e in kept if e["spool"] is not None) >= 3


def test_a_failed_call_hands_back_nothing(spooled: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("x")
    with pytest.raises(ToolError):
        write(spooled, "a.txt", "y", overwrite=False)
    assert _kept(spooled) == []


def test_each_process_claims_its_own_spool(spooled: ToolContext) -> None:
    first = keep._claim(spooled)
    read, written = os.pipe()
    pid = os.fork()
    if pid == 0:  # a second worker: the first one's lock keeps it off that spool
        keep._spool = None
        os.write(written, bytes([keep._claim(spooled)[0]]))
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 1) == bytes([1 - first[0]])


def test_history_off_hands_back_nothing(ctx: ToolContext, root: Path) -> None:
    ctx.record = {}
    (root / "a.txt").write_text("x")
    write(ctx, "a.txt", "y")
    assert _kept(ctx) == []


def test_a_known_digest_is_taken_only_while_the_file_is_that_version(spooled: ToolContext,
                                                                     root: Path) -> None:
    """mutate's `known` (a PUT over a file the server landed): the old content is neither
    read nor hashed when it is only hashed (over the budget), and streamed unhashed when
    it is kept; a file at another version is hashed as ever. A digest no file has shows
    which was taken."""
    big = root / "big.bin"
    data, other = os.urandom(3 * keep.INLINE_MAX), os.urandom(3 * keep.INLINE_MAX + 1)
    told = "ab" * 32

    def replace(known: tuple[str, str]) -> dict[str, Any]:
        spooled.record = {}
        mutate(spooled, "big.bin", shown="big.bin", compute=lambda _: b"new",
               read_current=False, known=known)
        (entry,) = _kept(spooled)
        return entry

    spooled.history_budget = keep.INLINE_MAX  # the old content is only hashed
    big.write_bytes(data)
    version = version_of(big.stat())
    entry = replace((version, told))
    assert (entry["sha256"], entry["bytes"], entry["spool"]) == (told, len(data), None)
    big.write_bytes(other)  # someone else since: another version (its size tells)
    assert replace((version, told))["sha256"] == hashlib.sha256(other).hexdigest()
    spooled.history_budget = None  # kept whole: copied into the spool, not hashed
    big.write_bytes(data)
    entry = replace((version_of(big.stat()), told))
    index, offset = entry["spool"]
    assert entry["sha256"] == told
    assert spooled.history_spools is not None
    assert os.pread(spooled.history_spools[index], len(data), offset) == data


def test_a_known_digest_fills_the_record_with_the_history_off(ctx: ToolContext,
                                                              root: Path) -> None:
    """Records on, history off: the old file is not read whole into memory to hash it
    for `sha256_before` when its digest is known (it was, for a 1 GiB upload)."""
    (root / "f.bin").write_bytes(b"old content")
    ctx.record = {}
    mutate(ctx, "f.bin", shown="f.bin", compute=lambda _: b"new", read_current=False,
           known=(version_of((root / "f.bin").stat()), "cd" * 32))
    assert ctx.record["sha256_before"] == "cd" * 32
    assert ctx.record["sha256_after"] == hashlib.sha256(b"new").hexdigest()
