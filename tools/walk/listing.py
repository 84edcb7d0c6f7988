"""file.list: a directory's entries, or the paths beneath it matching a glob.

Hidden and ignored entries, symlinks and ordering are the walker's (tools/walk/walk.py): the
same view of the tree as file.search and `rg --files`. Only names and lstat results are
loaded; with a glob, directories that cannot hold a match are never opened, and with the
default path order the walk stops as soon as one entry past `max_results` is seen.

A glob over a big tree is walked by the whole pool (a FanOut): the calling worker lists
the top levels until they hold enough directories, then the frontier is cut into
contiguous runs (tools/walk/split.py) that the workers walk in parallel, each keeping its
first `max_results` + 1 entries in the sort order; merging them gives the same reply as
one walk. One worker walking 20k entries alone was the cost that mattered (profiled: the
per-entry Python work and ~5k system calls, serial).

`recursive: true` is the glob `**` (every entry beneath, directories included); `depth`
bounds a recursive or glob listing to that many levels below `path` (1: its direct
entries) and, given alone, makes the listing recursive. A pattern of names (no '/') is
matched in `path` itself, or with `recursive` or `depth` at any depth (as `**/PATTERN`,
file.search's `glob` rule); file.list's empty answer to one says how many entries
`**/PATTERN` would match (`hint`), so "no files" is never a guess. `exclude` globs read like ignore
lines relative to `path` (a glob without '/' matches the name at any depth): an excluded
entry is left out, an excluded directory with everything beneath it.
"""

from __future__ import annotations

import heapq
import pickle
import sys
from contextlib import contextmanager
from functools import lru_cache
from itertools import islice
from typing import Any, Callable, Iterable, Iterator

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.fanout import FanOut, shared
from chorus_tools.tools.walk.globs import (IGNORE, GlobError, ListPattern, RuleSet, gitignore_rule,
                                      invalid_pattern)
from chorus_tools.tools.confine.sandbox import ROOT
from chorus_tools.tools.timefmt import iso_utc
from chorus_tools.tools.walk.walk import Entry, Walker, walk_entries
from chorus_tools.tools.walk.split import Pending, cut, expand, walk_frontier
from chorus_tools.tools.warm.client import Pickled, ask

DIRS_PER_RUN = 8  # a frontier this wide per worker is worth sharing out
MAX_LISTED = 2000  # names listed here in search of that width before walking on alone

_SORT_NUMBERS: dict[str, Callable[[Entry], int]] = {
    "modified": lambda e: e.stat.st_mtime_ns,  # newest first
    "size": lambda e: e.stat.st_size,  # largest first
}


def list_files(ctx: ToolContext, path: str = ".", pattern: str | None = None,
               recursive: bool = False, depth: int | None = None,
               exclude: str | list[str] | None = None, include_hidden: bool = False,
               include_ignored: bool = False, sort: str = "path",
               max_results: int = 5000, hint: bool = False) -> dict[str, Any] | FanOut:
    """List `path` (the root when "" or "."): its direct entries, or with `pattern` every
    entry beneath it whose path relative to it matches the glob (`recursive`: every
    entry), at most `depth` levels down. `hint`: an empty answer to a name pattern says
    how many entries `**/PATTERN` would match (file.list's; a tool set's listing keeps
    its harness's answer)."""
    found = _list(ctx, path, pattern, recursive, depth, exclude, include_hidden,
                  include_ignored, sort, max_results, raw=False, hint=hint)
    assert not isinstance(found, Pickled), "asked for a dict"
    return found


def file_list(ctx: ToolContext, path: str = ".", pattern: str | None = None,
              recursive: bool = False, depth: int | None = None,
              exclude: str | list[str] | None = None, include_hidden: bool = False,
              include_ignored: bool = False, sort: str = "path",
              max_results: int = 5000) -> dict[str, Any] | FanOut | Pickled:
    """The method file.list: list_files with its hint, but a warm answer goes back still
    pickled (the tool sets' listings take list_files' dict)."""
    return _list(ctx, path, pattern, recursive, depth, exclude, include_hidden,
                 include_ignored, sort, max_results, raw=True, hint=True)


def _list(ctx: ToolContext, path: str, pattern: str | None, recursive: bool,
          depth: int | None, exclude: str | list[str] | None, include_hidden: bool,
          include_ignored: bool, sort: str, max_results: int, *, raw: bool, hint: bool
          ) -> dict[str, Any] | FanOut | Pickled:
    """A name pattern (no '/') matches in `path` itself, or with `recursive` or `depth`
    names at any depth down to it, as file.search's `glob` does (docs/protocol.md,
    file.list). A pattern that is only a leading './' is none, as "" is."""
    if pattern and not _relative(pattern):
        pattern = None
    deep = recursive or depth is not None
    if not pattern and deep:
        pattern = "**"
    if not pattern:
        return list_entries(ctx, path, exclude, include_hidden, include_ignored, sort,
                            max_results)
    if deep and names_only(pattern):
        pattern = f"**/{pattern}"
    hint = hint and not deep and names_only(pattern)
    warm = ask(ctx, "list", raw=raw, path=path, pattern=pattern, depth=depth,
               exclude=exclude, include_hidden=include_hidden,
               include_ignored=include_ignored, sort=sort, max_results=max_results,
               hint=hint)
    if warm is not None:
        return warm
    found = _walk_list(ctx, path, pattern, depth, exclude, include_hidden, include_ignored,
                       sort, max_results)
    if hint and isinstance(found, dict) and not found["files"]:
        count = _count(ctx, path, f"**/{pattern}", exclude, include_hidden,
                       include_ignored)
        if count:
            found["hint"] = {"pattern": f"**/{pattern}", "count": count}
    return found


