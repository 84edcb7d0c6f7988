"""Regression: a module-level unpacking (`A, B = 1, 2`, `(c, D) = ...`, `[E, *rest] = ...`)
or chained assignment (`x = y = 0`) gave no symbol for its names, or only the first,
though each is a module-level name (docs/protocol.md, Code by structure: module-level
constants and variables are symbols). Every name Python binds there is one, ALL_CAPS a
constant, on the statement's line, with the statement as its signature; the warm index
(which reads the same extraction) and code.symbols find them too."""

from __future__ import annotations

from pathlib import Path

from chorus_tools.tools.code.find import find_symbols
from chorus_tools.tools.code.symbols import symbols
from chorus_tools.tools.context import ToolContext

TEXT = b"""A, B = 1, 2
(c, D) = 3, 4
[E, *rest] = [5, 6]
x = y = z = 0


class K:
    u, v = 1, 2
"""


def test_every_name_of_an_unpacking_or_chain_is_a_symbol() -> None:
    found = [(s.kind, s.name_path, s.line, s.end_line, s.signature)
             for s in symbols("m.py", TEXT)]
    assert found == [
        ("constant", "A", 1, 1, "A, B = 1, 2"),
        ("constant", "B", 1, 1, "A, B = 1, 2"),
        ("variable", "c", 2, 2, "(c, D) = 3, 4"),
        ("constant", "D", 2, 2, "(c, D) = 3, 4"),
        ("constant", "E", 3, 3, "[E, *rest] = [5, 6]"),
        ("variable", "rest", 3, 3, "[E, *rest] = [5, 6]"),
        ("variable", "x", 4, 4, "x = y = z = 0"),
        ("variable", "y", 4, 4, "x = y = z = 0"),
        ("variable", "z", 4, 4, "x = y = z = 0"),
        ("class", "K", 7, 8, "class K:"),
    ]


def test_code_symbols_finds_an_unpacked_name(ctx: ToolContext, root: Path) -> None:
    (root / "m.py").write_bytes(TEXT)
    got = find_symbols(ctx, "B")
    assert [(s["path"], s["name_path"], s["kind"]) for s in got["symbols"]] == [
        ("m.py", "B", "constant")]
