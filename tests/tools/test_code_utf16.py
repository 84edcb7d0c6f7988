"""Regression: a UTF-16 source file (behind its BOM, as some Windows tools save C, C++ or
Java) was parsed as its raw bytes: code.outline gave no symbol and one syntax error,
code.symbols and code.map found nothing in it and code.references showed lines full of
NULs, though file.read, file.check and code.edit read its text. The code methods parse
the text it holds, its lines and columns those file.read shows."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from chorus_tools.tools.code.codemap import code_map
from chorus_tools.tools.code.find import find_symbols
from chorus_tools.tools.code.outline import outline
from chorus_tools.tools.code.references import references
from chorus_tools.tools.context import ToolContext

TEXT = 'def f():\n    return "é"\n\n\ndef g():\n    return f()\n'


@pytest.mark.parametrize("bom, codec", [(codecs.BOM_UTF16_LE, "utf-16-le"),
                                        (codecs.BOM_UTF16_BE, "utf-16-be")])
def test_a_utf16_file_is_read_as_its_text(ctx: ToolContext, root: Path, bom: bytes,
                                         codec: str) -> None:
    (root / "m.py").write_bytes(bom + TEXT.encode(codec))
    got = outline(ctx, "m.py")
    assert got["syntax_errors"] == 0
    assert [(s["name"], s["line"], s["end_line"]) for s in got["symbols"]] == [
        ("f", 1, 2), ("g", 5, 6)]
    assert [s["name_path"] for s in find_symbols(ctx, "g")["symbols"]] == ["g"]
    assert [(r["line"], r["column"], r["text"], r["in"]) for r in
            references(ctx, "f")["references"]] == [(6, 12, "    return f()", "g")]
    assert code_map(ctx)["map"] == "m.py:\n  def f():\n  def g():"
