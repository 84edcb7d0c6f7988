"""The names the one write path (tools/mutate/atomic.py) writes beneath before its rename:
reserved for it (a path with one is refused, listings and searches hide them), and removed
when a killed writer left them: by the next change in their directory, whose lock the
writer would hold, and by one sweep of the workspace at start."""

from __future__ import annotations

import fcntl
import os
import re
import stat
from typing import Iterator

from chorus_tools.tools.confine.reserved import TEMP_PREFIX
from chorus_tools.tools.confine.sandbox import ROOT
from chorus_tools.tools.context import ToolContext

_TEMP_NAME = re.compile(re.escape(TEMP_PREFIX) + r"[0-9a-f]{16}")


def remove_stale(dir_fd: int) -> int:
    """Remove temp files in a directory whose lock we hold: no live writer owns them."""
    try:
        names = [n for n in os.listdir(dir_fd)
                 if n.startswith(TEMP_PREFIX) and _TEMP_NAME.fullmatch(n)]
    except OSError:
        return 0
    removed = 0
    for name in names:
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if stat.S_ISREG(st.st_mode):
                os.unlink(name, dir_fd=dir_fd)
                removed += 1
        except OSError:
            pass
    return removed


def sweep_temp_files(ctx: ToolContext) -> int:
    """Remove every stale temp file in the workspace, each directory under its lock.

    The runtime runs this once in the background at start. The walk goes through
    directory descriptors, never follows a symlink, and holds one descriptor per level."""
    removed = 0
    stack: list[tuple[int, Iterator[str]]] = []
    fd = ctx.ws.open_dir(ROOT)
    while True:
        count, subdirs = _sweep_dir(fd)
        removed += count
        stack.append((fd, iter(subdirs)))
        fd = -1
        while stack and fd < 0:
            parent_fd, names = stack[-1]
            name = next(names, None)
            if name is None:
                os.close(parent_fd)
                stack.pop()
                continue
            try:
                fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
                             | os.O_CLOEXEC, dir_fd=parent_fd)
            except OSError:
                pass  # gone, now a symlink, or out of descriptors: skip it
        if fd < 0:
            return removed


def _sweep_dir(dir_fd: int) -> tuple[int, list[str]]:
    """Remove this directory's stale temp files (locking only if it has any); return
    how many, and the names of its subdirectories."""
    subdirs: list[str] = []
    stale = False
    try:
        with os.scandir(dir_fd) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    subdirs.append(entry.name)
                elif _TEMP_NAME.fullmatch(entry.name):
                    stale = True
    except OSError:
        return 0, subdirs
    if not stale:
        return 0, subdirs
    fcntl.flock(dir_fd, fcntl.LOCK_EX)
    try:
        return remove_stale(dir_fd), subdirs
    finally:
        fcntl.flock(dir_fd, fcntl.LOCK_UN)
