"""code.symbols: definitions by name across the workspace (docs/protocol.md, "Code by
structure"). The files are chosen as file.search chooses them and narrowed to those that
contain the name (tools/code/narrow.py); each is parsed, its matching symbols kept. Exact
names come first, then path and line order. Many files are parsed across the pool; with
the symbol index the warm process gives the rows of the files it knows
(tools/warm/code_answers.py) and only the others are parsed here."""

from __future__ import annotations

from typing import Any, Iterable

from chorus_tools.tools.code.across import Reply, parse_across, readable
from chorus_tools.tools.code.narrow import candidates
from chorus_tools.tools.code.query import NameQuery
from chorus_tools.tools.code.symbols import Symbol, symbols
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.encoded import Encoded
from chorus_tools.tools.walk.fanout import FanOut
from chorus_tools.tools.warm.client import Pickled


def find_symbols(ctx: ToolContext, query: str, path: str = ".",
                 glob: str | list[str] | None = None, kind: str | None = None,
                 match: str = "exact", case_sensitive: bool = True, max_results: int = 100,
                 include_hidden: bool = False,
                 include_ignored: bool = False) -> dict[str, Any] | FanOut | Encoded | Pickled:
    asked = NameQuery.read(query, match, case_sensitive, kind)
    chosen = candidates(ctx, path, asked.needle, case_sensitive=case_sensitive,
                        globs=[glob] if isinstance(glob, str) else list(glob or []),
                        include_hidden=include_hidden, include_ignored=include_ignored,
                        warm=("code_symbols", {
                            "include_hidden": include_hidden,
                            "include_ignored": include_ignored, "needle": asked.needle,
                            "wanted": asked.parts[-1], "match": match,
                            "case_sensitive": case_sensitive, "asked": asked,
                            "max_results": max_results}))
    if chosen.reply is not None:  # the warm process's, handed on as it came
        return chosen.reply
    return parse_across(ctx, chosen, "chorus_tools.tools.code.find:symbols_part",
                        Reply("symbols", max_results, "files_parsed"), asked=asked)


def symbols_part(ctx: ToolContext, files: list[str], asked: NameQuery) -> dict[str, Any]:
    """The matching symbols of `files`, as rows the merge sorts."""
    rows = []
    counts: dict[str, int] = {}
    for rel, _, data in readable(ctx, files, counts):
        rows += symbol_rows(rel, symbols(rel, data), asked)
    return {"rows": rows, **counts}


def symbol_rows(rel: str, found: list[Symbol], asked: NameQuery,
                among: Iterable[int] | None = None
                ) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """A file's symbols that match, as the reply's rows with their sort keys; `among`:
    only those at these places in `found` may (the warm process's look-up by name)."""
    picked = enumerate(found) if among is None else ((i, found[i]) for i in among)
    return [((0 if asked.exact(s) else 1, rel, s.line, order), {"path": rel, **s.record()})
            for order, s in picked if asked.matches(s)]
