"""A rewind after dir.delete or file.move of a tree nested deeper than Python's call stack
(docs/protocol.md, History): the rewind asked whether a parent of each file to put back
is now a file by recursing up the path one parent per call, so a tree 1,200 directories
deep answered internal_error (RecursionError) instead of putting the tree back."""

from __future__ import annotations

import os
import stat
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


def _remove(top: Path) -> None:
    """Remove the tree at `top` without recursion: every entry of a subdirectory is moved
    up into `top` (under a fresh name) and the emptied subdirectory removed, until `top` is
    empty. pytest's own clean-up (shutil.rmtree) recurses and fails on such a tree."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fresh = 0
        while names := os.listdir(fd):
            for name in names:
                if not _is_dir(fd, name):
                    os.unlink(name, dir_fd=fd)
                    continue
                sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                try:
                    for entry in os.listdir(sub):
                        fresh += 1
                        os.rename(entry, f"up{fresh}", src_dir_fd=sub, dst_dir_fd=fd)
                finally:
                    os.close(sub)
                os.rmdir(name, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(top)


def _is_dir(dir_fd: int, name: str) -> bool:
    return stat.S_ISDIR(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)


@pytest.mark.parametrize("method, params", [
    ("dir.delete", {"path": "t", "recursive": True}),
    ("file.move", {"source": "t", "destination": "moved"}),
])
def test_rewind_after_deep_tree_change_is_not_internal_error(
        tmp_path: Path, method: str, params: dict) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    leaf = _deep_tree(root, "t")
    try:
        _rewind_puts_back(tmp_path, root, leaf, method, params)
    finally:
        _remove(root)


def _rewind_puts_back(tmp_path: Path, root: Path, leaf: str, method: str,
                      params: dict) -> None:
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
