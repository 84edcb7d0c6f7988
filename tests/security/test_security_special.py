"""FIFOs and UNIX sockets in the workspace, over the real server.

Opening a FIFO for reading blocks until a writer comes (and for writing until a reader
does), so a tool that opens one hangs a worker. Every method must answer without opening
it: `not_a_regular_file` where the method would read or write it, a description (type
`other`) from file.info and file.list, and nothing from file.search. The replies are
awaited with a bounded wait: a hang fails the test instead of stalling it.
"""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from rpc_client import RpcServer, error_code

ANSWER_WITHIN = 20.0  # seconds: a hang guard, far above any honest answer


@pytest.fixture
def special(tmp_path: Path):
    """A workspace with a FIFO, a bound UNIX socket, and relative symlinks to both."""
    ws = tmp_path / "ws"
    (ws / "d").mkdir(parents=True)
    (ws / "d" / "note.txt").write_text("findme\n")
    os.mkfifo(ws / "fifo")
    os.mkfifo(ws / "d" / "fifo")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dir_fd = os.open(ws, os.O_PATH | os.O_DIRECTORY)
    sock.bind(f"/proc/self/fd/{dir_fd}/sock")  # short address whatever the tmp path
    sock.listen()
    os.close(dir_fd)
    os.symlink("fifo", ws / "to_fifo")
    os.symlink("sock", ws / "to_sock")
    with RpcServer(ws, "--workers", "2") as server:
        yield ws, server
    sock.close()


def call(server: RpcServer, method: str, params: dict) -> dict:
    rid = server.request(method, params)
    reply = server.recv(ANSWER_WITHIN)
    assert reply["id"] == rid, reply
    return reply


SPECIALS = ["fifo", "sock", "to_fifo", "to_sock", "d/fifo"]


@pytest.mark.parametrize("path", SPECIALS)
def test_read_write_patch_refuse_special_files(special, path: str) -> None:
    ws, server = special
    before = os.lstat(ws / path)
    for method, params in [
        ("file.read", {"path": path}),
        ("file.read", {"path": path, "raw": True, "offset": 2, "limit": 1}),
        ("file.write", {"path": path, "content": "x"}),
        ("file.write", {"path": path, "content": "x", "overwrite": False}),
        ("file.patch", {"path": path, "patches": [{"find": "a", "replace": "b"}]}),
        ("file.patch", {"path": path, "patches": [{"find": "a", "replace": "b"}],
                        "dry_run": True}),
    ]:
        reply = call(server, method, params)
        assert error_code(reply) == "not_a_regular_file", (method, params, reply)
        assert reply["error"]["data"]["path"] == path
    after = os.lstat(ws / path)
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)


@pytest.mark.parametrize("path", ["fifo", "sock", "d/fifo"])
def test_delete_refuses_special_files(special, path: str) -> None:
    """file.delete removes regular files and symlinks only (docs/protocol.md, file.delete)."""
    ws, server = special
    reply = call(server, "file.delete", {"path": path})
    assert error_code(reply) == "not_a_regular_file", reply
    assert reply["error"]["data"]["path"] == path
    assert not stat.S_ISREG(os.lstat(ws / path).st_mode)


@pytest.mark.parametrize("link", ["to_fifo", "to_sock"])
def test_delete_of_a_link_to_a_special_file_removes_the_link(special, link: str) -> None:
    ws, server = special
    assert call(server, "file.delete", {"path": link})["result"] == {"success": True}
    assert not os.path.lexists(ws / link)
    assert stat.S_ISFIFO(os.lstat(ws / "fifo").st_mode)
    assert stat.S_ISSOCK(os.lstat(ws / "sock").st_mode)


@pytest.mark.parametrize("path", ["fifo", "sock"])
def test_info_describes_without_opening(special, path: str) -> None:
    ws, server = special
    got = call(server, "file.info", {"path": path})["result"]
    assert got["type"] == "other" and got["is_symlink"] is False
    assert got["mode"] == f"{stat.S_IMODE(os.lstat(ws / path).st_mode):04o}"
    assert (got["mime_type"], got["is_binary"], got["encoding"], got["lines"]) \
        == (None, None, None, None)
    linked = call(server, "file.info", {"path": f"to_{path}"})["result"]
    assert linked["type"] == "symlink" and linked["symlink_target"] == path
    assert linked["lines"] is None and linked["version"] == got["version"]


def test_list_shows_special_files_as_other(special) -> None:
    _, server = special
    files = {f["path"]: f["type"] for f in call(server, "file.list", {})["result"]["files"]}
    assert files == {"d": "dir", "fifo": "other", "sock": "other", "to_fifo": "symlink",
                     "to_sock": "symlink"}
    deep = call(server, "file.list", {"pattern": "**"})["result"]["files"]
    assert {f["path"]: f["type"] for f in deep}["d/fifo"] == "other"
    for path in SPECIALS:
        assert error_code(call(server, "file.list", {"path": path})) == "not_a_directory"


def test_search_skips_special_files(special) -> None:
    _, server = special
    for mode in ("content", "files_with_matches", "count"):
        got = call(server, "file.search", {"pattern": "findme", "output_mode": mode,
                                           "include_hidden": True, "include_ignored": True,
                                           "glob": ["*"], "max_results": 1000})
        assert "result" in got, got
    got = call(server, "file.search", {"pattern": "findme"})["result"]
    assert [m["path"] for m in got["matches"]] == ["d/note.txt"]
    for path in SPECIALS:
        reply = call(server, "file.search", {"pattern": "x", "path": path})
        assert error_code(reply) == "not_a_regular_file", (path, reply)


def test_search_python_engine_skips_special_files(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("findme\n")
    os.mkfifo(ws / "fifo")
    with RpcServer(ws, "--workers", "2", "--search-engine", "python") as server:
        got = call(server, "file.search", {"pattern": "findme", "glob": "*"})["result"]
        assert got["engine"] == "python" and [m["path"] for m in got["matches"]] == ["a.txt"]
        reply = call(server, "file.search", {"pattern": "x", "path": "fifo"})
        assert error_code(reply) == "not_a_regular_file", reply


def test_server_still_serves_after_special_files(special) -> None:
    """Nothing was left blocked: both workers still answer at once, in parallel."""
    _, server = special
    for path in SPECIALS:
        call(server, "file.read", {"path": path})
    replies = server.call_many([("file.read", {"path": "d/note.txt", "raw": True})] * 8,
                               timeout=ANSWER_WITHIN)
    assert all(r["result"]["content"] == "findme\n" for r in replies)
