"""The walk of tools/walk/walk.py cut into contiguous runs, for workers to walk in parallel.

The walk is depth-first over each directory's sorted items, so replacing the item of a
directory by that directory's own items, in place, keeps the global order. `expand` does
that a level at a time from the start directory, listing names only, until the frontier
holds enough directories to share out (or none left: a small tree); `cut` splits the
frontier into runs and `walk_frontier` walks a run, or the whole frontier, with the
rules the walker would have applied there (each directory keeps its parent's ignore rules).

A run's directories are reopened beneath the start one name at a time with O_NOFOLLOW,
as the walker opens them, and the start must still be the directory `expand` listed
(same device and inode): a directory replaced by a symlink since is skipped, never
followed, and a start replaced since yields nothing.
"""

from __future__ import annotations

import os
from typing import Iterator, NamedTuple, final

from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.ignore import IgnoreStack, stack_above
from chorus_tools.tools.confine.sandbox import ROOT
from chorus_tools.tools.walk.source import CHILD_FLAGS
from chorus_tools.tools.walk.walk import DESCEND, Entry, Walker


@final  # so `type(item) is Listed` tells a Listed from a Pending, for readers and pyright
class Listed(NamedTuple):
    """An entry seen in its directory's listing, still to be stat'ed."""

    path: str
    kind: str


@final
class Pending(NamedTuple):
    """A directory still to be listed, with the ignore rules in force in its parent."""

    path: str
    ignores: IgnoreStack
    depth: int


Item = Listed | Pending


class Frontier(NamedTuple):
    start: str  # '' for the workspace root
    identity: tuple[int, int]  # (st_dev, st_ino) of the start directory
    items: list[Item]  # in walk order
    dirs: int  # how many items are Pending


def expand(walker: Walker, rel: str, *, shown: str, min_dirs: int,
           max_listed: int) -> Frontier:
    """List directory `rel` and the directories beneath it a level at a time until the
    frontier holds `min_dirs` directories, none, or `max_listed` names were listed (past
    that, walking on here costs less than waiting for more levels).

    Raises the start's ToolError (file_not_found, not_a_directory, ...)."""
    start = "" if rel in ("", ROOT) else rel
    ctx = walker.ctx
    ignores = IgnoreStack() if walker.include_ignored else stack_above(ctx, start)
    fd = ctx.ws.open_dir(start or ROOT, shown=shown)
    opener = _Opener(fd, start)
    try:
        st = os.fstat(fd)
        items: list[Item] = [Pending(start, ignores, 0)]
        dirs, until = 1, walker.listed + max_listed
        while dirs and dirs < min_dirs and walker.listed < until:
            items, dirs = _next_level(walker, opener, items)
    finally:
        opener.close()
    return Frontier(start, (st.st_dev, st.st_ino), items, dirs)


def _next_level(walker: Walker, opener: _Opener, items: list[Item]
                ) -> tuple[list[Item], int]:
    """Every Pending item replaced by its directory's items, and how many are Pending now."""
    out: list[Item] = []
    dirs = 0
    for item in items:
        if type(item) is Listed:
            out.append(item)
            continue
        fd = opener.open(item.path)
        if fd is None:
            continue
        try:
            _, _, found, ignores, depth = walker.scan(fd, item.path, item.ignores, item.depth)
        finally:
            os.close(fd)
        for _, _, path, kind in found:
            if kind == DESCEND:
                out.append(Pending(path, ignores, depth + 1))
                dirs += 1
            else:
                out.append(Listed(path, kind))
    return out, dirs


def cut(items: list[Item], runs: int) -> list[list[Item]]:
    """Contiguous runs holding about as many directories each (entries ride along)."""
    dirs = sum(type(item) is Pending for item in items)
    out: list[list[Item]] = [[] for _ in range(min(runs, max(dirs, 1)))]
    seen = 0
    for item in items:
        out[min(seen * len(out) // max(dirs, 1), len(out) - 1)].append(item)
        seen += type(item) is Pending
    return [run for run in out if run]


def walk_frontier(walker: Walker, start: str, identity: tuple[int, int],
                  items: list[Item]) -> Iterator[Entry]:
    """The entries of `items` (a frontier's, or a run of it) and beneath, in walk order."""
    try:
        fd = walker.ctx.ws.open_dir(start or ROOT)
    except ToolError:  # gone since the split: nothing is left to list
        return
    opener = _Opener(fd, start)
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != identity:
            return
        for item in items:
            if type(item) is Listed:
                parent, _, name = item.path.rpartition("/")
                parent_fd = opener.reach(parent)
                if parent_fd is not None and (entry := walker.entry(
                        parent_fd, name, item.path, item.kind)) is not None:
                    yield entry
            elif (child := opener.open(item.path)) is not None:
                try:
                    frame = walker.scan(child, item.path, item.ignores, item.depth)
                except BaseException:
                    os.close(child)
                    raise
                yield from walker.walk([frame])
    finally:
        opener.close()


class _Opener:
    """Opens directories beneath the start one name at a time with O_NOFOLLOW, keeping the
    last one's ancestors open: directories come in path order, so most share them."""

    def __init__(self, fd: int, start: str) -> None:
        self._start = start
        self._cut = len(start) + 1 if start else 0
        self._chain: list[tuple[str, int]] = [("", fd)]  # (path, fd) from the start down

    def open(self, path: str) -> int | None:
        """A new descriptor of the directory at workspace path `path` (the start or
        beneath it); None when it is gone, unreadable or no longer a directory."""
        if path == self._start:
            parent, name = self._start, "."
        else:
            parent, _, name = path.rpartition("/")
        fd = self.reach(parent)
        if fd is None:
            return None
        try:
            return os.open(name, CHILD_FLAGS, dir_fd=fd)
        except OSError:
            return None

    def reach(self, path: str) -> int | None:
        """The kept descriptor of directory `path` (the start or beneath it), opening
        what is missing of the chain; None when it cannot be reached."""
        rel = path[self._cut:] if path != self._start else ""
        chain = self._chain
        while len(chain) > 1 and not (rel == chain[-1][0]
                                      or rel.startswith(chain[-1][0] + "/")):
            os.close(chain.pop()[1])
        have = chain[-1][0]
        if rel == have:
            return chain[-1][1]
        for name in (rel[len(have) + 1:] if have else rel).split("/"):
            try:
                fd = os.open(name, CHILD_FLAGS, dir_fd=chain[-1][1])
            except OSError:
                return None
            have = f"{have}/{name}" if have else name
            chain.append((have, fd))
        return chain[-1][1]

    def close(self) -> None:
        for _, fd in self._chain:
            os.close(fd)
        self._chain = []
