"""code.outline: one file's symbols as a tree, `depth` levels deep, with how many there are
in all and how many syntax errors the parse met (docs/protocol.md, "Code by structure")."""

from __future__ import annotations

from typing import Any

from chorus_tools.tools.code.bounds import Budget, Skipped
from chorus_tools.tools.code.languages import language_of
from chorus_tools.tools.code.parse import errors
from chorus_tools.tools.code.source import read_code
from chorus_tools.tools.code.symbols import HEAD_BYTES, Symbol, supported, symbols, unsupported
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.patch.syntax import problems
from chorus_tools.tools.read.text import decode


def outline(ctx: ToolContext, path: str, depth: int = 2,
            max_results: int = 1000) -> dict[str, Any]:
    rel = ctx.ws.rel(path)
    data = read_code(ctx, rel, path)
    language = language_of(rel, data[:HEAD_BYTES])
    grammar = supported(rel, data)
    if grammar is None or language is None:
        raise unsupported(path)
    found = symbols(rel, data)
    tree, kept, within = nest(found, depth, max_results)
    return {"path": rel, "language": language.name, "symbols": tree, "total": len(found),
            "truncated": kept < within, "syntax_errors": _syntax_errors(ctx, grammar, data, rel)}


def _syntax_errors(ctx: ToolContext, grammar: str, data: bytes, rel: str) -> int:
    """How many syntax errors the file holds. For Python, the ones its diagnostics count
    (docs/protocol.md, Diagnostics: what the compiler refuses beyond the grammar, such as
    `return` outside a function, is a syntax error too, and a lone CR ends a line); past
    the diagnostics' bounds, and for the other languages, the parse tree's."""
    if grammar == "python":
        try:
            return len(problems("python", rel, decode(data)[0],
                                Budget(ctx.limits.syntax_max_bytes, ctx.limits.syntax_timeout)))
        except Skipped:
            pass
    return errors(grammar, data, rel).count


def nest(found: list[Symbol], depth: int,
         limit: int) -> tuple[list[dict[str, Any]], int, int]:
    """The symbols `depth` levels deep as records with `children` (only where a symbol
    has some), in file order, at most `limit` of them; how many were kept, and how many
    lie within `depth`."""
    roots: list[dict[str, Any]] = []
    records: dict[int, dict[str, Any]] = {}
    levels: list[int] = []
    kept = within = 0
    for i, s in enumerate(found):
        level = 0 if s.parent < 0 else levels[s.parent] + 1
        levels.append(level)
        if level >= depth:
            continue
        within += 1
        if kept >= limit or (s.parent >= 0 and s.parent not in records):
            continue
        record = records[i] = s.record()
        kept += 1
        if s.parent < 0:
            roots.append(record)
        else:
            records[s.parent].setdefault("children", []).append(record)
    return roots, kept, within
