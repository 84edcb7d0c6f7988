"""Regression: code.edit's delete of a symbol glued to the sibling before it (no blank line
between them) took the blank lines after it too, gluing that sibling to the next one
(`MAX = 1`, `counter = 0`, two blank lines, `class Parser` became `MAX = 1` directly
above `class Parser`). The blank lines that go are the ones on one side only, the fewer."""

from __future__ import annotations

from pathlib import Path

import pytest

from chorus_tools.tools.code.edit import edit
from chorus_tools.tools.context import ToolContext

PY = "MAX = 1\ncounter = 0\n\n\nclass Parser:\n    pass\n"

CASES = {
    # glued to the one before: nothing but its own line goes
    "python: a variable glued to the constant above it": (
        "a.py", PY, "counter", "MAX = 1\n\n\nclass Parser:\n    pass\n"),
    # glued to the one after: the blank lines above it stay, between the two left
    "python: a variable glued to the class below it": (
        "a.py", "MAX = 1\n\n\ncounter = 0\nclass Parser:\n    pass\n", "counter",
        "MAX = 1\n\n\nclass Parser:\n    pass\n"),
    "go: a function glued to the one before it": (
        "a.go", "package main\n\nfunc a() {}\nfunc b() {}\n\nfunc c() {}\n", "b",
        "package main\n\nfunc a() {}\n\nfunc c() {}\n"),
    # one blank line before, two after: the smaller run goes, the two stay
    "python: fewer blank lines above than below": (
        "a.py", "A = 1\n\nB = 2\n\n\nC = 3\n", "B", "A = 1\n\n\nC = 3\n"),
    # as many on each side: those after it go, as before this fix
    "python: as many blank lines above as below": (
        "a.py", "A = 1\n\nB = 2\n\nC = 3\n", "B", "A = 1\n\nC = 3\n"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_delete_keeps_the_neighbours_apart(ctx: ToolContext, root: Path, name: str) -> None:
    path, before, symbol, after = CASES[name]
    (root / path).write_text(before)
    edit(ctx, path, symbol, "delete")
    assert (root / path).read_text() == after
