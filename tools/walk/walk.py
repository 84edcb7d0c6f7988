"""The one tree walker behind file.list and the python search engine.

It sees the tree as ripgrep does with `--no-require-git --no-ignore-global
--no-ignore-exclude`, run at the workspace root (see tools/walk/ignore.py and
`RG_WALK_FLAGS`):
- hidden entries (a name starting with '.') are skipped unless `include_hidden`, except
  those an ignore file re-includes with `!`; `.git` is an ordinary hidden directory;
- ignored entries are skipped unless `include_ignored`; an ignored directory is not
  entered, so nothing inside it can be re-included (git's rule);
- the explicit start directory itself is never filtered;
- `globs` (file.search's `glob`) act as ripgrep's `--glob`, overriding the two rules above;
- `types` (file.search's `type`) act as ripgrep's `--type`: after the ignore rules, a file
  whose name matches one of the types is shown (even hidden), any other file is not;
- symlinks are reported as entries but never followed: a symlinked directory is not
  entered and a symlink is never a file;
- temporary files of atomic writes (tools.atomic) are never seen, nor are `--deny`'d
  paths, whatever the other options say, nor symlinks that lead to one.

Every directory is opened through its parent's descriptor with O_NOFOLLOW, beginning at
the start directory opened beneath the pinned workspace root: no path string is resolved
from the root during the walk, so a symlink swapped in cannot lead it elsewhere.

Order: entries come in ascending order of their workspace-relative '/'-joined path as
Python compares str (code point order; byte order for UTF-8 names): each directory's items
are sorted by name, a subdirectory's contents sorting at `name + "/"`. So `a.py` comes
before `a/b.py`, and `sorted(paths)` of the output is the output itself.
"""

from __future__ import annotations

import os
import stat
from operator import itemgetter
from typing import Callable, Collection, Iterator, NamedTuple

from chorus_tools.tools.mutate.atomic import is_temp_name
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.globs import (IGNORE, NONE, WHITELIST, GlobError, SearchGlobs,
                                          invalid_pattern)
from chorus_tools.tools.walk.ignore import IgnoreStack, load_dir_rules, stack_above
from chorus_tools.tools.confine.sandbox import ROOT
from chorus_tools.tools.search.filetypes import FileTypes

FILE, DIR, SYMLINK, OTHER = "file", "dir", "symlink", "other"
DESCEND = "descend"  # the kind of an item that is a directory to enter
CHILD_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

# ripgrep flags that make `rg --files` (run with the workspace root as its working
# directory) see the same files as walk_files: add `--hidden` for include_hidden and
# `--no-ignore` for include_ignored, and each glob as `--glob`.
RG_WALK_FLAGS = ("--no-require-git", "--no-ignore-global", "--no-ignore-exclude",
                 "--no-ignore-parent", "--no-follow")


class Entry(NamedTuple):
    path: str  # workspace-relative, '/'-separated
    kind: str  # file | dir | symlink | other
    stat: os.stat_result  # of the entry itself (lstat)


def walk_files(ctx: ToolContext, rel: str, *, include_hidden: bool, include_ignored: bool,
               globs: list[str] | None = None, types: FileTypes | None = None,
               stop: Callable[[], bool] | None = None
               ) -> Iterator[tuple[str, os.stat_result]]:
    """(path, lstat) of every regular file beneath directory `rel` (normalised, as from
    ctx.ws.rel), in path order. `stop()` returning True ends the walk early.

    Raises ToolError before the first result: the start's errors (file_not_found,
    not_a_directory, ...) and invalid_pattern (param 'glob') for a glob ripgrep refuses."""
    for entry in walk_entries(ctx, rel, include_hidden=include_hidden,
                              include_ignored=include_ignored, globs=globs, types=types,
                              stop=stop, select=_is_file):
        yield entry.path, entry.stat


def _is_file(path: str, kind: str) -> bool:
    return kind == FILE


def walk_entries(ctx: ToolContext, rel: str, *, include_hidden: bool,
                 include_ignored: bool, globs: list[str] | None = None,
                 types: FileTypes | None = None, stop: Callable[[], bool] | None = None,
                 max_depth: int | None = None,
                 select: Callable[[str, str], bool] | None = None,
                 descend: Callable[[str], bool] | None = None,
                 shown: str | None = None) -> Iterator[Entry]:
    """Every visible entry beneath directory `rel`, in path order (see the module doc).

    `max_depth` 1 gives the direct entries only; `select(path, kind)` picks the entries to
    stat and yield (the others are dropped as their directory is listed, at no system
    call); `descend(path)` False keeps the walker out of a directory (it is still
    yielded). `shown` is the path for errors."""
    start = "" if rel in ("", ROOT) else rel
    overrides = _search_globs(globs) if globs else None
    ignores = IgnoreStack() if include_ignored else stack_above(ctx, start)
    fd = ctx.ws.open_dir(start or ROOT, shown=shown)
    walker = Walker(ctx, include_hidden, include_ignored, overrides, max_depth, descend,
                    select, types)
    try:
        frame = walker.scan(fd, start, ignores, 0)
    except BaseException:
        os.close(fd)
        raise
    yield from walker.walk([frame], stop)


