"""file.search: one query, two engines (ripgrep, or the `regex` module across the workers)
that give the same reply on the same tree, apart from `engine`.

The pattern is read once (tools.search.syntax) for what both engines must agree on: a
literal line break without multiline is refused here, before either runs. ripgrep runs
when there is one, unless the pattern needs PCRE2 and this ripgrep lacks it; the python
engine searches small trees inline and splits larger ones across the pool (a FanOut).

`files_searched` counts the files the query covers (binary ones included, as ripgrep's
`searches` does): the python engine's file list, ripgrep's own count; a truncated reply
counts them up to the file holding the first item past `max_results` (results.decisive),
so both engines, warm or walking, say the same.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Iterator
from typing import Any

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.fanout import FanOut, shared
from chorus_tools.tools.walk.globs import GlobError, SearchGlobs, invalid_pattern as invalid_glob
from chorus_tools.tools.search import pyengine, ripgrep
from chorus_tools.tools.search.rg_errors import NeedsPcre2
from chorus_tools.tools.search.filetypes import FileTypes
from chorus_tools.tools.search.results import Merge, Shape, have, python_reply
from chorus_tools.tools.search.rg_run import Query
from chorus_tools.tools.search.syntax import Pattern, analyse, compile_python
from chorus_tools.tools.search.target import open_target
from chorus_tools.tools.walk.walk import walk_files
from chorus_tools.tools.warm.selection import warm_selection

INLINE_FILES = 32  # up to this many files the python engine runs in the calling worker
FIRST_FILES = 64  # the first run of files a search that may stop early searches itself
SOLO_FILES = 512  # its last such run: past it, the rest is listed and split
CHUNKS_PER_WORKER = 4


def search(ctx: ToolContext, pattern: str, path: str = ".", glob: str | list[str] | None = None,
           case_sensitive: bool = True, literal: bool = False, context_lines: int = 0,
           before_context: int | None = None, after_context: int | None = None,
           type: str | list[str] | None = None, max_results: int = 100,
           output_mode: str = "content", multiline: bool = False,
           include_hidden: bool = False, include_ignored: bool = False) -> dict[str, Any] | FanOut:
    """Search file contents beneath `path` (a directory or one file) in path order.
    `before_context`/`after_context` override `context_lines` on their side."""
    rel = ctx.ws.rel(path, allow_empty=True)  # optional, as in file.list: "" is the root
    globs = [glob] if isinstance(glob, str) else list(glob or [])
    types = tuple([type] if isinstance(type, str) else type or ())
    file_types = FileTypes(types) if types else None
    try:
        SearchGlobs(globs)
    except GlobError as exc:
        raise invalid_glob(exc, "glob") from None
    pat = analyse(pattern, literal=literal)
    if pat.literal_newline and not multiline:
        raise ToolError("invalid_pattern",
                        "The pattern contains a line break (\\n) but multiline is off. Set "
                        "multiline: true to match across lines, or remove the \\n.",
                        param="pattern", reason="the literal \"\\n\" is not allowed in a "
                        "regex without multiline")
    shape = Shape(output_mode, context_lines if before_context is None else before_context,
                  context_lines if after_context is None else after_context,
                  multiline and pat.may_match_newline, max_results, ctx.limits.max_line_chars)
    use_rg = ctx.search_engine != "python" and ctx.rg_path is not None and _argv_safe(
        pattern, *globs) and not (pat.needs_pcre2 and not ctx.rg_has_pcre2)
    query = Query(pattern, literal, pat.needs_pcre2, case_sensitive, multiline, globs, types,
                  include_hidden, include_ignored)
    target = open_target(ctx, rel, path)
    try:
        chosen = warm_selection(ctx, rel, pattern, needs_pcre2=pat.needs_pcre2,
                                literal=literal, case_sensitive=case_sensitive,
                                multiline=multiline, globs=globs, types=types,
                                include_hidden=include_hidden, include_ignored=include_ignored,
                                want_files=not use_rg, needed=max_results + 1,
                                every=max_results >= ripgrep.UNSORTED_FROM
                                ) if target.is_dir else None
        if use_rg:
            try:
                return ripgrep.search(
                    ctx, rel, path, target, query, shape=shape,
                    only=chosen if chosen and chosen.narrowed else None,
                    fallback=lambda files: pyengine.search_part(
                        ctx, files, pat, case_sensitive, multiline, shape)["results"])
            except NeedsPcre2:
                pass  # a PCRE-only feature the pattern reading missed: the python engine has it
    finally:
        os.close(target.fd)
    compile_python(pat, case_sensitive=case_sensitive)  # refuse a bad pattern before walking
    if chosen is not None and chosen.files is not None:
        return _python(iter(chosen.files), chosen.total, chosen.positions, pat,
                       case_sensitive, multiline, shape, ctx)
    if not target.is_dir:
        return _python(iter([rel]), 1, None, pat, case_sensitive, multiline, shape, ctx)
    walk = (p for p, _ in walk_files(ctx, rel, include_hidden=include_hidden,
                                     include_ignored=include_ignored, globs=globs,
                                     types=file_types))
    return _python(walk, None, None, pat, case_sensitive, multiline, shape, ctx)


def _argv_safe(*texts: str) -> bool:
    """Whether ripgrep's argv can carry these: no NUL, and valid UTF-8 (no lone surrogate,
    which a client can send as a \\ud800 escape). Others run on the python engine, where
    they mean the same (found by fuzzing: they were internal_error)."""
    try:
        for text in texts:
            text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return not any("\0" in text for text in texts)


def _python(files: Iterator[str], total: int | None, positions: list[int] | None,
            pat: Pattern, case_sensitive: bool, multiline: bool, shape: Shape,
            ctx: ToolContext) -> dict[str, Any] | FanOut:
    """Search `files` (in path order; the query covers `total` files, or as many as
    `files` yields: the index may have left out some that cannot match, and
    `positions` then gives each one's place among them). A search that may stop early
    searches its first files here, in growing runs (FIRST_FILES, twice that, ... up to
    SOLO_FILES), before listing the rest: one that finds its results there reads no
    further (docs/protocol.md, file.search). The rest is split across the pool."""
    searched, results, at = 0, [], []
    size = FIRST_FILES if shape.max_results < ripgrep.UNSORTED_FROM else 0
    while 0 < size <= SOLO_FILES:
        run = list(itertools.islice(files, size))
        part = pyengine.search_part(ctx, run, pat, case_sensitive, multiline, shape,
                                    searched, _places(positions, searched, len(run)))
        results += part["results"]
        at += part["at"]
        searched += len(run)
        if have(results, shape) > shape.max_results or len(run) < size:
            return python_reply(results, at, shape, searched if total is None else total)
        size *= 2
    rest = list(files)
    total = searched + len(rest) if total is None else total
    seed = {"results": results, "at": at}
    if len(rest) <= INLINE_FILES:
        merge = Merge({"shape": shape, "files": total, "seed": seed})
        return merge.add(pyengine.search_part(
            ctx, rest, pat, case_sensitive, multiline, shape, searched,
            _places(positions, searched, len(rest)))) or merge.finish()
    chunks = CHUNKS_PER_WORKER * ctx.workers
    size = max(INLINE_FILES // 2, math.ceil(len(rest) / chunks))
    parts = [{"files": rest[i:i + size], "first": searched + i,
              "positions": _places(positions, searched + i, size)}
             for i in range(0, len(rest), size)]
    return FanOut(part="chorus_tools.tools.search.pyengine:search_part", parts=parts,
                  merge="chorus_tools.tools.search.results:Merge",
                  args={"shape": shape, "files": total, "seed": seed},
                  shared=shared(pattern=pat, case_sensitive=case_sensitive,
                                multiline=multiline, shape=shape),
                  sizes=[len(p["files"]) for p in parts], unit="files searched")


def _places(positions: list[int] | None, start: int, count: int) -> list[int] | None:
    return None if positions is None else positions[start:start + count]
