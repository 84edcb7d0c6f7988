"""The ripgrep engine: rg's own output modes, confined (tools/search/rg_run.py), stopped as
soon as the reply is settled.

What rg prints: `-c` (a count per file) for `count`, and for `files_with_matches` too (rg
reads each file whole, so a NUL past the first match still makes it binary: `-l` would
stop at that match); `-n` lines for `content`, for a multiline `count` (rg's `-c` counts
multiline matches, not their lines) and for a file given as the search path (rg searches
a file it is given whole past a NUL, and only -n's note says so); all with `--null`, read
in large blocks (tools/search/rg_output.py).

Walking (no warm selection, or one the index did not narrow), rg runs with the workspace
root as its working directory and the search path as a relative argument after `--`, with
the walker's flags (tools.walk.RG_WALK_FLAGS) except `--no-ignore-parent`: ignore files in
the workspace directories above the search path must apply, as the walker applies them;
those above the workspace are out of Landlock's reach. rg prints files with `--sort path`,
ordered by name within each directory; the reply is ordered by the whole path as a string,
as the walker orders it. The two differ only where a directory `d` has a sibling named
`d` + a character below '/' (`d.py`, `d-old`), so rg is stopped once the first
`max_results` items, in string order, can no longer change: everything up to the last file
rg finished is final unless one of that file's directories has such a sibling, in which
case only what sorts before that directory is. When nearly every match is wanted
(`UNSORTED_FROM`), rg runs unsorted on all its threads instead (it still prints each
file's output together), everything is read, and the files are sorted at the end, keeping
only the first `max_results` items as it goes.

Named (the warm index's candidates, in path order, a page at a time: tools/warm/
selection.py), rg searches each page's files by name: lines that may stop early with
`--sort path` (rg keeps the order it is given; the bound above holds whatever order it
keeps), stopped as soon as the reply is settled; everything else on all its threads, the
search stopping after the page that holds the reply. A named file is searched whole even past a NUL
(rg's rule for files it is given), so `-c` runs only over the files the index read and
found free of NULs; the others go through `-n`, whose note says when a file is binary.

`files_searched` (docs/protocol.md, file.search): every file the query covers, rg's own
count once it searched them all; a truncated reply counts the files up to the one holding
the first item past `max_results` (tools/search/results.py `decisive`), which is what a
search that stopped there read.
"""

from __future__ import annotations

import itertools
import os
from typing import Any

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.confine import landlock
from chorus_tools.tools.search.results import Shape, assemble, collector_paused, decisive
from chorus_tools.tools.search.rg_errors import fallback_note
from chorus_tools.tools.search.rg_reader import Reader
from chorus_tools.tools.search.rg_run import (Failures, Fallback, Query, count_files,
                                              ignore_files_above, run, search_args,
                                              walk_args)
from chorus_tools.tools.search.target import Target, open_target
from chorus_tools.tools.walk.walk import walk_files
from chorus_tools.tools.search.filetypes import FileTypes
from chorus_tools.tools.warm.selection import Selection, Stale, pages

_SWAP_RETRIES = 3
# From this max_results on ("every match"), rg runs unsorted on all its threads and the
# reply is sorted at the end: measured 10-20% faster on the stdlib than --sort=path, which
# is single-threaded but can stop early, far better when few results are wanted.
UNSORTED_FROM = 100_000


def search(ctx: ToolContext, rel: str, shown: str, target: Target, query: Query, *,
           shape: Shape, fallback: Fallback, only: Selection | None = None
           ) -> dict[str, Any]:
    """Run rg over `rel` (`target`, opened by the caller: a directory or a file) and shape
    its output; a file rg could not search goes to `fallback` (tools.search.rg_errors).
    With `only` (the warm index's candidates) rg searches those files by name instead of
    walking, and the reply counts every file the query covers.
    A directory swapped away under rg is opened again, a few times."""
    rg = ctx.rg_path
    assert rg is not None, "the caller runs ripgrep only when it was found"
    if only is not None:
        try:
            with collector_paused():
                return _named(ctx, rg, rel, target, query, shape, fallback, only)
        except Stale:
            pass  # the tree changed between two pages: walk instead
    for attempt in range(_SWAP_RETRIES):
        current = target if attempt == 0 else open_target(ctx, rel, shown)
        try:
            with collector_paused():
                return _walked(ctx, rg, rel, current, query, shape, fallback)
        except ToolError as err:
            if not _lost_root(err, rel):
                raise
        finally:
            if current is not target:
                os.close(current.fd)
    os.close(open_target(ctx, rel, shown).fd)  # still gone or leading out: that error
    raise ToolError("file_not_found", f"The directory kept being moved or replaced while "
                    f"searching it: {shown}. Retry when it stays in place.", path=shown)


def _lost_root(err: ToolError, rel: str) -> bool:
    """rg could not open the directory it was given (by name, beneath the root): it was
    renamed away or swapped for a symlink (refused by Landlock) after we opened it."""
    return err.code == "internal_error" and str(err.details.get("reason", "")).startswith(
        f"{rel}: ")


