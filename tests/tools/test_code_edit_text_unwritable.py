"""Bug: code.edit's `text` holding a lone surrogate was refused as edit_breaks_syntax in a
Python file (the guard's compile failed to encode it and called that a syntax error), and a
character the file's legacy encoding cannot hold was refused naming `patches[0].replace`,
a parameter code.edit does not have. Both are invalid_params naming `text`, nothing
written (docs/protocol.md: invalid_params names the parameter; text the encoding cannot
hold is invalid_params)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chorus_tools.tools.code.edit import edit
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError


@pytest.mark.parametrize("name, source", [
    ("m.py", "def f():\n    return 1\n"),
    ("m.go", "package m\n\nfunc f() int {\n\treturn 1\n}\n"),
])
@pytest.mark.parametrize("action", ["replace", "insert_before", "insert_after"])
def test_a_lone_surrogate_is_invalid_text(ctx: ToolContext, root: Path, name: str,
                                          source: str, action: str) -> None:
    (root / name).write_text(source)
    with pytest.raises(ToolError) as caught:
        edit(ctx, name, "f", action, text='x = "\ud800"\n')
    assert caught.value.code == "invalid_params"
    assert caught.value.details["param"] == "text"
    assert caught.value.message.startswith("text holds '\\ud800'")
    assert (root / name).read_text() == source


def test_a_character_a_legacy_file_cannot_hold_names_text(ctx: ToolContext,
                                                          root: Path) -> None:
    source = "# caf\xe9 cr\xe8me br\xfbl\xe9e, d\xe9j\xe0 vu, na\xefve, fa\xe7ade\n" \
             "def f():\n    return 1\n"
    (root / "m.py").write_bytes(source.encode("cp1252"))
    with pytest.raises(ToolError) as caught:
        edit(ctx, "m.py", "f", "replace", text='def f():\n    return "\u4e2d"\n')
    assert caught.value.code == "invalid_params"
    assert caught.value.details["param"] == "text"
    assert caught.value.message.startswith("text holds '\u4e2d'")
    assert (root / "m.py").read_bytes() == source.encode("cp1252")
