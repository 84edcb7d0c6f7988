"""file.search: one query, two engines (ripgrep, or the `regex` module across the workers)
that give the same reply on the same tree, apart from `engine`.

The pattern is read once (tools.search.syntax) for what both engines must agree on: a
literal line break without multiline is refused here, before either runs. ripgrep runs
when there is one, unless the pattern needs PCRE2 and this ripgrep lacks it; the python
engine searches small trees inline and splits larger ones across the pool (a FanOut).

`files_searched` counts the files the query covers (binary ones included, as ripgrep's
`searches` does): the python engine's file list, ripgrep's own count.
"""

from __future__ import annotations

import dataclasses
import math
import os
import stat
from typing import Any

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.fanout import FanOut
from chorus_tools.tools.walk.globs import GlobError, SearchGlobs, invalid_pattern as invalid_glob
from chorus_tools.tools.search import pyengine, ripgrep
from chorus_tools.tools.search.rg_errors import NeedsPcre2
from chorus_tools.tools.search.filetypes import FileTypes
from chorus_tools.tools.search.results import Shape, assemble
from chorus_tools.tools.search.syntax import analyse, compile_python
from chorus_tools.tools.walk.walk import walk_files

INLINE_FILES = 32  # up to this many files the python engine runs in the calling worker
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
    is_dir = _is_dir(ctx, rel, path)
    shape = Shape(output_mode, context_lines if before_context is None else before_context,
                  context_lines if after_context is None else after_context,
                  multiline and pat.may_match_newline, max_results, ctx.limits.max_line_chars)
    query = {"pattern": dataclasses.asdict(pat), "case_sensitive": case_sensitive,
             "multiline": multiline, "shape": dataclasses.asdict(shape)}
    if ctx.search_engine != "python" and ctx.rg_path is not None and _argv_safe(
            pattern, *globs) and not (
            pat.needs_pcre2 and not ctx.rg_has_pcre2):
        try:
            return ripgrep.search(
                ctx, rel, path, pattern, literal=literal, needs_pcre2=pat.needs_pcre2,
                case_sensitive=case_sensitive, multiline=multiline, globs=globs,
                types=types, include_hidden=include_hidden,
                include_ignored=include_ignored, shape=shape,
                fallback=lambda files: pyengine.search_part(ctx, files, **query)["results"])
        except NeedsPcre2:
            pass  # a PCRE-only feature the pattern reading missed: the python engine has it
    compile_python(pat, case_sensitive=case_sensitive)  # refuse a bad pattern before walking
    files = [p for p, _ in walk_files(ctx, rel, include_hidden=include_hidden,
                                      include_ignored=include_ignored, globs=globs,
                                      types=file_types)] if is_dir else [rel]
    return _python(files, query, shape, ctx)


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


def _is_dir(ctx: ToolContext, rel: str, shown: str) -> bool:
    """True for a directory, False for a regular file; other kinds are refused."""
    fd = ctx.ws.open(rel, os.O_PATH, shown=shown)
    try:
        mode = os.fstat(fd).st_mode
    finally:
        os.close(fd)
    if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
        return stat.S_ISDIR(mode)
    raise ToolError("not_a_regular_file",
                    f"Cannot search {shown}: it is a FIFO, socket or device. Search a "
                    "directory or a regular file.", path=shown)


def _python(files: list[str], query: dict[str, Any], shape: Shape,
            ctx: ToolContext) -> dict[str, Any] | FanOut:
    if len(files) <= INLINE_FILES:
        part = pyengine.search_part(ctx, files, **query)
        return assemble(part["results"], shape, "python", len(files))
    chunks = CHUNKS_PER_WORKER * ctx.workers
    size = max(INLINE_FILES // 2, math.ceil(len(files) / chunks))
    parts = [{"files": files[i:i + size], **query} for i in range(0, len(files), size)]
    return FanOut(part="chorus_tools.tools.search.pyengine:search_part", parts=parts,
                  merge="chorus_tools.tools.search.pyengine:merge",
                  args={"shape": query["shape"], "files": len(files)},
                  sizes=[len(p["files"]) for p in parts], unit="files searched")
