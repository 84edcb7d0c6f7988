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

import functools
import math
import os
from typing import Any

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import CR_ADVICE, MULTILINE_ADVICE, ToolError
from chorus_tools.tools.walk.fanout import FanOut, shared
from chorus_tools.tools.walk.globs import (GlobError, SearchGlobs, beneath,
                                           invalid_pattern as invalid_glob)
from chorus_tools.tools.search import pyengine, ripgrep
from chorus_tools.tools.search.rg_errors import NeedsPcre2
from chorus_tools.tools.search.filetypes import FileTypes
from chorus_tools.tools.search.results import Shape, python_reply
from chorus_tools.tools.search.rg_run import Query
from chorus_tools.tools.search.syntax import Pattern, analyse, compile_python
from chorus_tools.tools.search.target import open_target
from chorus_tools.tools.walk.walk import walk_files
from chorus_tools.tools.warm.selection import warm_selection

INLINE_FILES = 32  # up to this many files the python engine runs in the calling worker
FIRST_FILES = 64  # the first part of a split search that may stop early
CHUNKS_PER_WORKER = 4
# the bytes a pattern or glob may take in ripgrep's argv: one argument (the kernel's
# MAX_ARG_STRLEN, 128 KiB with its NUL, less the `--regexp=` it follows) and all of them
# (a share of ARG_MAX, beside the warm selection's names: tools/warm/selection.py)
MAX_ARG = 128 * 1024 - 32
MAX_ARGS = 512 * 1024


def search(ctx: ToolContext, pattern: str, path: str = ".", glob: str | list[str] | None = None,
           case_sensitive: bool = True, literal: bool = False, context_lines: int = 0,
           before_context: int | None = None, after_context: int | None = None,
           type: str | list[str] | None = None, max_results: int = 100,
           output_mode: str = "content", multiline: bool = False,
           include_hidden: bool = False, include_ignored: bool = False, *,
           globs_in_path: bool = False) -> dict[str, Any] | FanOut:
    """Search file contents beneath `path` (a directory or one file) in path order.
    `before_context`/`after_context` override `context_lines` on their side.
    `globs_in_path`: a glob holding a `/` is relative to `path` (file.search's rule, see
    `file_search`); otherwise to the workspace, as the tool sets' search tools read it."""
    rel = ctx.ws.rel(path, allow_empty=True)  # optional, as in file.list: "" is the root
    globs = [glob] if isinstance(glob, str) else list(glob or [])
    types = tuple([type] if isinstance(type, str) else type or ())
    file_types = FileTypes(types) if types else None
    try:
        SearchGlobs(globs)
    except GlobError as exc:
        raise invalid_glob(exc, "glob") from None
    globs = beneath(rel, globs) if globs_in_path else globs
    pat = analyse(pattern, literal=literal, multiline=multiline)
    if pat.literal_newline and not multiline:
        raise ToolError("invalid_pattern",
                        "The pattern contains a line break (\\n) " + MULTILINE_ADVICE,
                        param="pattern", reason="the literal \"\\n\" is not allowed in a "
                        "regex without multiline")
    if pat.literal_cr and not multiline:  # ripgrep's `--crlf` rule (docs/protocol.md)
        raise ToolError("invalid_pattern",
                        "The pattern contains a carriage return (\\r) " + CR_ADVICE,
                        param="pattern", reason="the literal \"\\r\" is not allowed in a "
                        "regex without multiline")
    shape = Shape(output_mode, context_lines if before_context is None else before_context,
                  context_lines if after_context is None else after_context,
                  multiline and pat.may_match_newline, max_results, ctx.limits.max_line_chars)
    use_rg = ctx.search_engine != "python" and ctx.rg_path is not None and _argv_safe(
        pattern, pat.ripgrep, *globs) and not (pat.needs_pcre2 and not ctx.rg_has_pcre2)
    query = Query(pat.ripgrep, literal, pat.needs_pcre2, case_sensitive, multiline, globs, types,
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
        return _python(chosen.files, chosen.total, chosen.positions, pat, case_sensitive,
                       multiline, shape, ctx)
    files = [p for p, _ in walk_files(ctx, rel, include_hidden=include_hidden,
                                      include_ignored=include_ignored, globs=globs,
                                      types=file_types, strict=True)] if target.is_dir else [rel]
    return _python(files, len(files), None, pat, case_sensitive, multiline, shape, ctx)


def file_search(ctx: ToolContext, *args: Any, **params: Any) -> dict[str, Any] | FanOut:
    """file.search: a glob holding a `/` is matched relative to `path`, as if ripgrep ran
    inside it (docs/protocol.md, file.search); `search` does the rest."""
    return search(ctx, *args, globs_in_path=True, **params)


# rpc.discover reads the defaults from the signature, which this makes search's
functools.update_wrapper(file_search, search, assigned=(), updated=())


def _argv_safe(*texts: str) -> bool:
    """Whether ripgrep's argv can carry these: no NUL, valid UTF-8 (no lone surrogate,
    which a client can send as a \\ud800 escape), each within the kernel's bound on one
    argument and all within a share of the whole argv's (a pattern or glob of 128 KiB
    failed the spawn: E2BIG). Others run on the python engine, where they mean the same
    (found by fuzzing: they were internal_error)."""
    try:
        sizes = [len(text.encode("utf-8")) for text in texts]
    except UnicodeEncodeError:
        return False
    return (not any("\0" in text for text in texts) and max(sizes, default=0) <= MAX_ARG
            and sum(sizes) <= MAX_ARGS)


def _python(files: list[str], total: int, positions: list[int] | None, pat: Pattern,
            case_sensitive: bool, multiline: bool, shape: Shape,
            ctx: ToolContext) -> dict[str, Any] | FanOut:
    """Search `files` (in path order; the query covers `total` files: the index may have
    left out some that cannot match, and `positions` then gives each one's place among
    them). Split across the pool, the first part small: a search that wants few results
    and finds them there has its answer as soon as that part is done, and the parts
    after it are stopped (docs/protocol.md, file.search)."""
    if len(files) <= INLINE_FILES:
        part = pyengine.search_part(ctx, files, pat, case_sensitive, multiline, shape,
                                    positions=positions)
        return python_reply(part["results"], part["at"], shape, total)
    chunks = CHUNKS_PER_WORKER * ctx.workers
    size = max(INLINE_FILES // 2, math.ceil(len(files) / chunks))
    first = min(size, FIRST_FILES) if shape.max_results < ripgrep.UNSORTED_FROM else size
    starts = [0, *range(first, len(files), size)]
    parts = [{"files": files[a:b], "first": a,
              "positions": None if positions is None else positions[a:b]}
             for a, b in zip(starts, [*starts[1:], len(files)])]
    return FanOut(part="chorus_tools.tools.search.pyengine:search_part", parts=parts,
                  merge="chorus_tools.tools.search.results:Merge",
                  args={"shape": shape, "files": total},
                  shared=shared(pattern=pat, case_sensitive=case_sensitive,
                                multiline=multiline, shape=shape),
                  sizes=[len(p["files"]) for p in parts], unit="files searched")