def names_only(pattern: str) -> bool:
    """A glob of names (no '/' but a trailing one), matched at any depth where depth is
    asked for."""
    name = pattern.rstrip("/")
    return bool(name) and "/" not in name and name != "**"


def _walk_list(ctx: ToolContext, path: str, pattern: str, depth: int | None,
               exclude: str | list[str] | None, include_hidden: bool,
               include_ignored: bool, sort: str, max_results: int
               ) -> dict[str, Any] | FanOut:
    """The glob listing walked: in one pass over a tree in memory, by this worker over a
    narrow tree, else cut into runs for the pool."""
    start = _start(ctx, path)
    max_results = _capped(max_results)
    matcher = _compile(pattern)
    excludes = _globs(exclude)
    excluded = _excluded(excludes, len(start) + 1 if start else 0)
    runs = ctx.workers
    with _listing(path):
        walker = _walker(ctx, matcher, start, include_hidden, include_ignored, depth,
                         excluded)
        if not walker.fs.splits:  # the warm tree, in memory: one pass
            return _reply(walker.walk_from(start, path), sort, max_results)
        front = expand(walker, start or ROOT, shown=path, min_dirs=DIRS_PER_RUN * runs,
                       max_listed=MAX_LISTED)
    if runs < 2 or front.dirs < DIRS_PER_RUN * runs:
        return _reply(walk_frontier(walker, front.start, front.identity, front.items),
                      sort, max_results)
    # the runs pickled here: the dispatcher passes them on without loading the walker's types
    split = cut(front.items, runs)
    return FanOut(part="chorus_tools.tools.walk.listing:list_part",
                  parts=[{"items": pickle.dumps(run)} for run in split],
                  merge="chorus_tools.tools.walk.listing:Merge",
                  args={"sort": sort, "max_results": max_results},
                  shared=shared(start=front.start, identity=front.identity, pattern=pattern,
                                depth=depth, exclude=excludes,
                                include_hidden=include_hidden,
                                include_ignored=include_ignored, sort=sort,
                                max_results=max_results),
                  sizes=[sum(type(item) is Pending for item in run) for run in split],
                  unit="directory trees listed")


def _count(ctx: ToolContext, path: str, pattern: str, exclude: str | list[str] | None,
           include_hidden: bool, include_ignored: bool) -> int:
    """How many entries beneath `path` a glob matches (an empty answer's hint); 0 when the
    directory went away since it was listed (the empty answer was true then)."""
    start = _start(ctx, path)
    walker = _walker(ctx, _compile(pattern), start, include_hidden, include_ignored, None,
                     _excluded(_globs(exclude), len(start) + 1 if start else 0))
    try:
        return sum(1 for _ in walker.walk_from(start, path))
    except ToolError:
        return 0


def list_entries(ctx: ToolContext, path: str = ".", exclude: str | list[str] | None = None,
                 include_hidden: bool = False, include_ignored: bool = False,
                 sort: str = "path", max_results: int = 5000) -> dict[str, Any]:
    """The direct entries of directory `path` (file.list without a pattern): never split,
    so always the reply itself."""
    start = _start(ctx, path)
    excluded = _excluded(_globs(exclude), len(start) + 1 if start else 0)
    with _listing(path):
        return _reply(walk_entries(ctx, start or ROOT, include_hidden=include_hidden,
                                   include_ignored=include_ignored, max_depth=1,
                                   select=lambda p, kind: not excluded(p, kind == "dir"),
                                   shown=path), sort, _capped(max_results))


def _start(ctx: ToolContext, path: str) -> str:
    """The listed directory, workspace-relative: '' for the root."""
    rel = ctx.ws.rel(path, allow_empty=True)
    return "" if rel == ROOT else rel


def _capped(max_results: int) -> int:
    """More than any tree holds, yet a machine-size int as islice needs (found by
    fuzzing: max_results 2**63 was internal_error)."""
    return min(max_results, sys.maxsize - 1)


def _globs(exclude: str | list[str] | None) -> tuple[str, ...]:
    return (exclude,) if isinstance(exclude, str) else tuple(exclude or ())


@contextmanager
def _listing(path: str) -> Iterator[None]:
    """A listing of a file is refused with the error that says what to use instead."""
    try:
        yield
    except ToolError as err:
        if err.code == "not_a_directory":
            raise ToolError("not_a_directory",
                            f"Not a directory: {path}. file.list lists a directory; use "
                            "file.info or file.read for a file.", path=path) from None
        raise


