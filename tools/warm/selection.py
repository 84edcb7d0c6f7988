"""A search's files from the warm tree (tools/warm/answers.py `select`), narrowed by the
content index when the pattern allows: the engine still decides every match, so the
reply is the one an unindexed search gives; only files that cannot match are skipped.

ripgrep takes the candidates by name a page at a time, in path order, so that a search
that wants few results asks for few names and stops early, and one that wants every
result passes any number of names in several runs. Each candidate carries its place
among the files the query covers (for `files_searched` when the reply stops early) and
whether the index read it and found no NUL in it (`clean`: rg's `-c` and `-l` may count
it, tools/search/ripgrep.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.warm.client import ask
from chorus_tools.tools.warm.grams import query_grams

# names passed to one rg: Linux allows a quarter of the stack limit of argv (2 MiB under
# the usual 8 MiB), and rg's own options and the environment take a little
MAX_ARGV_BYTES = min(1024 * 1024, os.sysconf("SC_ARG_MAX") // 2)
FIRST_PAGE = 256  # files of a search's first page: a few ms of rg when results abound
# rg reads a file named on its command line ~1.2-1.7x slower than one it walks to (a stat
# more, no directory at a time): a search of every match names the candidates only when
# they are fewer than this share of the files covered, else rg walks
NAMED_SHARE = 0.5


class Stale(Exception):
    """The tree changed between two pages of one selection: walk instead."""


class Page(NamedTuple):
    files: list[str]  # in path order
    positions: list[int]  # each file's place among the files the query covers
    clean: bytes  # per file: 1 when the index read it and found no NUL in it

    @property
    def clean_files(self) -> list[str]:
        return [f for f, c in zip(self.files, self.clean) if c]

    @property
    def unknown_files(self) -> list[str]:
        return [f for f, c in zip(self.files, self.clean) if not c]


class Selection(NamedTuple):
    total: int  # files the query covers: the reply's files_searched
    files: list[str] | None  # to search, in path order; None: not asked for, not narrowed
    narrowed: bool  # `files` are the index's candidates, not every file covered
    positions: list[int] | None = None  # each file's place among those covered (None:
    # `files` are every file covered, each at its index)
    first: Page | None = None  # ripgrep's first page of candidates (`files` is None)
    key: int | None = None  # the warm process's name for the candidates, for more pages


def warm_selection(ctx: ToolContext, rel: str, pattern: str, *, needs_pcre2: bool,
                   literal: bool,
                   case_sensitive: bool, multiline: bool, globs: list[str],
                   types: tuple[str, ...], include_hidden: bool, include_ignored: bool,
                   want_files: bool, needed: int, every: bool) -> Selection | None:
    """The warm tree's selection for a search of directory `rel`, or None (walk).
    `want_files`: every file at once (the python engine); else the index's candidates
    come a page at a time (`pages`: the first with this answer, sized for `needed`
    results, or for `every` one), and a selection it did not narrow has none."""
    if ctx.warm is None:
        return None
    grams = query_grams(pattern, literal=literal, case_sensitive=case_sensitive,
                        multiline=multiline, needs_pcre2=needs_pcre2)
    found = ask(ctx, "select", rel=rel, include_hidden=include_hidden,
                include_ignored=include_ignored, globs=globs, types=types, grams=grams,
                want_files=want_files, page=None if want_files else _page_size(needed, every),
                max_bytes=MAX_ARGV_BYTES, share=NAMED_SHARE if every and not want_files
                else 1.0)
    if found is None:
        return None
    first = found.get("page")
    return Selection(found["total"], found["files"], found["narrowed"],
                     found.get("positions"), first and Page(**first), found.get("key"))


def _page_size(needed: int, every: bool) -> int:
    return MAX_ARGV_BYTES if every else max(FIRST_PAGE, 2 * needed)


def pages(ctx: ToolContext, chosen: Selection, ahead: bool) -> Iterator[Page]:
    """The selection's candidates a page at a time, in path order: the first page came
    with the selection, each next one is twice as large, up to MAX_ARGV_BYTES of names;
    `ahead` (a search that reads them all): each next page is asked for while the caller
    searches this one. Raises Stale when the tree changed meanwhile."""
    page, start = chosen.first, 0
    asking = ThreadPoolExecutor(1) if ahead else None
    try:
        while page is not None and page.files:
            start += len(page.files)
            more = {"key": chosen.key, "start": start, "count": 2 * len(page.files),
                    "max_bytes": MAX_ARGV_BYTES}
            coming = asking.submit(ask, ctx, "page", **more) if asking else None
            yield page
            found = coming.result() if coming else ask(ctx, "page", **more)
            if found is None:
                raise Stale
            page = Page(**found)
    finally:
        if asking is not None:
            asking.shutdown()
