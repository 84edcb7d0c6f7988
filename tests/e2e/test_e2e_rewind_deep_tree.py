"""A rewind after dir.delete or file.move of a tree nested deeper than Python's call stack
(docs/protocol.md, History): the rewind asked whether a parent of each file to put back
is now a file by recursing up the path one parent per call, so a tree 1,200 directories
deep answered internal_error (RecursionError) instead of putting the tree back."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rpc_client import RpcServer

DEPTH = 1200  # beyond Python's default recursion limit (1,000)


def _deep_tree(root: Path, name: str) -> str:
    """`root/name/a/a/.../a/leaf.txt`, DEPTH levels, built through directory fds (the
    path is longer than PATH_MAX); its workspace path."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    os.mkdir(name, dir_fd=fd)
    cur = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    os.close(fd)
    for _ in range(DEPTH):
        os.mkdir("a", dir_fd=cur)
        nxt = os.open("a", os.O_RDONLY | os.O_DIRECTORY, dir_fd=cur)
        os.close(cur)
        cur = nxt
    leaf = os.open("leaf.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=cur)
    os.write(leaf, b"leaf\n")
    os.close(leaf)
    os.close(cur)
    return "/".join([name, *["a"] * DEPTH, "leaf.txt"])


@pytest.mark.parametrize("method, params", [
    ("dir.delete", {"path": "t", "recursive": True}),
    ("file.move", {"source": "t", "destination": "moved"}),
])
def test_rewind_after_deep_tree_change_is_not_internal_error(
        tmp_path: Path, method: str, params: dict) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    leaf = _deep_tree(root, "t")
    with RpcServer(root, "--history", str(tmp_path / "hist")) as server:
        checkpoint = server.result("workspace.checkpoint", {})["checkpoint"]
        server.result(method, params)
        dry = server.call("workspace.rewind", {"checkpoint": checkpoint, "dry_run": True})
        assert "result" in dry, dry
        assert leaf in dry["result"]["restored"]
        done = server.result("workspace.rewind", {"checkpoint": checkpoint})
        assert leaf in done["restored"]
        assert server.result("file.read", {"path": leaf, "raw": True})["content"] == "leaf\n"
        moved = "moved" + leaf[1:]
        assert server.error("file.info", {"path": moved})["data"]["error"] == "file_not_found"
