"""Where a name occurs as an identifier in one file, and how it is used there: a `call`,
an `import`, a `type`, a `definition` (a symbol's own name) or another `reference`; the
parser decides, so text in strings and comments never counts (docs/protocol.md, "Code by
structure"). The file's identifier table (tools/code/identifiers.py) says which tokens
are the name and how each is used; this module turns a token's offset into the line,
column and text a reply shows, for the walking path and the warm process alike.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from chorus_tools.tools.code.bounds import Budget
from chorus_tools.tools.code.identifiers import KINDS, Table, table
from chorus_tools.tools.code.symbols import Symbol
from chorus_tools.tools.code.symbols.extract import extract, extract_definitions, tree_of
from chorus_tools.tools.code.symbols.record import Definition
from chorus_tools.tools.code.symbols.together import captures


class Occurrence(NamedTuple):
    line: int  # 1-based
    column: int  # 1-based, in characters of the line
    kind: str
    inside: str  # name_path of the innermost enclosing class or function, "" at the top
    text: str  # the whole line, without its line break


class Lines:
    """A file's line breaks, found once, so that many offsets turn into lines cheaply."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._breaks = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)

    def at(self, offsets: np.ndarray) -> list[tuple[int, int, str]]:
        """(1-based line, 1-based column in characters, the line's text) of each byte
        offset (sorted), the lines found by one search."""
        rows = np.searchsorted(self._breaks, offsets)
        starts = np.concatenate(([0], self._breaks + 1))[rows].tolist()
        ends = np.concatenate((self._breaks, [len(self.data)]))[rows].tolist()
        data, found = self.data, []
        text, span = "", (-1, -1)
        for row, start, end, offset in zip(rows.tolist(), starts, ends, offsets.tolist()):
            if (start, end) != span:  # uses on one line share its text
                text, span = data[start:end].rstrip(b"\r").decode("utf-8", "replace"), (start, end)
            found.append((row + 1, len(data[start:offset].decode("utf-8", "replace")) + 1, text))
        return found


def file_table(grammar: str, path: str, data: bytes,
               keep: bool = True) -> tuple[list[Symbol], Table]:
    """The symbols and the identifier table of `data`, the content of `path` in
    `grammar`, from one parse (its tree kept for a next parse of the file, if `keep`)."""
    tree = tree_of(grammar, path, data, keep)
    found = extract(grammar, path, data, tree)
    return found, table(grammar, tree, data, found)


def file_definitions(grammar: str, path: str, data: bytes, budget: Budget | None = None
                     ) -> tuple[list[Symbol] | list[Definition], Table]:
    """file_table's for the symbol index, which keeps no line or signature: the symbols
    as Definitions (tools/code/symbols/extract.py), the tree not kept; its parse within
    `budget` when one is given (Skipped past it)."""
    tree = tree_of(grammar, path, data, keep=False, budget=budget)
    caught = captures(grammar, tree)  # one walk for both (tools/code/symbols/together.py)
    found = extract_definitions(grammar, path, data, tree, caught)
    return found, table(grammar, tree, data, found, caught)


def occurrences(grammar: str, path: str, data: bytes, name: str) -> list[Occurrence]:
    """Every identifier `name` in `data` (the content of `path` in `grammar`), in order.
    A file that does not hold the name's bytes is not parsed."""
    if name.encode("utf-8", "surrogateescape") not in data:
        return []
    return spots(file_table(grammar, path, data)[1], name, Lines(data))


def spots(found: Table, name: str, lines: Lines) -> list[Occurrence]:
    """The occurrences of `name` in a file's table, its lines read from `lines`."""
    try:
        wanted = found.names.index(name)
    except ValueError:
        return []
    at = np.flatnonzero(found.name == wanted)
    return placed(found.offset[at], found.kind[at], found.inside[at], found.holders, lines)


def placed(offsets: np.ndarray, kinds: np.ndarray, inside: np.ndarray,
           holders: tuple[str, ...], lines: Lines) -> list[Occurrence]:
    """Uses (their offsets, kinds and holders' indices) as occurrences on their lines."""
    return [Occurrence(line, column, KINDS[kind], holders[holder] if holder >= 0 else "", text)
            for (line, column, text), kind, holder in zip(lines.at(offsets), kinds.tolist(),
                                                          inside.tolist())]
