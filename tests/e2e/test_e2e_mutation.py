"""Concurrent mutation over the real server: requests all in flight at once, several
workers (and a second server on the same workspace), no update lost.

Every mutation of a file runs under its directory's exclusive lock, read-modify-write
included, so concurrent patches of different lines of one file all land, and writes and
deletes of one path are serialized: each sees the file whole or absent, never a temp
file, never another error.
"""

from __future__ import annotations

import os
from pathlib import Path

from rpc_client import RpcServer, error_code
from chorus_tools.tools.confine.reserved import TEMP_PREFIX

LINES = 100


def numbered(state: str) -> str:
    return "".join(f"line {i:03d} {state}\n" for i in range(LINES))


def one_line_patch(i: int) -> tuple[str, dict]:
    return ("file.patch", {"path": "src/f.txt", "patches": [
        {"find": f"line {i:03d} old", "replace": f"line {i:03d} new"}]})


def no_temp_files(ws: Path) -> bool:
    return not any(n.startswith(TEMP_PREFIX) for _, _, files in os.walk(ws) for n in files)


def test_hundred_concurrent_patches_of_one_file_all_apply(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "f.txt").write_text(numbered("old"))
    with RpcServer(ws, "--workers", "4") as server:
        replies = server.call_many([one_line_patch(i) for i in range(LINES)])
    assert [error_code(r) for r in replies] == [None] * LINES, \
        [r for r in replies if "error" in r][:3]
    assert all(r["result"]["replacements"] == 1 for r in replies)
    assert (ws / "src" / "f.txt").read_text() == numbered("new")
    assert len({r["result"]["version"] for r in replies}) == LINES  # each saw its own file
    assert no_temp_files(ws)


def test_two_servers_patching_one_file_lose_no_update(tmp_path: Path) -> None:
    """The lock is the kernel's (flock on the directory), so it holds across servers."""
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "f.txt").write_text(numbered("old"))
    with RpcServer(ws, "--workers", "2") as a, RpcServer(ws, "--workers", "2") as b:
        ids_a = [a.request(*one_line_patch(i)) for i in range(0, LINES, 2)]
        ids_b = [b.request(*one_line_patch(i)) for i in range(1, LINES, 2)]
        replies = [a.recv(60) for _ in ids_a] + [b.recv(60) for _ in ids_b]
    assert [error_code(r) for r in replies] == [None] * LINES
    assert (ws / "src" / "f.txt").read_text() == numbered("new")


def test_patches_with_expected_version_let_exactly_one_win(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text(numbered("old"))
    with RpcServer(ws, "--workers", "4") as server:
        version = server.result("file.info", {"path": "f.txt"})["version"]
        calls = [("file.patch", {**one_line_patch(i)[1], "path": "f.txt",
                                 "expected_version": version}) for i in range(20)]
        replies = server.call_many(calls)
    codes = [error_code(r) for r in replies]
    assert codes.count(None) == 1 and codes.count("conflict") == 19, codes
    winner = codes.index(None)
    assert (ws / "f.txt").read_text() == numbered("old").replace(
        f"line {winner:03d} old", f"line {winner:03d} new")


def test_concurrent_write_and_delete_of_one_path_are_serialized(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    contents = [f"content {i}\n" * (1000 + i) for i in range(60)]
    calls: list[tuple[str, dict]] = []
    for i, content in enumerate(contents):
        calls.append(("file.write", {"path": "x.txt", "content": content}))
        if i % 2:
            calls.append(("file.delete", {"path": "x.txt"}))
    with RpcServer(ws, "--workers", "4") as server:
        replies = server.call_many(calls)
        for (method, params), reply in zip(calls, replies):
            if method == "file.write":
                assert error_code(reply) is None, reply
                assert reply["result"]["bytes_written"] == len(params["content"])
            else:
                assert error_code(reply) in (None, "file_not_found"), reply
        final = ws / "x.txt"
        assert not final.exists() or final.read_text() in contents
        assert no_temp_files(ws)
        # the file is whole after the storm: a write and a read agree
        server.result("file.write", {"path": "x.txt", "content": "last\n"})
        assert server.result("file.read", {"path": "x.txt", "raw": True})["content"] == "last\n"


def test_concurrent_creates_with_overwrite_false_make_one_file(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    calls = [("file.write", {"path": "new/once.txt", "content": f"{i}\n", "overwrite": False})
             for i in range(40)]
    with RpcServer(ws, "--workers", "4") as server:
        replies = server.call_many(calls)
    codes = [error_code(r) for r in replies]
    assert codes.count(None) == 1 and codes.count("already_exists") == 39, codes
    assert (ws / "new" / "once.txt").read_text() == f"{codes.index(None)}\n"
    assert [r["result"]["created"] for r in replies if "result" in r] == [True]


def test_concurrent_patches_across_files_of_one_directory(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for f in range(5):
        (ws / f"f{f}.txt").write_text(numbered("old"))
    calls = [("file.patch", {"path": f"f{f}.txt", "patches": [
        {"find": f"line {i:03d} old", "replace": f"line {i:03d} new"}]})
        for i in range(0, LINES, 5) for f in range(5)]
    calls += [("file.read", {"path": f"f{f}.txt", "raw": True}) for f in range(5)] * 4
    with RpcServer(ws, "--workers", "3") as server:
        replies = server.call_many(calls)
    assert all("result" in r for r in replies), [r for r in replies if "error" in r][:3]
    for reply in replies:
        if "content" in reply["result"]:  # a read sees a whole file, never a half-patch
            assert reply["result"]["content"].count("\n") == LINES
    expected = "".join(f"line {i:03d} {'new' if i % 5 == 0 else 'old'}\n"
                       for i in range(LINES))
    assert all((ws / f"f{f}.txt").read_text() == expected for f in range(5))
