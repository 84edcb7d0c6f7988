"""The `gemini` set's tools that read many files: `grep_search` (Gemini CLI's ripgrep
declaration, the superset of its two) and `read_many_files`, answering in Gemini CLI's
texts (grep-utils.ts formatGrepResults, read-many-files.ts). See gemini.py for the
version followed.

`grep_search` is case-insensitive unless `case_sensitive` (the harness's default);
`exclude_pattern` drops matching lines whose text it matches; `max_matches_per_file` cuts
each file's matches within the `total_max_matches` (default 100) the core returned.
Gemini CLI's automatic extra context for few matches is not added: the answer holds what
was asked for.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import regex

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.dialects.common import then, window
from chorus_tools.tools.dialects.gemini import MAX_LINE, plain_lines
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.read.read import read
from chorus_tools.tools.search.search import search
from chorus_tools.tools.walk.fanout import FanOut
from chorus_tools.tools.walk.listing import list_files

TOTAL_MAX = 100
DEFAULT_EXCLUDES = ["**/node_modules/**", "**/.git/**", "**/bower_components/**",
                    "**/.svn/**", "**/.hg/**"]  # Gemini CLI's COMMON_IGNORE_PATTERNS
MANY_LINES = 2000  # lines read_many_files shows of each file
MANY_FILES = 500  # files it reads at most
_END = "\n--- End of content ---"


def grep_search_tool(ctx: ToolContext, pattern: str, dir_path: str = ".",
                     include_pattern: str | None = None, exclude_pattern: str | None = None,
                     names_only: bool = False, case_sensitive: bool = False,
                     fixed_strings: bool = False, context: int = 0, after: int | None = None,
                     before: int | None = None, no_ignore: bool = False,
                     max_matches_per_file: int | None = None,
                     total_max_matches: int = TOTAL_MAX) -> dict[str, Any] | FanOut:
    if exclude_pattern is not None:
        _compiled(exclude_pattern)  # refused here, before any file is searched
    # names only show no lines, so they ask for none around a match (the lines are still
    # searched when exclude_pattern or a per-file cap must look at them)
    above = 0 if names_only else context if before is None else before
    below = 0 if names_only else context if after is None else after
    files_only = names_only and exclude_pattern is None and not max_matches_per_file
    found = search_core(ctx, pattern, dir_path, include_pattern, case_sensitive,
                        fixed_strings, above, below, no_ignore, total_max_matches, files_only)
    return then(found, "chorus_tools.tools.dialects.gemini_search:grep_result",
                pattern=pattern, where=ctx.ws.rel(dir_path, allow_empty=True),
                include=include_pattern,
                exclude=exclude_pattern, names_only=names_only, before=above,
                context=bool(above or below), per_file=max_matches_per_file,
                total=total_max_matches)


def search_core(ctx: ToolContext, pattern: str, dir_path: str, include: str | None,
                case_sensitive: bool, literal: bool, above: int, below: int,
                no_ignore: bool, total: int, files_only: bool) -> dict[str, Any] | FanOut:
    """The core search, its errors in this set's words."""
    try:
        return search(ctx, pattern, path=dir_path, glob=include, literal=literal,
                      case_sensitive=case_sensitive, before_context=above,
                      after_context=below, include_ignored=no_ignore, max_results=total,
                      output_mode="files_with_matches" if files_only else "content")
    except ToolError as err:
        if err.code == "file_not_found":
            raise err.saying(f"Search path does not exist {dir_path}",
                             own_words=True) from None
        raise


def _compiled(exclude: str) -> regex.Pattern[str]:
    try:
        return regex.compile(exclude)
    except (regex.error, OverflowError, ValueError, RecursionError) as exc:
        # RecursionError: the regex module's parser recurses per group (tools/search/syntax)
        reason = ("it nests groups too deeply" if isinstance(exc, RecursionError)
                  else str(exc))
        raise ToolError("invalid_pattern", f"exclude_pattern does not compile: {reason}",
                        param="exclude_pattern", reason=reason) from None