def _kind(shape: Shape, query: Query) -> str:
    """What rg prints for this reply (see the module doc)."""
    if shape.mode == "content" or shape.mode == "count" and query.multiline:
        return "lines"
    return "counts"


def _sorted(shape: Shape) -> bool:
    """Whether rg runs with --sort=path (and may stop early) rather than on all threads."""
    return shape.max_results < UNSORTED_FROM


def _argv(ctx: ToolContext, rg: str, query: Query, shape: Shape, kind: str,
          sort: bool) -> list[str]:
    return search_args(rg, query, pcre2=ctx.rg_has_pcre2, kind=kind,
                       context=(shape.before, shape.after) if shape.wants_text else (0, 0),
                       sort=sort)


def _walked(ctx: ToolContext, rg: str, rel: str, target: Target, query: Query,
            shape: Shape, fallback: Fallback) -> dict[str, Any]:
    walk = walk_args(query, rel, ctx.ws.deny.rg_excludes())
    sort, kind = _sorted(shape), _kind(shape, query) if target.is_dir else "lines"
    argv = _argv(ctx, rg, query, shape, kind, sort) + walk
    if not target.is_dir:
        argv[-1] = f"/proc/self/fd/{target.fd}"  # rg reads it through our descriptor
    ignore_files = ignore_files_above(ctx, rel)
    try:
        ruleset = landlock.ruleset([target.fd, *ignore_files], rg)
        try:
            reader = Reader(ctx, rel, target.fd, shape, sort)
            failures = Failures()
            run(ctx, argv, reader, kind, ruleset, query.needs_pcre2, fallback, failures,
                wide=not sort)
            results = reader.results(reader.bound())
            if not target.is_dir:
                searched = 1
            elif (past := decisive(results, shape)) is not None:
                searched = _covered_through(ctx, rel, query, results[past]["path"])
            elif reader.searches is None or not ctx.ws.deny.all_in_rg():
                searched = count_files(ctx, [rg, "--files", "--null", "--no-config", *walk],
                                       target.fd, ruleset, reader.denied)
            else:
                searched = reader.searches
            return _reply(results, shape, searched, failures)
        finally:
            if ruleset is not None:
                os.close(ruleset)
    finally:
        for fd in ignore_files:
            os.close(fd)


def _covered_through(ctx: ToolContext, rel: str, query: Query, last: str) -> int:
    """How many files the query covers up to `last` in path order: the walk, stopped
    there (a search that stopped early read no further)."""
    walk = walk_files(ctx, rel, include_hidden=query.include_hidden,
                      include_ignored=query.include_ignored, globs=query.globs,
                      types=FileTypes(query.types) if query.types else None)
    return sum(1 for _ in itertools.takewhile(lambda found: found[0] <= last, walk))


def _named(ctx: ToolContext, rg: str, rel: str, target: Target, query: Query,
           shape: Shape, fallback: Fallback, only: Selection) -> dict[str, Any]:
    """rg over the selection's files by name, a page at a time (see the module doc)."""
    if only.first is None or not only.first.files:
        ctx.ws.ensure_present()  # as rg would: it cannot start in a deleted workspace
        return assemble([], shape, "ripgrep", only.total)
    kind = _kind(shape, query)
    # lines that stop early: rg reads the page in its order and is stopped in it
    sort = _sorted(shape) and kind == "lines"
    ruleset = landlock.ruleset([target.fd], rg)
    try:
        reader = Reader(ctx, rel, target.fd, shape, sort)
        failures = Failures()
        kept: dict[str, int] = {}  # the place of each file in the reply so far
        for page in pages(ctx, only, ahead=not _sorted(shape)):
            runs = [("lines", page.files)] if kind == "lines" else [
                ("counts" if shape.mode == "count" else "names", page.clean_files),
                ("lines", page.unknown_files)]
            for run_kind, files in runs:
                if files:
                    argv = _argv(ctx, rg, query, shape, run_kind, sort) + ["--", *files]
                    run(ctx, argv, reader, run_kind, ruleset, query.needs_pcre2,
                        fallback, failures, wide=not sort)
            where = dict(zip(page.files, page.positions))
            kept = {r["path"]: kept[r["path"]] if r["path"] in kept else where[r["path"]]
                    for r in reader.done}
            if reader.stopped or reader.count >= reader.needed:
                break
    finally:
        if ruleset is not None:
            os.close(ruleset)
    results = reader.results(reader.bound())
    past = decisive(results, shape)
    searched = only.total if past is None else kept[results[past]["path"]] + 1
    return _reply(results, shape, searched, failures)


def _reply(results: list[dict[str, Any]], shape: Shape, searched: int,
           failures: Failures) -> dict[str, Any]:
    found = assemble(results, shape, "ripgrep", searched)
    if failures.count:
        found["fallback"] = fallback_note(failures.count, failures.named or [])
    return found
