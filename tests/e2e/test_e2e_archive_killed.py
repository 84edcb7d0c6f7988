"""An archive import killed midway, for real, over stdio JSON-RPC (docs/protocol.md, Bytes in
and out: all or nothing): the test holds the lock of one destination directory so the
commit stops there after landing the entries before it, then the import is killed by a
tiny --request-timeout, by a kill -9 of the worker running it (found in /proc/locks,
waiting on that lock), or by a kill -9 of the whole server and a restart. After each, every
file, link and directory is exactly as before (content, mode, inode, mtime), no spool is
left, `file.history` shows what it showed before, a rewind to a checkpoint taken before
finds no conflict, and the next import works. Over HTTP, a `PUT /archive` stopped the same
way is `504` with `rolled_back: true`."""

from __future__ import annotations

import base64
import fcntl
import io
import os
import signal
import tarfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx

from http_server import HttpServer
from rpc_client import RpcServer, wait_gone

SPOOL = ".chorus-tmp-upload-"


def _archive() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data, link in [("old.txt", b"the archive's old.txt", ""),
                                 ("new/deep/n.txt", b"new", ""),
                                 ("oldlink", b"", "new/deep/n.txt"),
                                 ("newlink", b"", "old.txt"),
                                 ("b/x.txt", b"lands after the lock", "")]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            if link:
                info.type, info.linkname = tarfile.SYMTYPE, link
            tar.addfile(info, io.BytesIO(data) if not link else None)
    return buf.getvalue()


ARCHIVE = _archive()


def snapshot(ws: Path) -> dict[str, Any]:
    """Every entry: a file's bytes, mode, inode and mtime (its version), a link's text, a
    directory's mode (its mtime moves with any entry made and removed in it)."""
    found: dict[str, Any] = {}
    for dirpath, dirs, files in os.walk(ws):
        for name in dirs + files:
            path = Path(dirpath, name)
            st = path.lstat()
            found[str(path.relative_to(ws))] = (
                ("link", os.readlink(path)) if path.is_symlink() else
                ("dir", st.st_mode) if path.is_dir() else
                (path.read_bytes(), st.st_mode, st.st_ino, st.st_mtime_ns))
    return found


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "dest" / "b").mkdir(parents=True)
    (ws / "dest" / "oldlink").symlink_to("old.txt")
    (ws / "dest" / "b" / "keep").write_text("keep")
    return ws


def _server(ws: Path, tmp_path: Path, *args: str) -> RpcServer:
    return RpcServer(ws, "--workers", "2", "--history", str(tmp_path / "history"), *args)


def _before(server: RpcServer) -> tuple[str, list[Any]]:
    """A file written through the server (so its history has an entry), and a
    checkpoint; the history of old.txt as it stands."""
    server.result("file.write", {"path": "dest/old.txt", "content": "old content"})
    mark = server.result("workspace.checkpoint", {})["checkpoint"]
    return mark, server.result("file.history", {"path": "dest/old.txt"})["versions"]


def _send(server: RpcServer) -> Any:
    """The archive sent whole; its commit, asked for without waiting: the request id."""
    upload = server.result("archive.import_begin", {"path": "dest"})["upload_id"]
    server.result("file.upload_part", {"upload_id": upload, "offset": 0,
                                       "data": base64.b64encode(ARCHIVE).decode()})
    return server.request("archive.import_commit", {"upload_id": upload})