def grep_result(found: dict[str, Any], pattern: str, where: str, include: str | None,
                exclude: str | None, names_only: bool, before: int, context: bool,
                per_file: int | None, total: int) -> dict[str, Any]:
    """Gemini CLI's answer: per file, `L<n>: text` for a match and `L<n>- text` for
    context, files between `---` lines."""
    dropped = _compiled(exclude) if exclude is not None else None
    by_file: dict[str, dict[int, tuple[str, str]]] = {}
    counts: dict[str, int] = {}
    for path in found.get("files", []):
        by_file[path] = {}
        counts[path] = 1
    for m in found.get("matches", []):
        above, line, below = window(m, before, context)
        if dropped is not None and dropped.search(line):
            continue
        if per_file and counts.get(m["path"], 0) >= per_file:
            continue
        counts[m["path"]] = counts.get(m["path"], 0) + 1
        lines = by_file.setdefault(m["path"], {})
        lines[m["line"]] = (":", line)
        for n, text in zip(range(m["line"] - len(above), m["line"]), above):
            lines.setdefault(n, ("-", text))
        for n, text in zip(range(m["line"] + 1, m["line"] + 1 + len(below)), below):
            lines.setdefault(n, ("-", text))
    matched = sum(counts.values())
    place = f'for pattern "{pattern}" in path "{where}"' + (
        f' (filter: "{include}")' if include else "")
    limited = (f" (results limited to {total} matches for performance)"
               if found["truncated"] else "")
    if not matched:
        output = f"No matches found {place}."
    elif names_only:
        output = (f"Found {len(by_file)} files with matches {place}{limited}:\n"
                  + "\n".join(sorted(by_file)))
    else:
        blocks = []
        for path, lines in by_file.items():
            shown = [f"L{n}{sep} {_cut(text.rstrip())}"
                     for n, (sep, text) in sorted(lines.items())]
            blocks.append(f"File: {path}\n" + "\n".join(shown) + "\n---")
        term = "match" if matched == 1 else "matches"
        output = f"Found {matched} {term} {place}{limited}:\n---\n" + "\n".join(blocks)
    return {"output": output, "files": list(by_file), "matches": matched,
            "truncated": found["truncated"], "engine": found["engine"]}


def _cut(text: str) -> str:
    return text[:MAX_LINE] + "... [truncated]" if len(text) > MAX_LINE else text


def read_many_files_tool(ctx: ToolContext, include: list[str],
                         exclude: list[str] | None = None, recursive: bool = True,
                         useDefaultExcludes: bool = True,
                         file_filtering_options: dict[str, bool] | None = None
                         ) -> dict[str, Any]:
    """The text files matching `include` (globs, files or directories), each under a
    `--- path ---` line, then `--- End of content ---`. Binary files are skipped."""
    del recursive  # `**` in the globs decides, as in Gemini CLI
    options = file_filtering_options or {}
    excludes = [*(exclude or []), *(DEFAULT_EXCLUDES if useDefaultExcludes else [])]
    alone = dataclasses.replace(ctx, workers=1)  # listed here: the files are read next
    paths: dict[str, None] = {}
    for entry in include:
        pattern = entry.rstrip("/") + "/**" if entry.endswith("/") else entry
        listed = list_files(alone, ".", pattern=pattern.removeprefix("./"),
                            exclude=excludes or None,
                            include_ignored=not options.get("respect_git_ignore", True),
                            max_results=MANY_FILES + 1)
        assert not isinstance(listed, FanOut)  # one worker's context never splits
        paths.update((f["path"], None) for f in listed["files"] if f["type"] == "file")
    parts, read_paths, skipped = [], [], []
    budget = ctx.limits.max_read_bytes * 4
    for path in sorted(paths)[:MANY_FILES]:
        text, reason = _text_of(ctx, path)
        if text is None or budget - len(text) < 0:
            skipped.append({"path": path, "reason": reason or "output limit reached"})
            continue
        budget -= len(text)
        parts.append(f"--- {path} ---\n\n{text}\n\n")
        read_paths.append(path)
    skipped += [{"path": p, "reason": "file limit reached"} for p in sorted(paths)[MANY_FILES:]]
    output = ("".join(parts) + _END if parts else
              "No files matching the criteria were found or all were skipped.")
    return {"output": output, "files": read_paths, "skipped": skipped}


def _text_of(ctx: ToolContext, path: str) -> tuple[str | None, str | None]:
    """A file's first MANY_LINES lines as plain text, or None and why it was skipped."""
    try:
        got = read(ctx, path, limit=MANY_LINES, raw=True)
    except ToolError as err:
        return None, err.code
    if "image" in got:
        return None, "image (read it with read_file)"
    lines, cut = plain_lines(got["content"])
    text = "\n".join(lines)
    if got["truncated"] or cut:
        text = ("[WARNING: This file was truncated. To view the full content, use the "
                f"'read_file' tool on this specific file.]\n\n{text}")
    return text, None
