"""The rows of a warm code.symbols and code.references in their wire shape, and the whole
reply when the warm process knows every file it needs (tools/warm/code_answers.py).

- A reply the warm process can finish alone (no file it does not know, none changed
  since it was parsed) is encoded as JSON once, here (tools/encoded.py): the worker hands
  it on and the server splices it into its response, never unpickling its rows into dicts
  nor encoding them again (that was two thirds of a repeated 160 KB answer's time). One
  orjson refuses (a lone surrogate in a path) goes pickled, as before (client.Pickled).
  Such a reply is kept until the tree changes (Warm.kept, as file.list's and code.map's).
- A use's row is made from the index's offsets and the lines holding the uses shown,
  read once per file and answer in runs (tools/warm/line_table.py); no Occurrence per use.
- A file's symbols by name, for an exact name (what a model asks most): found by one
  look-up instead of a match of every symbol of a 500 KB declaration file.
"""

from __future__ import annotations

import pickle
from collections import OrderedDict
from typing import Any, Hashable

from chorus_tools.tools.code.across import Reply, finished
from chorus_tools.tools.code.find import symbol_rows
from chorus_tools.tools.code.identifiers import KINDS
from chorus_tools.tools.code.query import NameQuery
from chorus_tools.tools.code.symbols import Symbol
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.encoded import encoded
from chorus_tools.tools.warm.client import Pickled
from chorus_tools.tools.warm.line_table import LineTables, Span
from chorus_tools.tools.warm.refs import Uses

Row = tuple[tuple[Any, ...], dict[str, Any]]


def answer(late: set[str], skipped: int, rows: list[Row], total: int,
           reply: Reply, stamp: Hashable) -> dict[str, Any]:
    """The warm process's answer: with files left to parse, the first rows (sorted) for
    the worker to merge with its own; else the whole reply (`reply`), Encoded with the
    tree's `stamp` (or Pickled), as the worker hands it on."""
    if late:
        return {"files": sorted(late), "skipped": skipped, "rows": rows[:reply.max_results],
                "total": total}
    done = finished(reply, [row[1] for row in rows[:reply.max_results]], total, 0, skipped)
    return {"files": [], "skipped": skipped, "rows": [], "total": total,
            "reply": encoded(done, stamp) or Pickled(pickle.dumps(done,
                                                           protocol=pickle.HIGHEST_PROTOCOL))}


def whole(found: dict[str, Any]) -> bool:
    """Whether an answer is the whole reply (one that may be kept as it is)."""
    return found.get("reply") is not None


class ByName:
    """Per file, where each name's symbols are in its list (SymbolIndex.symbols_of), for
    files whose symbols add up to at most `limit`, least recently used out."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.count = 0
        self._kept: OrderedDict[str, tuple[list[Symbol], dict[str, list[int]]]] = \
            OrderedDict()

    def rows(self, rel: str, found: list[Symbol], asked: NameQuery) -> list[Row]:
        """`found`'s (the symbols of `rel`) rows matching `asked`."""
        if asked.match != "exact" or not asked.case_sensitive:
            return symbol_rows(rel, found, asked)
        return symbol_rows(rel, found, asked, self._names(rel, found).get(asked.parts[-1], []))

    def _names(self, rel: str, found: list[Symbol]) -> dict[str, list[int]]:
        kept = self._kept.get(rel)
        if kept is not None and kept[0] is found:
            self._kept.move_to_end(rel)
            return kept[1]
        names: dict[str, list[int]] = {}
        for order, symbol in enumerate(found):
            names.setdefault(symbol.name, []).append(order)
        self.drop(rel)
        if len(found) <= self.limit:
            self._kept[rel] = (found, names)
            self.count += len(found)
            while self.count > self.limit:
                self.drop(next(iter(self._kept)))
        return names

    def drop(self, rel: str) -> None:
        gone = self._kept.pop(rel, None)
        if gone is not None:
            self.count -= len(gone[0])

    def clear(self) -> None:
        self._kept.clear()
        self.count = 0


def reference_rows(ctx: ToolContext, tables: LineTables, rel: str, stamp: int, uses: Uses,
                   holders: tuple[str, ...], context_lines: int) -> list[Row] | None:
    """The rows of `uses` (of one file, in file order), as tools/code/references.py makes
    them; None when the file is no longer the text the index parsed."""
    offsets = uses.offset.tolist()
    read = tables.span(ctx, rel, stamp, offsets, context_lines)
    if read is None:
        return None
    lines, starts, span = read
    width = ctx.limits.max_line_chars
    rows: list[Row] = []
    shown: dict[int, str] = {}  # uses on one line share its text
    for line, start, offset, kind, holder in zip(lines, starts, offsets,
                                                 uses.kind.tolist(), uses.inside.tolist()):
        text = shown.get(line)
        if text is None:
            text = shown[line] = _decoded(span.text[line])
        before = span.text[line][:offset - start]
        column = len(before if before.isascii() else before.decode("utf-8", "replace")) + 1
        record = {"path": rel, "line": line + 1, "column": column, "text": text[:width],
                  "kind": KINDS[kind], "in": holders[holder] if holder >= 0 else ""}
        if context_lines:
            record["before"] = _around(span, max(0, line - context_lines), line, width)
            record["after"] = _around(span, line + 1, line + 1 + context_lines, width)
        rows.append(((rel, line + 1, column), record))
    return rows


def _decoded(line: bytes) -> str:
    return line.rstrip(b"\r").decode("utf-8", "replace")


def _around(span: Span, start: int, end: int, width: int) -> list[str]:
    """Lines start..end-1 (0-based) of the file, as context."""
    return [_decoded(span.text[line])[:width] for line in range(start, min(end, span.count))]
