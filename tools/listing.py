"""file.list: a directory's entries, or the paths beneath it matching a glob.

Hidden and ignored entries, symlinks and ordering are the walker's (tools/walk.py): the
same view of the tree as file.search and `rg --files`. Only names and lstat results are
loaded; with a glob, directories that cannot hold a match are never opened, and with the
default path order the walk stops as soon as one entry past `max_results` is seen.
"""

from __future__ import annotations

import heapq
from itertools import islice
from typing import Any, Callable, Iterable

from tools.context import ToolContext
from tools.errors import ToolError
from tools.globs import GlobError, ListPattern, invalid_pattern
from tools.sandbox import ROOT
from tools.timefmt import iso_utc
from tools.walk import Entry, walk_entries

_SORT_KEYS: dict[str, Callable[[Entry], Any]] = {
    "modified": lambda e: (-e.stat.st_mtime_ns, e.path),  # newest first
    "size": lambda e: (-e.stat.st_size, e.path),  # largest first
}


def list_files(ctx: ToolContext, path: str = ".", pattern: str | None = None,
               include_hidden: bool = False, include_ignored: bool = False,
               sort: str = "path", max_results: int = 5000) -> dict[str, Any]:
    """List `path` (the root when "" or "."): its direct entries, or with `pattern` every
    entry beneath it whose path relative to it matches the glob."""
    rel = ctx.ws.rel(path, allow_empty=True)
    start = "" if rel == ROOT else rel
    walk: dict[str, Any] = {"max_depth": 1}
    if pattern:
        matcher = _compile(pattern)
        cut = len(start) + 1 if start else 0
        walk = {"select": lambda p, _kind: matcher.matches(p[cut:]),
                "descend": lambda p: matcher.may_descend(p[cut:])}
    entries = walk_entries(ctx, start or ROOT, include_hidden=include_hidden,
                           include_ignored=include_ignored, shown=path, **walk)
    try:
        chosen, truncated = _first(entries, sort, max_results)
    except ToolError as err:
        if err.code == "not_a_directory":
            raise ToolError("not_a_directory",
                            f"Not a directory: {path}. file.list lists a directory; use "
                            "file.info or file.read for a file.", path=path) from None
        raise
    return {"files": [_describe(e) for e in chosen], "truncated": truncated}


def _compile(pattern: str) -> ListPattern:
    """The glob relative to the listed directory; a leading './' or '/' names that
    directory itself."""
    while pattern.startswith(("./", "/")):
        pattern = pattern[2:] if pattern.startswith("./") else pattern[1:]
    try:
        return ListPattern(pattern)
    except GlobError as exc:
        raise invalid_pattern(exc, "pattern") from None


def _first(entries: Iterable[Entry], sort: str, limit: int) -> tuple[list[Entry], bool]:
    """The first `limit` entries in sort order, and whether any were left out. The walk
    already yields path order, so that order needs no sort and stops early."""
    if sort == "path":
        chosen = list(islice(entries, limit + 1))
    else:
        chosen = heapq.nsmallest(limit + 1, entries, key=_SORT_KEYS[sort])
    return chosen[:limit], len(chosen) > limit


def _describe(entry: Entry) -> dict[str, Any]:
    return {"path": entry.path, "size": entry.stat.st_size,
            "modified": iso_utc(entry.stat.st_mtime_ns), "type": entry.kind}
