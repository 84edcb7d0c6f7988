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

from chorus_tools.tools.code.identifiers import KINDS, Table, table
from chorus_tools.tools.code.symbols import symbols
from chorus_tools.tools.code.symbols.extract import tree_of


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

    def at(self, offset: int) -> tuple[int, int, str]:
        """(1-based line, 1-based column in characters, the line's text) of a byte."""
        row = int(np.searchsorted(self._breaks, offset))
        start = int(self._breaks[row - 1]) + 1 if row else 0
        end = int(self._breaks[row]) if row < len(self._breaks) else len(self.data)
        text = self.data[start:end].rstrip(b"\r").decode("utf-8", "replace")
        return row + 1, len(self.data[start:offset].decode("utf-8", "replace")) + 1, text


def file_table(grammar: str, path: str, data: bytes) -> Table:
    """The identifier table of `data`, the content of `path` in `grammar`."""
    found = symbols(path, data)  # its parse is the one looked at below (tools/code/parse.py)
    return table(grammar, tree_of(grammar, path, data), data, found)


def occurrences(grammar: str, path: str, data: bytes, name: str) -> list[Occurrence]:
    """Every identifier `name` in `data` (the content of `path` in `grammar`), in order.
    A file that does not hold the name's bytes is not parsed."""
    if name.encode("utf-8", "surrogateescape") not in data:
        return []
    found = file_table(grammar, path, data)
    return spots(found, name, Lines(data))


def spots(found: Table, name: str, lines: Lines) -> list[Occurrence]:
    """The occurrences of `name` in a file's table, its lines read from `lines`."""
    try:
        wanted = found.names.index(name)
    except ValueError:
        return []
    result = []
    for i in np.flatnonzero(found.name == wanted).tolist():
        line, column, text = lines.at(int(found.offset[i]))
        holder = int(found.inside[i])
        result.append(Occurrence(line, column, KINDS[found.kind[i]],
                                 found.holders[holder] if holder >= 0 else "", text))
    return result
