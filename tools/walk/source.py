"""Where the walker (tools/walk/walk.py) gets its directories from: the disk, or the warm tree.

The walker's rules (ignore files, hidden entries, globs, types, --deny, order) are one piece
of code; only the few calls that look at the tree go through a source, so a listing served
from the warm tree (tools/warm/) applies the very rules a walk of the disk applies.
A directory is known by a handle: a descriptor here, the directory's path in the warm tree.

DiskSource opens every directory through its parent's descriptor with O_NOFOLLOW,
beginning at the start directory opened beneath the pinned workspace root: no path string
is resolved from the root during a walk, so a symlink swapped in cannot lead it elsewhere.
"""

from __future__ import annotations

import os
import stat
from typing import Any, Protocol

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.confine.sandbox import ROOT
from chorus_tools.tools.walk.globs import RuleSet
from chorus_tools.tools.walk.ignore import load_dir_rules

FILE, DIR, SYMLINK, OTHER = "file", "dir", "symlink", "other"
CHILD_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class DirSource(Protocol):
    """The walker's view of the tree; every method but `open_start` is quiet about
    errors, as ripgrep is: what cannot be read is skipped."""

    splits: bool  # whether a big walk is worth sharing out across the workers

    def open_start(self, ctx: ToolContext, rel: str, shown: str | None) -> Any:
        """The handle of directory `rel` ('' for the root); raises its ToolError."""
        ...

    def open_child(self, handle: Any, name: str) -> Any | None: ...

    def close(self, handle: Any) -> None: ...

    def list(self, handle: Any) -> list[tuple[str, str]]:
        """(name, kind) of every entry, in no particular order."""
        ...

    def stat(self, handle: Any, name: str, kind: str) -> os.stat_result | None:
        """The entry's lstat; None when it is gone or no longer of that kind."""
        ...

    def rules(self, ctx: ToolContext, dir_rel: str,
              names: set[str] | None = None) -> dict[str, RuleSet]:
        """The ignore files of the directory (name -> rules); `names`, its entries when
        already listed."""
        ...

    def real_prefix(self, ctx: ToolContext, handle: Any, dir_rel: str) -> str:
        """Where the directory really is, as the prefix of its entries' paths."""
        ...


class DiskSource:
    """The tree as it is on disk, read through descriptors."""

    splits = True  # a big listing may be shared out across the workers (tools/walk/split.py)

    def open_start(self, ctx: ToolContext, rel: str, shown: str | None) -> int:
        return ctx.ws.open_dir(rel or ROOT, shown=shown)

    def open_child(self, handle: int, name: str) -> int | None:
        try:
            return os.open(name, CHILD_FLAGS, dir_fd=handle)
        except OSError:  # gone, now a symlink, or unreadable: as rg, skip
            return None

    def close(self, handle: int) -> None:
        os.close(handle)

    def list(self, handle: int) -> list[tuple[str, str]]:
        try:
            with os.scandir(handle) as it:
                return [(entry.name, kind_of(entry)) for entry in it]
        except OSError:
            return []

    def stat(self, handle: int, name: str, kind: str) -> os.stat_result | None:
        try:
            st = os.stat(name, dir_fd=handle, follow_symlinks=False)
        except OSError:
            return None
        if kind == FILE and not stat.S_ISREG(st.st_mode):
            return None  # replaced since it was listed
        return st

    def rules(self, ctx: ToolContext, dir_rel: str,
              names: set[str] | None = None) -> dict[str, RuleSet]:
        return load_dir_rules(ctx, dir_rel, names)

    def real_prefix(self, ctx: ToolContext, handle: int, dir_rel: str) -> str:
        # the start may be reached through a symlink ('seclink' -> 'secrets'), whose
        # entries are named beneath the link
        real = ctx.ws.where(handle, dir_rel) if dir_rel else ""
        return f"{real}/" if real else ""


DISK = DiskSource()


def kind_of(entry: os.DirEntry) -> str:
    """FILE, DIR, SYMLINK or OTHER, without following a symlink; a regular file, the
    usual entry, at one call."""
    try:
        if entry.is_file(follow_symlinks=False):
            return FILE
        if entry.is_dir(follow_symlinks=False):
            return DIR
        if entry.is_symlink():
            return SYMLINK
    except OSError:
        pass
    return OTHER
