"""`os.fwalk` without recursion, for the walks that must reach every level of a tree.

Python's own `os.fwalk` recurses once per directory level, so a tree nested deeper than
the interpreter's recursion limit (about 1,000 levels, made in seconds with mkdirat)
raised RecursionError: a move or recursive delete of it answered `internal_error`, and a
watch of it never answered at all. This one keeps its own stack: one descriptor per level
of the directory it is in, as os.fwalk holds.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def fwalk(dir_fd: int) -> Iterator[tuple[str, list[str], list[str], int]]:
    """(top, dirs, files, top_fd) for the directory open as `dir_fd` and each directory
    beneath, top-down, as `os.fwalk(".", dir_fd=dir_fd)` gives them: `top` is "." then
    "./a/b", a name the caller removes from `dirs` is not entered, a symlink is never
    followed, and what cannot be opened or listed is passed over.
    `dir_fd` stays open; every descriptor opened here is closed."""
    frames: list[tuple[str, int, list[str], list[int]]] = []  # top, fd, dirs, next index
    top, fd = ".", dir_fd
    try:
        while True:
            dirs, files = _listed(fd)
            frames.append((top, fd, dirs, [0]))
            yield top, dirs, files, fd
            found = None
            while frames and found is None:
                parent, parent_fd, names, at = frames[-1]
                if at[0] == len(names):
                    frames.pop()
                    if parent_fd != dir_fd:
                        os.close(parent_fd)
                    continue
                name = names[at[0]]
                at[0] += 1
                try:
                    found = (f"{parent}/{name}", os.open(name, _DIR_FLAGS, dir_fd=parent_fd))
                except OSError:
                    continue  # gone, or replaced by a symlink, since it was listed
            if found is None:
                return
            top, fd = found
    finally:
        for _, frame_fd, _, _ in frames:
            if frame_fd != dir_fd:
                os.close(frame_fd)


def _listed(fd: int) -> tuple[list[str], list[str]]:
    """The names of the directory's subdirectories and of everything else."""
    dirs: list[str] = []
    files: list[str] = []
    try:
        with os.scandir(fd) as it:
            for entry in it:
                try:  # a symlink to a directory is one of `dirs`, never entered: as os.fwalk
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                (dirs if is_dir else files).append(entry.name)
    except OSError:
        pass
    return dirs, files