def list_part(ctx: ToolContext, start: str, identity: tuple[int, int], items: bytes,
              pattern: str, depth: int | None, exclude: tuple[str, ...],
              include_hidden: bool, include_ignored: bool, sort: str,
              max_results: int) -> dict[str, Any]:
    """FanOut part: one run of the frontier walked; its first `max_results` + 1 entries
    in the sort order, with their sort numbers unless the order is by path."""
    walker = _walker(ctx, _compile(pattern), start, include_hidden, include_ignored, depth,
                     _excluded(exclude, len(start) + 1 if start else 0))
    chosen = _best(walk_frontier(walker, start, identity, pickle.loads(items)), sort,
                   max_results + 1)
    numbers = _SORT_NUMBERS.get(sort)
    return {"files": [_describe(e) for e in chosen],
            "numbers": [numbers(e) for e in chosen] if numbers else []}


class Merge:
    """FanOut merger (tools/walk/fanout.py): by path, the runs concatenated (done once the
    finished prefix holds more than max_results); by a number, the runs' bests merged
    once all are in."""

    def __init__(self, args: dict[str, Any]) -> None:
        self._sort: str = args["sort"]
        self._limit: int = args["max_results"]
        self._parts: list[dict[str, Any]] = []
        self._files: list[dict[str, Any]] = []

    def add(self, result: dict[str, Any]) -> dict[str, Any] | None:
        if self._sort != "path":
            self._parts.append(result)
            return None
        self._files += result["files"]
        return self._reply(self._files) if len(self._files) > self._limit else None

    def finish(self) -> dict[str, Any]:
        if self._sort == "path":
            return self._reply(self._files)
        ordered = heapq.merge(*(zip(part["numbers"], part["files"]) for part in self._parts),
                              key=lambda pair: (-pair[0], pair[1]["path"]))
        return self._reply([f for _, f in islice(ordered, self._limit + 1)])

    def _reply(self, files: list[dict[str, Any]]) -> dict[str, Any]:
        return {"files": files[:self._limit], "truncated": len(files) > self._limit}


@lru_cache(maxsize=64)
def _compile(pattern: str) -> ListPattern:
    """The glob relative to the listed directory; a leading './' or '/' names that
    directory itself. Cached: every run of a split walk needs it again."""
    try:
        return ListPattern(_relative(pattern))
    except GlobError as exc:
        raise invalid_pattern(exc, "pattern") from None


def _relative(pattern: str) -> str:
    """The pattern without its leading './' or '/', which name the listed directory."""
    while pattern.startswith(("./", "/")):
        pattern = pattern[2:] if pattern.startswith("./") else pattern[1:]
    return pattern


def _excluded(globs: tuple[str, ...], cut_at: int) -> Callable[[str, bool], bool]:
    """Whether a workspace-relative path is excluded (its part below the listed
    directory, which starts at `cut_at`, matched as an ignore line would be)."""
    if not globs:
        return lambda _path, _is_dir: False
    rules = _exclude_rules(globs)
    return lambda path, is_dir: rules.match(path[cut_at:], is_dir) == IGNORE


@lru_cache(maxsize=64)
def _exclude_rules(globs: tuple[str, ...]) -> RuleSet:
    try:
        rules = [gitignore_rule(g) for g in globs]
    except GlobError as exc:
        raise invalid_pattern(exc, "exclude") from None
    return RuleSet(r for r in rules if r is not None)


def _walker(ctx: ToolContext, matcher: ListPattern, start: str, include_hidden: bool,
            include_ignored: bool, depth: int | None,
            excluded: Callable[[str, bool], bool]) -> Walker:
    """The walker of a glob listing: it stats only matches and enters only directories
    that can hold one."""
    cut_at = len(start) + 1 if start else 0
    return Walker(ctx, include_hidden, include_ignored, overrides=None, max_depth=depth,
                  select=lambda p, kind: (matcher.matches(p[cut_at:], kind == "dir")
                                          and not excluded(p, kind == "dir")),
                  descend=lambda p: matcher.may_descend(p[cut_at:]) and not excluded(p, True))


def _reply(entries: Iterable[Entry], sort: str, limit: int) -> dict[str, Any]:
    chosen = _best(entries, sort, limit + 1)
    return {"files": [_describe(e) for e in chosen[:limit]], "truncated": len(chosen) > limit}


def _best(entries: Iterable[Entry], sort: str, count: int) -> list[Entry]:
    """The first `count` entries in sort order. The walk already yields path order, so
    that order needs no sort and stops early."""
    if sort == "path":
        return list(islice(entries, count))
    number = _SORT_NUMBERS[sort]
    return heapq.nsmallest(count, entries, key=lambda e: (-number(e), e.path))


def _describe(entry: Entry) -> dict[str, Any]:
    return {"path": entry.path, "size": entry.stat.st_size,
            "modified": iso_utc(entry.stat.st_mtime_ns), "type": entry.kind}
