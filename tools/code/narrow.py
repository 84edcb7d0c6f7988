"""Which files a workspace-wide code call parses: those file.search would search beneath
`path` (its globs, hidden and ignore rules, --deny) that contain the name asked about.

The search is file.search itself (files_with_matches, a fixed string), so the selection is
its selection, warm tree and content index included. Only where that search would split
across the pool (no ripgrep, a large tree) are the files walked and read here, with the
same walker. A file whose language no parser here reads is not parsed: it is counted as
skipped.
"""

from __future__ import annotations

from typing import NamedTuple

from chorus_tools.tools.code.source import read_candidate
from chorus_tools.tools.code.symbols import supported
from chorus_tools.tools.code.languages import language_of
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.search.search import search
from chorus_tools.tools.walk.fanout import FanOut
from chorus_tools.tools.walk.walk import walk_files

EVERY = 1 << 62  # max_results that keeps every file


class Candidates(NamedTuple):
    files: list[str]  # to parse, in path order
    skipped: int  # holding the name, in a language no parser here reads


def candidates(ctx: ToolContext, path: str, needle: str, *, case_sensitive: bool,
               globs: list[str], include_hidden: bool,
               include_ignored: bool) -> Candidates:
    """The files beneath `path` (a directory or one file) that may hold `needle`."""
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


def split(files: list[str]) -> Candidates:
    """Parse those a parser here may read; count those it surely cannot (by their name:
    a file without an extension may still be a script its first line names)."""
    parsed = [f for f in files if supported(f) is not None or language_of(f) is None
              and "." not in f.rsplit("/", 1)[-1]]
    return Candidates(parsed, len(files) - len(parsed))


def _walked(ctx: ToolContext, path: str, needle: str, case_sensitive: bool, globs: list[str],
            include_hidden: bool, include_ignored: bool) -> list[str]:
    rel = ctx.ws.rel(path, allow_empty=True)
    wanted = needle if case_sensitive else needle.lower()
    found = []
    for file, _ in walk_files(ctx, rel, include_hidden=include_hidden,
                              include_ignored=include_ignored, globs=globs):
        data = read_candidate(ctx, file)
        text = None if data is None else data.decode("utf-8", "replace")
        if text is not None and wanted in (text if case_sensitive else text.lower()):
            found.append(file)
    return found