def _search_globs(globs: list[str]) -> SearchGlobs:
    try:
        return SearchGlobs(globs)
    except GlobError as exc:
        raise invalid_pattern(exc, "glob") from None


class Walker:
    """What stays the same for every directory of one walk."""

    def __init__(self, ctx: ToolContext, include_hidden: bool, include_ignored: bool,
                 overrides: SearchGlobs | None, max_depth: int | None,
                 descend: Callable[[str], bool] | None,
                 select: Callable[[str, str], bool] | None,
                 types: FileTypes | None = None) -> None:
        self.ctx = ctx
        self.types = types
        self.include_hidden = include_hidden
        self.include_ignored = include_ignored
        self.overrides = overrides
        self.max_depth = max_depth
        self.descend = descend
        self.select = select
        self.listed = 0  # names listed so far: the walk's work, for tools.walk_split

    def walk(self, stack: list[list], stop: Callable[[], bool] | None = None
             ) -> Iterator[Entry]:
        """The entries of the frames on `stack` (from `scan`) and beneath, in path order,
        the last frame first; closes every frame's directory."""
        try:
            while stack:
                fd, dir_rel, items, ignores, depth = stack[-1]
                item = next(items, None)
                if item is None:
                    os.close(fd)
                    stack.pop()
                    continue
                _, name, path, kind = item
                if kind == DESCEND:
                    if stop is not None and stop():
                        return
                    try:
                        child = os.open(name, CHILD_FLAGS, dir_fd=fd)
                    except OSError:  # gone, now a symlink, or unreadable: as rg, skip
                        continue
                    stack.append(self.scan(child, path, ignores, depth + 1))
                elif (entry := self.entry(fd, name, path, kind)) is not None:
                    yield entry
        finally:
            for frame in stack:
                os.close(frame[0])

    @staticmethod
    def entry(fd: int, name: str, path: str, kind: str) -> Entry | None:
        """The listed item `name` of directory `fd`, stat'ed; None if it changed since."""
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            return None
        if kind == FILE and not stat.S_ISREG(st.st_mode):
            return None  # replaced since it was listed
        return Entry(path, kind, st)

    def scan(self, fd: int, dir_rel: str, ignores: IgnoreStack, depth: int) -> list:
        """A frame for one open directory: its visible items, sorted, and its rules."""
        try:
            with os.scandir(fd) as it:
                entries = list(it)
        except OSError:
            entries = []
        self.listed += len(entries)
        suspects: Collection[str] = ()
        if not self.include_ignored:
            names = {e.name for e in entries}
            ignores = ignores.child(dir_rel, load_dir_rules(self.ctx, dir_rel, names))
            # only these names can meet an ignore rule; the others skip the costly checks
            suspects = ignores.suspects(names) if ignores else ()
        plain, hidden = self.overrides is None and self.types is None, self.include_hidden
        deny = bool(self.ctx.ws.deny)  # once per directory, not once per entry
        select, descend = self.select, self.descend
        may_descend = self.max_depth is None or depth + 1 < self.max_depth
        prefix = f"{dir_rel}/" if dir_rel else ""
        items = []
        for entry in entries:
            name = entry.name
            if is_temp_name(name):
                continue
            try:  # a regular file, the usual entry, at one call
                kind = FILE if entry.is_file(follow_symlinks=False) else _kind(entry)
            except OSError:
                kind = OTHER
            path = prefix + name
            if deny and denied_entry(self.ctx, path, kind):
                continue
            if plain and name not in suspects:
                if not hidden and name.startswith("."):
                    continue
            elif not self._visible(path, name, kind == DIR, ignores):
                continue
            if select is None or select(path, kind):
                items.append((name, name, path, kind))
            if kind == DIR and may_descend and (descend is None or descend(path)):
                items.append((name + "/", name, path, DESCEND))
        items.sort(key=itemgetter(0))
        return [fd, dir_rel, iter(items), ignores, depth]

    def _visible(self, path: str, name: str, is_dir: bool, ignores: IgnoreStack) -> bool:
        """ripgrep's order: globs decide first, then ignore files, then hiddenness."""
        if self.overrides is not None:
            verdict = self.overrides.match(path, is_dir)
            if verdict != NONE:
                return verdict == WHITELIST
        whitelisted = False
        if ignores:
            verdict = ignores.match(path, is_dir)
            if verdict == IGNORE:
                return False
            whitelisted = verdict == WHITELIST
        if self.types is not None and not is_dir:
            return self.types.matches(name)
        return whitelisted or self.include_hidden or not name.startswith(".")


def denied_entry(ctx: ToolContext, path: str, kind: str) -> bool:
    """--deny: the entry matches (its directories did not: the walk never enters a
    denied one), or it is a symlink that leads to a denied path."""
    if ctx.ws.deny.matches(path):
        return True
    if kind != SYMLINK:
        return False
    try:
        return ctx.ws.deny.denies(ctx.ws.resolve_symlinks(path))
    except ToolError as err:
        return err.code == "permission_denied"  # a link leading out stays listed as one


def _kind(entry: os.DirEntry) -> str:
    try:
        if entry.is_dir(follow_symlinks=False):
            return DIR
        if entry.is_file(follow_symlinks=False):
            return FILE
        if entry.is_symlink():
            return SYMLINK
    except OSError:
        pass
    return OTHER
