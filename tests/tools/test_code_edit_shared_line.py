"""Regression: code.edit on a symbol that shares a line with other code worked on the whole
line anyway: deleting the field `x` of `pub struct Point { x: i32, y: i32 }` deleted the
whole struct (and, the file still parsing, nothing stopped it); replacing an interface's
one-line method replaced the interface; `X` of Go's `X, Y int` took `Y` with it. Every
action works on whole lines (docs/protocol.md, Code by structure), so such a symbol is
refused (invalid_params, nothing written), naming what it shares its line with; a symbol
alone on its lines, a trailing comment or separator after it, is edited as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from chorus_tools.tools.code.edit import edit
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError

REFUSED = {  # path, text, symbol, what the message names
    "rust: a field of a one-line struct": (
        "a.rs", "pub struct Point { x: i32, y: i32 }\n", "Point/x", "Point/y"),
    "go: one of two fields declared together": (
        "a.go", "package p\n\ntype P struct {\n\tX, Y int\n}\n", "P/X", "P/Y"),
    "typescript: the method of a one-line interface": (
        "a.ts", "interface Shape { area(): number; }\n", "Shape/area", "other code"),
    "c: the only field of a one-line struct": (
        "a.c", "struct node { int v; };\n", "node/v", "other code"),
    "python: one name of an unpacking": ("a.py", "A, B = 1, 2\n", "B", "A"),
}


@pytest.mark.parametrize("name", list(REFUSED))
@pytest.mark.parametrize("action", ["delete", "replace", "insert_after"])
def test_a_symbol_sharing_its_line_is_refused(ctx: ToolContext, root: Path, name: str,
                                              action: str) -> None:
    path, text, symbol, shared = REFUSED[name]
    (root / path).write_text(text)
    with pytest.raises(ToolError) as info:
        edit(ctx, path, symbol, action, None if action == "delete" else "z = 1\n")
    assert info.value.code == "invalid_params" and info.value.details["param"] == "symbol"
    assert f"with {shared}," in info.value.message
    assert (root / path).read_text() == text


ALONE = {  # path, text, symbol, the text after deleting it
    "rust: a field of a struct over several lines, its comma after it": (
        "a.rs", "struct P {\n    x: i32, // the x\n    y: i32,\n}\n", "P/x",
        "struct P {\n    y: i32,\n}\n"),
    "python: an assignment with a trailing comment": (
        "a.py", "A = 1  # one\nB = 2\n", "A", "B = 2\n"),
    "c: a typedef holding its struct": (
        "a.c", "typedef struct { int a; } T;\nint x;\n", "T", "int x;\n"),
}


@pytest.mark.parametrize("name", list(ALONE))
def test_a_symbol_alone_on_its_lines_is_edited(ctx: ToolContext, root: Path,
                                               name: str) -> None:
    path, text, symbol, after = ALONE[name]
    (root / path).write_text(text)
    edit(ctx, path, symbol, "delete")
    assert (root / path).read_text() == after
