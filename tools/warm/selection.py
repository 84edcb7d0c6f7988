"""A search's files from the warm tree (tools/warm/answers.py `select`), narrowed by the
content index when the pattern allows: the engine still decides every match, so the
reply is the one an unindexed search gives; only files that cannot match are skipped."""

from __future__ import annotations

from typing import NamedTuple

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.warm.client import ask
from chorus_tools.tools.warm.grams import query_grams

MAX_ARGV_BYTES = 512 * 1024  # candidates passed to rg by name; more: rg walks itself


class Selection(NamedTuple):
    total: int  # files the query covers: the reply's files_searched
    files: list[str] | None  # to search, in path order; None: not asked for, not narrowed
    narrowed: bool  # `files` are the index's candidates, not every file covered


def warm_selection(ctx: ToolContext, rel: str, pattern: str, *, needs_pcre2: bool,
                   literal: bool,
                   case_sensitive: bool, multiline: bool, globs: list[str],
                   types: tuple[str, ...], include_hidden: bool, include_ignored: bool,
                   want_files: bool) -> Selection | None:
    """The warm tree's selection for a search of directory `rel`, or None (walk)."""
    if ctx.warm is None:
        return None
    grams = query_grams(pattern, literal=literal, case_sensitive=case_sensitive,
                        multiline=multiline, needs_pcre2=needs_pcre2)
    found = ask(ctx, "select", rel=rel, include_hidden=include_hidden,
                include_ignored=include_ignored, globs=globs, types=types, grams=grams,
                want_files=want_files)
    if found is None:
        return None
    chosen = Selection(found["total"], found["files"], found["narrowed"])
    if chosen.narrowed and not want_files and sum(
            len(p) + 1 for p in chosen.files or ()) > MAX_ARGV_BYTES:
        return Selection(chosen.total, None, False)
    return chosen
