"""The symbol record every code-structure method consumes (tools/code/symbols)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

KINDS = ("class", "interface", "struct", "enum", "trait", "impl", "namespace", "function",
         "method", "constructor", "field", "property", "constant", "variable", "type",
         "macro", "heading")

@dataclass(frozen=True, slots=True)
class Symbol:
    """One definition. `line`..`end_line` (1-based, inclusive) is its whole range, with the
    comment block, decorators and attributes above it; `start_byte`..`end_byte` is the
    same range in bytes (from the first byte of `line`'s text that belongs to it).
    `def_line` is the definition's own first line (after the comments above: the line
    whose indentation is the symbol's); `name_byte` where its name is written (-1 for a
    heading); `parent` the index of the enclosing symbol in the list, -1 at the top."""

    name: str
    kind: str
    name_path: str
    line: int
    end_line: int
    signature: str
    def_line: int
    start_byte: int
    end_byte: int
    name_byte: int
    parent: int

    def record(self) -> dict[str, Any]:
        """The wire form (docs/protocol.md, "Code by structure": a symbol)."""
        return {"name": self.name, "kind": self.kind, "name_path": self.name_path,
                "line": self.line, "end_line": self.end_line, "signature": self.signature}


class Definition(NamedTuple):
    """A symbol as the symbol index reads it (tools/code/codemap.read_summary): the fields
    of a Symbol it needs, without the lines and the signature, which cost it a third of a
    file's definitions' time and the index keeps none of them (a code call that shows
    symbols parses the file: tools/warm/symbol_index.symbols_of)."""

    name: str
    kind: str
    name_path: str
    start_byte: int
    end_byte: int
    name_byte: int
    parent: int
