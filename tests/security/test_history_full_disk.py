"""A full history disk, for real (docs/protocol.md, History: a full history): the history
lives on a small tmpfs filled with a file until the bytes left are too few to keep what a
change replaces. Every mutating method is then refused before it changes anything
(`write_failed`, `data.errno` ENOSPC, `data.where` "history"), new files included; once
space is freed the same call goes through and its old content is kept. Under
`--history-full write` the change goes ahead and the result says the history could not
keep it. Needs root to mount the tmpfs (skipped, saying so, without)."""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rpc_client import RpcServer, snapshot

BIG = b"".join(b"line %06d of a file the agent rewrites\n" % n for n in range(5000))
BIG2 = BIG.replace(b"line", b"LINE")
LEFT = 64 << 10  # what the filled disk leaves: too little for BIG, room for a log line


def fill(mount: Path, leave: int) -> Path:
    """Take every byte of the file system but `leave`."""
    filler = mount / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        if free(mount) > leave:
            os.posix_fallocate(fd, os.fstat(fd).st_size, free(mount) - leave)
    finally:
        os.close(fd)
    assert free(mount) == leave
    return filler


def free(mount: Path) -> int:
    st = os.statvfs(mount)
    return st.f_bavail * st.f_frsize


def serve(root: Path, mount: Path, *args: str) -> RpcServer:
    return RpcServer(root, "--history", str(mount / "h"), "--workers", "1", *args)


def seed(root: Path) -> None:
    (root / "big.txt").write_bytes(BIG)
    (root / "small.txt").write_bytes(b"a\nb\n")
    (root / "d").mkdir()
    (root / "d" / "big.txt").write_bytes(BIG)


def codex_patch() -> str:
    return "\n".join(["*** Begin Patch", "*** Update File: small.txt", "@@", "-a", "+A",
                      "*** Update File: big.txt", "@@", "-line 000000 of a file the agent "
                      "rewrites", "+line zero", "*** End Patch"])


def _rewound(srv: RpcServer) -> tuple[str, dict[str, Any]]:
    return "workspace.rewind", {"checkpoint": srv.cp}  # type: ignore[attr-defined]


def _restore_first(srv: RpcServer) -> tuple[str, dict[str, Any]]:
    return "file.restore", {"path": "big.txt", "version": srv.first}  # type: ignore[attr-defined]


def _prepare_versions(srv: RpcServer) -> None:
    """big.txt is BIG2 now; its history holds BIG (first) and a checkpoint before."""
    srv.cp = srv.result("workspace.checkpoint", {})["checkpoint"]  # type: ignore[attr-defined]
    srv.result("file.write", {"path": "big.txt", "content": BIG2.decode()})
    first = srv.result("file.history", {"path": "big.txt"})["versions"][0]
    srv.first = first["version"]  # type: ignore[attr-defined]


