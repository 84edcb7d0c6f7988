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

The directories come from the context's source (tools/walk/source.py): the disk, read
through descriptors opened one name at a time with O_NOFOLLOW, or the warm tree in memory.

Order: entries come in ascending order of their workspace-relative '/'-joined path as
Python compares str (code point order; byte order for UTF-8 names): each directory's items
are sorted by name, a subdirectory's contents sorting at `name + "/"`. So `a.py` comes
before `a/b.py`, and `sorted(paths)` of the output is the output itself.
"""

from __future__ import annotations

import os
from operator import itemgetter
from typing import Any, Callable, Collection, Iterator, NamedTuple

from chorus_tools.tools.confine.reserved import is_temp_name
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.globs import (IGNORE, NONE, WHITELIST, GlobError, SearchGlobs,
                                          invalid_pattern)
from chorus_tools.tools.walk.ignore import IgnoreStack, stack_above
from chorus_tools.tools.walk.source import DIR, DISK, FILE, SYMLINK, DirSource
from chorus_tools.tools.confine.sandbox import ROOT
from chorus_tools.tools.search.filetypes import FileTypes
from chorus_tools.tools.search.rg_errors import unread_directory

DESCEND = "descend"  # the kind of an item that is a directory to enter

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
               stop: Callable[[], bool] | None = None, strict: bool = False
               ) -> Iterator[tuple[str, os.stat_result]]:
    """(path, lstat) of every regular file beneath directory `rel` (normalised, as from
    ctx.ws.rel), in path order. `stop()` returning True ends the walk early.

    Raises ToolError before the first result: the start's errors (file_not_found,
    not_a_directory, ...) and invalid_pattern (param 'glob') for a glob ripgrep refuses.
    `strict` (a search, which must not pass over files it never read): a directory
    beneath that the server may not open is `permission_denied` naming it, as ripgrep's
    complaint about it is (tools/search/rg_errors.py), where a listing skips it."""
    for entry in walk_entries(ctx, rel, include_hidden=include_hidden,
                              include_ignored=include_ignored, globs=globs, types=types,
                              stop=stop, select=_is_file, strict=strict):
        yield entry.path, entry.stat


def _is_file(path: str, kind: str) -> bool:
    return kind == FILE


def walk_entries(ctx: ToolContext, rel: str, *, include_hidden: bool,
                 include_ignored: bool, globs: list[str] | None = None,
                 types: FileTypes | None = None, stop: Callable[[], bool] | None = None,
                 max_depth: int | None = None,
                 select: Callable[[str, str], bool] | None = None,
                 descend: Callable[[str], bool] | None = None,
                 shown: str | None = None, strict: bool = False) -> Iterator[Entry]:
    """Every visible entry beneath directory `rel`, in path order (see the module doc).

    `max_depth` 1 gives the direct entries only; `select(path, kind)` picks the entries to
    stat and yield (the others are dropped as their directory is listed, at no system
    call); `descend(path)` False keeps the walker out of a directory (it is still
    yielded). `shown` is the path for errors; `strict` as in walk_files."""
    start = "" if rel in ("", ROOT) else rel
    overrides = _search_globs(globs) if globs else None
    walker = Walker(ctx, include_hidden, include_ignored, overrides, max_depth, descend,
                    select, types, strict=strict)
    yield from walker.walk_from(start, shown, stop)


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
                 types: FileTypes | None = None, *, strict: bool = False) -> None:
        self.ctx = ctx
        self.strict = strict
        self.types = types
        self.include_hidden = include_hidden
        self.include_ignored = include_ignored
        self.overrides = overrides
        self.max_depth = max_depth
        self.descend = descend
        self.select = select
        self.listed = 0  # names listed so far: the walk's work, for tools.walk_split
        self.fs: DirSource = ctx.source or DISK

    def walk_from(self, start: str, shown: str | None,
                  stop: Callable[[], bool] | None = None) -> Iterator[Entry]:
        """Every entry beneath directory `start` ('' for the root), in path order; raises
        the start's ToolError before the first."""
        ignores = (IgnoreStack() if self.include_ignored
                   else stack_above(self.ctx, start, self.fs.rules))
        handle = self.fs.open_start(self.ctx, start, shown)
        try:
            frame = self.scan(handle, start, ignores, 0)
        except BaseException:
            self.fs.close(handle)
            raise
        return self.walk([frame], stop)

    def walk(self, stack: list[list], stop: Callable[[], bool] | None = None
             ) -> Iterator[Entry]:
        """The entries of the frames on `stack` (from `scan`) and beneath, in path order,
        the last frame first; closes every frame's directory."""
        fs = self.fs
        try:
            while stack:
                handle, dir_rel, items, ignores, depth = stack[-1]
                item = next(items, None)
                if item is None:
                    fs.close(handle)
                    stack.pop()
                    continue
                _, name, path, kind = item
                if kind == DESCEND:
                    if stop is not None and stop():
                        return
                    child = fs.open_child(handle, name)
                    if child is not None:
                        stack.append(self.scan(child, path, ignores, depth + 1))
                    elif self.strict:
                        refuse_unreadable(self.ctx, path)
                elif (entry := self.entry(handle, name, path, kind)) is not None:
                    yield entry
        finally:
            for frame in stack:
                fs.close(frame[0])

    def entry(self, handle: Any, name: str, path: str, kind: str) -> Entry | None:
        """The listed item `name` of a directory, stat'ed; None if it changed since."""
        st = self.fs.stat(handle, name, kind)
        return None if st is None else Entry(path, kind, st)

    def scan(self, handle: Any, dir_rel: str, ignores: IgnoreStack, depth: int) -> list:
        """A frame for one open directory: its visible items, sorted, and its rules."""
        entries = self.fs.list(handle)
        self.listed += len(entries)
        suspects: Collection[str] = ()
        if not self.include_ignored:
            names = {name for name, _ in entries}
            ignores = ignores.child(dir_rel, self.fs.rules(self.ctx, dir_rel, names))
            # only these names can meet an ignore rule; the others skip the costly checks
            suspects = ignores.suspects(names) if ignores else ()
        plain, hidden = self.overrides is None and self.types is None, self.include_hidden
        deny = bool(self.ctx.ws.deny)  # once per directory, not once per entry
        # --deny judges where the directory really is
        real = self.fs.real_prefix(self.ctx, handle, dir_rel) if deny else ""
        select, descend = self.select, self.descend
        may_descend = self.max_depth is None or depth + 1 < self.max_depth
        prefix = f"{dir_rel}/" if dir_rel else ""
        items = []
        for name, kind in entries:
            if is_temp_name(name):
                continue
            path = prefix + name
            if deny and denied_entry(self.ctx, path, kind, real + name):
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
        return [handle, dir_rel, iter(items), ignores, depth]

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


def refuse_unreadable(ctx: ToolContext, path: str) -> None:
    """A directory the walk could not open, asked again of the disk (the warm tree holds
    no listing of one its process could not read): if the server may not open it, the
    error ripgrep's complaint becomes; else it went away meanwhile, and is skipped."""
    try:
        os.close(ctx.ws.open_dir(path))
    except ToolError as err:
        if err.code == "permission_denied":
            raise unread_directory(path, "Permission denied (os error 13)") from None


def denied_entry(ctx: ToolContext, path: str, kind: str, real: str) -> bool:
    """--deny: the entry matches as named or where it really is (`real`, beneath its
    directory's resolved path; its directories did not: the walk never enters a denied
    one), or it is a symlink that leads to a denied path."""
    if ctx.ws.deny.matches(path) or (real != path and ctx.ws.deny.matches(real)):
        return True
    if kind != SYMLINK:
        return False
    try:
        return ctx.ws.deny.denies(ctx.ws.resolve_symlinks(path))
    except ToolError as err:
        return err.code == "permission_denied"  # a link leading out stays listed as one
