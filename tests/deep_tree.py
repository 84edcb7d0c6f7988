"""Trees nested deeper than Python's recursion limit, whose paths are longer than the
kernel takes whole: made through directory descriptors, removed by `rm -rf` (pytest's own
clean-up of tmp_path recurses and leaves them behind)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def nest(root: Path, name: str, depth: int) -> str:
    """`root/name/a/a/.../a/leaf.txt`, `depth` levels of `a`, the leaf holding "leaf\\n";
    its workspace path."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    os.mkdir(name, dir_fd=fd)
    cur = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    os.close(fd)
    for _ in range(depth):
        os.mkdir("a", dir_fd=cur)
        nxt = os.open("a", os.O_RDONLY | os.O_DIRECTORY, dir_fd=cur)
        os.close(cur)
        cur = nxt
    leaf = os.open("leaf.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=cur)
    os.write(leaf, b"leaf\n")
    os.close(leaf)
    os.close(cur)
    return "/".join([name, *["a"] * depth, "leaf.txt"])


def empty(root: Path) -> None:
    """Remove everything beneath `root`, however deep."""
    subprocess.run(["rm", "-rf", "--", *(str(p) for p in root.iterdir())], check=True)
