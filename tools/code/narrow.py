"""Which files a workspace-wide code call parses: those file.search would search beneath
`path` (its globs, hidden and ignore rules, --deny) that contain the name asked about.

With the symbol index (tools/warm/symbol_index.py) the warm process names the files;
without it, the search is file.search itself (files_with_matches, a fixed string), so the
selection is its selection, warm tree and content index included. Only where that search would split
across the pool (no ripgrep, a large tree) are the files walked and read here, with the
same walker. A file whose language no parser here reads is not parsed: it is counted as
skipped.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from chorus_tools.tools.code.source import read_candidate
from chorus_tools.tools.code.symbols import maybe_code
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.encoded import Encoded
from chorus_tools.tools.search.search import search
from chorus_tools.tools.walk.fanout import FanOut
from chorus_tools.tools.walk.walk import walk_files
from chorus_tools.tools.warm.client import Pickled, ask

EVERY = 1 << 62  # max_results that keeps every file


class Candidates(NamedTuple):
    files: list[str]  # to parse, in path order
    skipped: int  # holding the name, in a language no parser here reads
    rows: list[Any] = []  # the warm process's own rows (sort key, record), already cut
    total: int = 0  # how many rows it found in all
    reply: Encoded | Pickled | None = None  # its whole reply, when it needs no file parsed


def candidates(ctx: ToolContext, path: str, needle: str, *, case_sensitive: bool,
               globs: list[str], include_hidden: bool, include_ignored: bool,
               warm: tuple[str, dict[str, Any]]) -> Candidates:
    """The files beneath `path` (a directory or one file) that may hold `needle`: the warm
    process's answer to `warm` (its question and arguments: tools/warm/code_answers.py)
    when it has one, else a search's."""
    if ctx.warm is not None:
        op, args = warm
        known = ask(ctx, op, rel=ctx.ws.rel(path, allow_empty=True), globs=globs, **args)
        if known is not None:
            return split(known["files"], known["skipped"])._replace(
                rows=known.get("rows", []), total=known.get("total", 0),
                reply=known.get("reply"))
    found = search(ctx, pattern=needle, path=path, glob=globs or None, literal=True,
                   case_sensitive=case_sensitive, output_mode="files_with_matches",
                   max_results=EVERY, include_hidden=include_hidden,
                   include_ignored=include_ignored)
    if isinstance(found, FanOut):
        files = _walked(ctx, path, needle, case_sensitive, globs, include_hidden,
                        include_ignored)
    else:
        files = found["files"]
    return split(files)


def split(files: list[str], skipped: int = 0) -> Candidates:
    """Parse those a parser here may read; count those it surely cannot (by their name:
    a file without an extension may still be a script its first line names)."""
    parsed = [f for f in files if maybe_code(f)]
    return Candidates(parsed, skipped + len(files) - len(parsed))


def _walked(ctx: ToolContext, path: str, needle: str, case_sensitive: bool, globs: list[str],
            include_hidden: bool, include_ignored: bool) -> list[str]:
    rel = ctx.ws.rel(path, allow_empty=True)
    wanted = needle if case_sensitive else needle.lower()
    found = []
    for file, _ in walk_files(ctx, rel, include_hidden=include_hidden,
                              include_ignored=include_ignored, globs=globs, strict=True):
        data = read_candidate(ctx, file)
        text = None if data is None else data.decode("utf-8", "replace")
        if text is not None and wanted in (text if case_sensitive else text.lower()):
            found.append(file)
    return found
