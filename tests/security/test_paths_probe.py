"""Findings of a second attacker's probe of docs/protocol.md's paths rules and the methods
that move, make and delete, each over the real server and named after the fault."""

from __future__ import annotations

import os
import socket
import stat
import sys
from pathlib import Path

import pytest

from deep_tree import empty, nest
from rpc_client import RpcServer, error_code, snapshot

PATH_MAX = 4096  # the kernel's limit on one path, its final NUL included


def _deep(total: int) -> str:
    """A workspace-relative path of 200-byte names `total` bytes long, or just over."""
    return "/".join(["y" * 200] * (total // 201 + 1))


def test_write_made_a_file_past_path_max_that_no_method_could_name_again(root: Path) -> None:
    """file.write (and write_bytes, a move's destination) made the parents one name at a
    time and the file beside them, so a 4,220-byte path was written, where file.read,
    file.info, file.list and file.delete of the same path are invalid_params: the agent
    made a file it could never read or delete. Every method now refuses such a path
    before touching the disk; one just under the limit works both ways."""
    (root / "src.txt").write_text("s\n")
    long = _deep(PATH_MAX)
    assert len(long.encode()) >= PATH_MAX
    before = snapshot(root)
    with RpcServer(root, "--workers", "1") as server:
        refused = server.call_many([
            ("file.write", {"path": long, "content": "x\n"}),
            ("file.write_bytes", {"path": long, "data": "eA=="}),
            ("file.move", {"source": "src.txt", "destination": long}),
            ("file.move", {"source": long, "destination": "dst.txt"}),
            ("dir.create", {"path": long}),
            ("file.read", {"path": long}),
        ])
        assert snapshot(root) == before  # not one parent made
        fits = _deep(PATH_MAX - 300)
        made = server.call_many([("file.write", {"path": fits, "content": "x\n"}),
                                 ("file.read", {"path": fits}),
                                 ("file.delete", {"path": fits})])
    assert [error_code(r) for r in refused] == ["invalid_params"] * 6, refused
    assert [r["error"]["data"]["param"] for r in refused] == [
        "path", "path", "destination", "source", "path", "path"]
    assert all("too long" in r["error"]["message"] for r in refused)
    assert [error_code(r) for r in made] == [None] * 3, made
    assert made[1]["result"]["content"] == "     1\tx"


def test_move_onto_the_same_file_by_another_name_answered_success_and_moved_nothing(
        root: Path) -> None:
    """file.move of a file onto a hard link of itself, or onto its own name through a
    symlinked directory, with overwrite: rename(2) does nothing and succeeds, so the
    server said `success` while the source stayed where it was. It is a move onto
    itself (invalid_params, param destination), with or without overwrite; nothing
    changes."""
    (root / "d").mkdir()
    (root / "d/f.txt").write_text("f\n")
    (root / "a.py").write_text("a = 1\n")
    os.link(root / "a.py", root / "hard.py")
    os.symlink("d", root / "dirlink")
    before = snapshot(root)
    calls = [("file.move", {"source": source, "destination": destination, **extra})
             for source, destination in [("a.py", "hard.py"), ("d/f.txt", "dirlink/f.txt")]
             for extra in ({"overwrite": True}, {})]
    with RpcServer(root, "--workers", "1") as server:
        replies = server.call_many(calls)
    assert [error_code(r) for r in replies] == ["invalid_params"] * 4, replies
    assert all(r["error"]["data"]["param"] == "destination" for r in replies)
    assert all("same file" in r["error"]["message"] for r in replies)
    assert snapshot(root) == before


def test_move_of_a_fifo_was_permission_denied_by_the_operating_system(root: Path) -> None:
    """file.move of a FIFO, socket or device was refused by the workers' Landlock domain
    (they may not make one, and a rename makes it where it lands) and answered
    permission_denied "by the operating system", and would have moved on a kernel
    without Landlock. It is `not_a_regular_file` on any kernel, as every other method
    answers for one; a move onto one with overwrite still replaces it."""
    os.mkfifo(root / "fifo")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dir_fd = os.open(root, os.O_PATH | os.O_DIRECTORY)
    sock.bind(f"/proc/self/fd/{dir_fd}/sock")  # a short address whatever the tmp path
    os.close(dir_fd)
    (root / "f.txt").write_text("f\n")
    try:
        with RpcServer(root, "--workers", "1") as server:
            refused = server.call_many([("file.move", {"source": "fifo", "destination": "x"}),
                                        ("file.move", {"source": "sock", "destination": "y",
                                                       "overwrite": True})])
            onto = server.call("file.move", {"source": "f.txt", "destination": "fifo",
                                             "overwrite": True})
    finally:
        sock.close()
    assert [error_code(r) for r in refused] == ["not_a_regular_file"] * 2, refused
    assert [r["error"]["data"]["path"] for r in refused] == ["fifo", "sock"]
    assert stat.S_ISSOCK(os.lstat(root / "sock").st_mode)
    assert not (root / "x").exists() and not (root / "y").exists()
    assert onto["result"]["success"] is True and (root / "fifo").read_text() == "f\n"


DENY = ["--deny", "secrets/**", "--deny", "**/*.pem"]


def _denied_tree(root: Path) -> None:
    (root / "secrets/deep").mkdir(parents=True)
    (root / "pub").mkdir()
    (root / "secrets/key.txt").write_text("SECRET key\n")
    (root / "secrets/deep/k.py").write_text("def SECRET():\n    pass\n")
    (root / "pub/ok.txt").write_text("public\n")
    os.symlink("secrets", root / "seclink")


def test_deny_was_bypassed_by_mutations_through_a_symlinked_parent(root: Path) -> None:
    """With `--deny 'secrets/**'` and `seclink` -> `secrets`, every call naming a path
    beneath the link went through: file.move took secrets/key.txt out to pub/ (then
    readable) and a file in over it, file.patch answered with a diff of the denied text,
    file.write, write_bytes, an upload, file.delete, dir.create and dir.delete changed
    the denied tree. The check followed a symlink at the path's last component only;
    it now judges where the whole path really is, so each is permission_denied and
    nothing changes."""
    _denied_tree(root)
    before = snapshot(root)
    calls = [
        ("file.move", {"source": "seclink/key.txt", "destination": "pub/stolen.txt"}),
        ("file.move", {"source": "seclink/deep", "destination": "pub/deep"}),
        ("file.move", {"source": "pub/ok.txt", "destination": "seclink/key.txt",
                       "overwrite": True}),
        ("file.move", {"source": "pub/ok.txt", "destination": "seclink/new/ok.txt"}),
        ("file.patch", {"path": "seclink/key.txt",
                        "patches": [{"find": "SECRET", "replace": "X"}]}),
        ("file.write", {"path": "seclink/key.txt", "content": "x"}),
        ("file.write", {"path": "seclink/a/b.txt", "content": "x"}),
        ("file.write_bytes", {"path": "seclink/new.bin", "data": "QQ=="}),
        ("file.upload_begin", {"path": "seclink/up.txt", "size": 1}),
        ("file.delete", {"path": "seclink/key.txt"}),
        ("dir.create", {"path": "seclink/newdir"}),
        ("dir.delete", {"path": "seclink/deep", "recursive": True}),
        ("code.edit", {"path": "seclink/deep/k.py", "symbol": "SECRET", "action": "delete"}),
    ]
    with RpcServer(root, "--workers", "1", *DENY) as server:
        replies = server.call_many(calls)
    assert [error_code(r) for r in replies] == ["permission_denied"] * len(calls), replies
    assert "SECRET" not in str(replies)
    assert snapshot(root) == before


def test_a_recursive_delete_through_a_link_missed_the_denied_paths_inside(root: Path) -> None:
    """dir.delete (and file.move) of a directory reached through a symlinked parent
    looked for denied paths inside it under the names the link gives them
    (`seclink/deep/inner/x.txt`), so `--deny 'secrets/deep/inner/**'` let
    `dir.delete seclink/deep` remove them; they are judged where they really are."""
    _denied_tree(root)
    (root / "secrets/deep/inner").mkdir()
    (root / "secrets/deep/inner/x.txt").write_text("x\n")
    before = snapshot(root)
    with RpcServer(root, "--workers", "1", "--deny", "secrets/deep/inner/**") as server:
        replies = server.call_many([
            ("dir.delete", {"path": "seclink/deep", "recursive": True}),
            ("file.move", {"source": "seclink/deep", "destination": "elsewhere"}),
        ])
    assert [error_code(r) for r in replies] == ["permission_denied"] * 2, replies
    assert all("it holds" in r["error"]["message"] for r in replies)
    assert snapshot(root) == before


def test_ripgrep_counted_denied_files_searched_through_a_link(root: Path) -> None:
    """file.search {"path": "seclink"} with `--deny 'secrets/**'` answered no matches
    but `files_searched: 2` on ripgrep (its count of the files beneath the link, judged
    by the names the link gives them) and 0 on the python engine: the denied files were
    counted as searched. Both engines say 0; a search beside them counts its own."""
    _denied_tree(root)
    replies = {}
    for engine in ("ripgrep", "python"):
        with RpcServer(root, "--workers", "1", "--search-engine", engine, *DENY) as server:
            replies[engine] = server.call_many([
                ("file.search", {"pattern": "SECRET", "path": "seclink"}),
                ("file.search", {"pattern": "SECRET", "path": "seclink",
                                 "output_mode": "count"}),
                ("file.search", {"pattern": "public", "path": "pub"})])
    for engine, found in replies.items():
        assert [r["result"]["files_searched"] for r in found] == [0, 0, 1], (engine, found)
        assert found[0]["result"]["matches"] == [] and found[1]["result"]["counts"] == []


@pytest.mark.parametrize(("tools", "method", "params"), [
    ("codex", "apply_patch", {"input": "*** Begin Patch\n*** Update File: seclink/key.txt\n"
                              "*** Move to: pub/stolen.txt\n@@\n-SECRET key\n+SECRET key\n"
                              "*** End Patch"}),
    ("anthropic", "str_replace_based_edit_tool",
     {"command": "str_replace", "path": "seclink/key.txt", "old_str": "SECRET",
      "new_str": "X"}),
    ("gemini", "replace", {"file_path": "seclink/key.txt", "old_string": "SECRET",
                           "new_string": "X"}),
    ("claude", "Write", {"file_path": "seclink/new.txt", "content": "x"}),
])
def test_deny_was_bypassed_through_a_symlinked_parent_by_every_tool_set(
        root: Path, tools: str, method: str, params: dict) -> None:
    """The same bypass through `seclink` -> a denied `secrets/`, by the tool sets' edit
    tools: each is permission_denied and changes nothing."""
    _denied_tree(root)
    before = snapshot(root)
    with RpcServer(root, "--workers", "1", "--tools", tools, *DENY) as server:
        reply = server.call(method, params)
    assert error_code(reply) == "permission_denied", reply
    assert snapshot(root) == before


@pytest.mark.long  # seconds of the default suite; CI runs it in -m long
def test_a_tree_deeper_than_the_recursion_limit_broke_move_delete_and_watch(
        root: Path) -> None:
    """os.fwalk recurses once per level: a tree 1,100 directories deep made file.move
    (its history snapshot) answer internal_error (RecursionError), and workspace.watch of
    it never answered (the watcher's command thread died). With --deny, the check for
    denied paths inside a moved or deleted tree walked it the same way. Each works."""
    depth = sys.getrecursionlimit() + 100
    nest(root, "deep", depth)
    nest(root, "deep_denied", depth)
    try:
        _move_delete_and_watch(root, depth)
    finally:
        empty(root)


def _move_delete_and_watch(root: Path, depth: int) -> None:
    with RpcServer(root, "--workers", "1") as server:
        moved = server.call("file.move", {"source": "deep", "destination": "moved"})
        watched = server.call("workspace.watch", {}, timeout=60)
        removed = server.call("dir.delete", {"path": "moved", "recursive": True})
    assert moved["result"]["success"] is True, moved
    assert "watch_id" in watched["result"], watched
    assert removed["result"]["removed"] == depth + 2, removed
    with RpcServer(root, "--workers", "1", "--deny", "**/*.pem") as server:
        replies = server.call_many([
            ("file.move", {"source": "deep_denied", "destination": "moved"}),
            ("dir.delete", {"path": "moved", "recursive": True})])
    assert [r["result"]["success"] for r in replies] == [True, True], replies
    assert sorted(os.listdir(root)) == []


def test_code_outline_answered_the_path_as_given_absolute_included(root: Path) -> None:
    """code.outline's `path` was the client's string: an absolute path came back
    absolute, `./d//a.py` as it was. Paths in results are workspace-relative and
    normalised, as every other method answers them."""
    (root / "d").mkdir()
    (root / "d/a.py").write_text("def foo():\n    return 1\n")
    with RpcServer(root, "--workers", "1") as server:
        replies = server.call_many([("code.outline", {"path": path}) for path in
                                    (str(root / "d/a.py"), "./d//a.py", "d/../d/a.py")])
    assert [r["result"]["path"] for r in replies] == ["d/a.py"] * 3, replies