@contextmanager
def _held(directory: Path) -> Iterator[str]:
    """The directory's lock, as a writer in it holds it: its `maj:min:inode` as
    /proc/locks names it."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        st = os.fstat(fd)
        yield f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    finally:
        os.close(fd)


def _waiting_on(inode: str, guard: float = 15.0) -> int:
    """The pid of the process blocked on the lock of `inode` (/proc/locks lists each
    waiter as `N: -> FLOCK ADVISORY WRITE <pid> <maj:min:inode> ...`)."""
    end = time.monotonic() + guard
    while time.monotonic() < end:
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            if fields[1] == "->" and fields[6] == inode:
                return int(fields[5])
        time.sleep(0.01)
    raise TimeoutError("no process waits on the lock")


def _landed_halfway(ws: Path) -> None:
    """The entries before the locked directory are in place: the kill comes midway."""
    assert (ws / "dest" / "old.txt").read_bytes() == b"the archive's old.txt"
    assert os.readlink(ws / "dest" / "newlink") == "old.txt"
    assert not (ws / "dest" / "b" / "x.txt").exists()


def _as_before(server: RpcServer, ws: Path, before: dict[str, Any], mark: str,
               history: list[Any]) -> None:
    """Exactly as before, the history saying so, and the next import working."""
    assert snapshot(ws) == before  # no spool, no directory made, every inode as it was
    assert server.result("file.history", {"path": "dest/old.txt"})["versions"] == history
    rewound = server.result("workspace.rewind", {"checkpoint": mark})
    assert (rewound["restored"], rewound["deleted"], rewound["conflicts"]) == ([], [], [])
    assert snapshot(ws) == before
    rid = _send(server)
    answer = server.recv(60)
    assert answer["id"] == rid and answer["result"] == {"created": 3, "replaced": 2,
                                                        "bytes": 44}, answer
    assert (ws / "dest" / "b" / "x.txt").read_bytes() == b"lands after the lock"
    assert len(server.result("file.history", {"path": "dest/old.txt"})["versions"]) == \
        len(history) + 1


def _stopped_midway(server: RpcServer, ws: Path, stop: Callable[[int], None]) -> dict[str, Any]:
    """An import sent and held at the locked directory with half of it landed, `stop(pid
    of the worker running it)` called there, the lock let go: the commit's answer, once
    the workspace was checked to be exactly as before."""
    mark, history = _before(server)
    before = snapshot(ws)
    with _held(ws / "dest" / "b") as inode:
        rid = _send(server)
        worker = _waiting_on(inode)
        assert worker in server.worker_pids()
        _landed_halfway(ws)
        stop(worker)
        answer = server.recv(30)
    assert answer["id"] == rid
    _as_before(server, ws, before, mark, history)
    return answer


def test_a_tiny_request_timeout_rolls_the_import_back(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    with _server(ws, tmp_path, "--request-timeout", "2") as server:
        answer = _stopped_midway(server, ws, lambda _worker: None)
    data = answer["error"]["data"]
    assert data["error"] == "timeout" and data["rolled_back"] is True, answer
    assert "4 entries" in answer["error"]["message"]
    assert "--request-timeout" in answer["error"]["message"]


def test_a_worker_killed_mid_import_rolls_it_back(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    with _server(ws, tmp_path) as server:
        answer = _stopped_midway(server, ws, lambda worker: os.kill(worker, signal.SIGKILL))
    data = answer["error"]["data"]
    assert data["error"] == "worker_crashed" and data["rolled_back"] is True, answer


def test_a_server_killed_mid_import_rolls_it_back_at_restart(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    with _server(ws, tmp_path) as server:
        mark, history = _before(server)
        before = snapshot(ws)
        with _held(ws / "dest" / "b") as inode:
            _send(server)
            _waiting_on(inode)
            _landed_halfway(ws)
            children = server.child_pids()
            server.proc.kill()
            server.proc.wait(15)
            wait_gone(children)  # the workers die with it (PR_SET_PDEATHSIG)
    assert any(p.name.startswith(SPOOL) for p in ws.iterdir())  # the journal stayed
    with _server(ws, tmp_path) as server:
        end = time.monotonic() + 30  # the start's recovery runs in the background
        while any(p.name.startswith(SPOOL) for p in ws.iterdir()):
            assert time.monotonic() < end, "the start never rolled the import back"
            time.sleep(0.02)
        _as_before(server, ws, before, mark, history)


def test_a_put_archive_past_the_request_timeout_is_504_rolled_back(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    (ws / "dest" / "old.txt").write_text("old content")
    before = snapshot(ws)
    with HttpServer(ws, "--request-timeout", "2", "--history", str(tmp_path / "h")) as server:
        with _held(ws / "dest" / "b"):
            reply = httpx.put(server.base + "/archive/dest", content=ARCHIVE, timeout=60)
        assert reply.status_code == 504, reply.text
        assert reply.json()["error"] == "timeout" and reply.json()["rolled_back"] is True
        assert snapshot(ws) == before
        again = httpx.put(server.base + "/archive/dest", content=ARCHIVE, timeout=60)
        assert again.json() == {"created": 3, "replaced": 2, "bytes": 44}
