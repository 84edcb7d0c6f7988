"""A rewind across a path that changed between file and directory (docs/protocol.md,
History): what stands in the way of putting a file back is this server's own doing when
the rewind itself removes it.

Two shapes: a file back beneath a name that now holds a file the rewind deletes (a
directory deleted, then a file written at its name: `blocked`), and a file back at a
name that now holds a directory the rewind empties (a file deleted, then files written
beneath its name: `emptied`). Either is the rewind's to clear; anything else there is
someone else's, a conflict.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError, from_os_error
from chorus_tools.tools.confine.sandbox import ROOT
from chorus_tools.tools.mutate.atomic import locked_dir, split_parent
from chorus_tools.tools.walk.fdwalk import fwalk

BLOCKED, EMPTIED = "blocked", "emptied"


def ours(ctx: ToolContext, path: str, state: str, removed: set[str]) -> bool:
    """True when the rewind's own removals (`removed`, the paths it deletes) clear what
    stands in `path`'s way."""
    if state == BLOCKED:
        return any(parent in removed for parent in _parents(path))
    return all(entry in removed for entry in _entries(ctx, path))


def clear(ctx: ToolContext, path: str) -> None:
    """Remove the directory at `path` and the empty directories beneath it, deepest first
    (its files are gone by now): never through a symlink, and an entry that appeared
    meanwhile fails the rewind, which then puts back what it changed."""
    parent, name = split_parent(path)
    try:
        with locked_dir(ctx, parent, shown=path) as dir_fd:
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
            try:  # each beneath its parent, so removed in reverse (paths under PATH_MAX:
                subs = [f"{top}/{sub}" for top, dirs, _, _ in fwalk(fd) for sub in dirs]
                for sub in reversed(subs):  # the server wrote the files that were there)
                    os.rmdir(sub, dir_fd=fd)
            finally:
                os.close(fd)
            os.rmdir(name, dir_fd=dir_fd)
    except OSError as exc:
        raise from_os_error(exc, path, "write_failed") from None


def blocked(ctx: ToolContext, path: str) -> bool:
    """True when a file holds the name of one of `path`'s parents (the nearest one that
    exists is no directory; one through a symlink was refused before). A loop, not
    recursion: a tree may be nested deeper than Python's call stack."""
    parent = split_parent(path)[0]
    while parent != ROOT:
        try:
            st = ctx.ws.lstat(parent, shown=path)
        except ToolError as err:
            if err.code != "file_not_found":
                return err.code == "not_a_directory"
            parent = split_parent(parent)[0]
            continue
        return not stat.S_ISDIR(st.st_mode)
    return False


def _parents(path: str) -> Iterable[str]:
    parts = path.split("/")
    return ("/".join(parts[:n]) for n in range(1, len(parts)))


def _entries(ctx: ToolContext, path: str) -> list[str]:
    """Every entry beneath the directory `path` but its subdirectories (a symlink to a
    directory is an entry, never followed), as workspace paths."""
    found = []
    fd = ctx.ws.open_dir(path, shown=path)
    try:
        for top, dirs, names, top_fd in fwalk(fd):
            links = [d for d in dirs if stat.S_ISLNK(
                os.stat(d, dir_fd=top_fd, follow_symlinks=False).st_mode)]
            found += [os.path.normpath(os.path.join(path, top, name))
                      for name in (*names, *links)]
    finally:
        os.close(fd)
    return found