CALLS: dict[str, tuple[Callable[[RpcServer], tuple[str, dict[str, Any]]], bool, int]] = {
    # name: (the call, whether versions are prepared first, bytes left on the disk)
    "file.write": (lambda _: ("file.write", {"path": "big.txt", "content": "short"}),
                   False, LEFT),
    "file.write of a new file": (lambda _: ("file.write", {"path": "new.txt",
                                                           "content": "hello"}), False, 0),
    "file.patch": (lambda _: ("file.patch", {"path": "big.txt", "patches": [
        {"find": "line 000001", "replace": "line one"}]}), False, LEFT),
    "file.delete": (lambda _: ("file.delete", {"path": "big.txt"}), False, LEFT),
    "file.move": (lambda _: ("file.move", {"source": "big.txt", "destination": "moved.txt"}),
                  False, LEFT),
    "dir.delete": (lambda _: ("dir.delete", {"path": "d", "recursive": True}), False, LEFT),
    "file.restore": (_restore_first, True, LEFT),
    "workspace.rewind": (_rewound, True, LEFT),
    "apply_patch (codex)": (lambda _: ("apply_patch", {"input": codex_patch()}), False, LEFT),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_a_full_history_disk_refuses_every_change_and_loses_nothing(
        root: Path, small_fs: Path, name: str) -> None:
    """The fault: a 480 KB write answered internal_error with the file overwritten and its
    old content in no version; a new file answered internal_error and created."""
    seed(root)
    make, prepared, left = CALLS[name]
    with serve(root, small_fs, "--tools", "codex") as srv:
        srv.result("file.write", {"path": "warm.txt", "content": "w"})  # pack and log made
        if prepared:
            _prepare_versions(srv)
        filler = fill(small_fs, left)
        before = snapshot(root)
        method, params = make(srv)
        error = srv.error(method, params)
        assert error["data"]["error"] == "write_failed", error
        assert error["data"]["errno"] == "ENOSPC" and error["data"]["where"] == "history"
        assert snapshot(root) == before, "the refused change touched the workspace"
        filler.unlink()  # room again: the same change goes through, its old content kept
        changed = srv.call(method, params)
        assert "result" in changed, changed
        assert snapshot(root) != before
        for path in ("big.txt", "d/big.txt", "new.txt"):
            versions = srv.result("file.history", {"path": path})["versions"]
            assert all(not v["evicted"] for v in versions), (path, versions)
    assert "internal_error" not in srv.stderr.decode()


def test_a_new_file_on_a_nearly_full_history_disk_is_made_and_logged(
        root: Path, small_fs: Path) -> None:
    """What fits is not refused: a new file needs only its log line."""
    with serve(root, small_fs) as srv:
        srv.result("file.write", {"path": "warm.txt", "content": "w"})
        fill(small_fs, LEFT)
        assert srv.result("file.write", {"path": "new.txt", "content": "hello"})["created"]
        (version,) = srv.result("file.history", {"path": "new.txt"})["versions"]
        assert version["exists"] is False and version["method"] == "file.write"
    assert (root / "new.txt").read_bytes() == b"hello"


def test_history_full_write_makes_the_change_and_says_the_history_lost_it(
        root: Path, small_fs: Path) -> None:
    seed(root)
    with serve(root, small_fs, "--history-full", "write") as srv:
        srv.result("file.write", {"path": "warm.txt", "content": "w"})
        fill(small_fs, LEFT)
        result = srv.result("file.write", {"path": "big.txt", "content": "short"})
        note = result["history"]
        assert note["kept"] is False and note["errno"] == "ENOSPC"
        assert note["paths"] == ["big.txt"] and "cannot be restored" in note["message"]
        (version,) = srv.result("file.history", {"path": "big.txt"})["versions"]
        assert version["evicted"] is True  # listed, honestly not restorable
        assert version["sha256"] == hashlib.sha256(BIG).hexdigest()
        assert srv.error("file.restore", {"path": "big.txt", "version": version["version"]}
                         )["data"]["evicted"] is True
        assert "history" not in srv.result("file.write", {"path": "small.txt",
                                                          "content": "fits"})
    assert (root / "big.txt").read_bytes() == b"short"


def test_a_checkpoint_on_a_full_history_disk_is_write_failed(root: Path,
                                                             small_fs: Path) -> None:
    with serve(root, small_fs) as srv:
        srv.result("file.write", {"path": "warm.txt", "content": "w"})
        fill(small_fs, 0)
        error = srv.error("workspace.checkpoint", {"label": "x" * 8000})
        assert (error["data"]["error"], error["data"]["where"]) == ("write_failed", "history")


def test_a_history_directory_removed_while_serving_refuses_changes(root: Path,
                                                                  tmp_path: Path) -> None:
    """Its directory gone (or unwritable): no pack can take old content, so nothing is
    written; a new directory given to a new server works again."""
    seed(root)
    hist = tmp_path / "h"
    with RpcServer(root, "--history", str(hist), "--workers", "1") as srv:
        srv.result("file.write", {"path": "warm.txt", "content": "w"})
        subprocess.run(["rm", "-rf", str(hist)], check=True)
        before = snapshot(root)
        for _ in range(2):  # the first call finds the pack gone, the next one too
            error = srv.error("file.write", {"path": "big.txt", "content": "short"})
            assert (error["data"]["error"], error["data"]["where"]) == ("write_failed",
                                                                        "history")
            assert error["data"]["errno"] == "ENOENT"
        assert snapshot(root) == before


def test_streamed_content_is_moved_into_its_pack_on_a_full_disk(small_fs: Path) -> None:
    """Past 1 MiB old content is streamed into a spool before the change; if the disk is
    full by the time it is kept, it moves into the pack a chunk at a time, each chunk
    freed from the spool first, so it needs no room it does not already take."""
    import asyncio

    from chorus_tools.rpc.dispatch.history import History
    from chorus_tools.tools.mutate import reserve
    history = History(str(small_fs / "h"), 1 << 30)
    (spool,) = history.spools(1)
    data = os.urandom(1_300_000)
    os.pwrite(spool, data, 0)
    room = reserve.pages(len(data))
    reserve.allocate(spool, room, 64 << 10)  # the call's reservation: log line, slack
    history.ready()
    fill(small_fs, 0)
    item = {"path": "big.bin", "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data), "mode": 0o644, "data": None, "spool": (0, 0), "after": "v"}
    lost = asyncio.run(history.keep("file.write", [item], [(0, room, 64 << 10)]))
    assert lost == []
    (version,) = history.versions("big.bin", 1)["versions"]
    assert history.read(version["sha256"]) == data
    history.close()
