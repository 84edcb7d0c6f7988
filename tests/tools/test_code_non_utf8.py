"""Regression: a source file that is not UTF-8 was parsed as its raw bytes. A UTF-16 one
(behind its BOM, as some Windows tools save C, C++ or Java) gave code.outline no symbol
and one syntax error, code.symbols and code.map nothing, code.references lines full of
NULs; a GBK or latin-1 one gave reference texts and signatures of U+FFFD and columns
counted in bytes. file.read, file.check and code.edit read its text: so do the code
methods now, its lines, columns and texts those file.read shows."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from chorus_tools.tools.code.codemap import code_map
from chorus_tools.tools.code.find import find_symbols
from chorus_tools.tools.code.outline import outline
from chorus_tools.tools.code.references import references
from chorus_tools.tools.context import ToolContext

TEXT = 'def f():\n    return "é"\n\n\ndef g():\n    s = "中文字符"; return f()\n'
ENCODED = {
    "utf-16-le": codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"),
    "utf-16-be": codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"),
    "gbk": ("# 这是一个用中文写的注释，说明这个模块\n\n" + TEXT).encode("gbk"),
    "latin-1": TEXT.replace("中文字符", "naïve").encode("latin-1"),
}


@pytest.mark.parametrize("encoding", list(ENCODED))
def test_a_file_not_in_utf8_is_read_as_its_text(ctx: ToolContext, root: Path,
                                               encoding: str) -> None:
    (root / "m.py").write_bytes(ENCODED[encoding])
    text = TEXT if encoding != "latin-1" else TEXT.replace("中文字符", "naïve")
    shift = 2 if encoding == "gbk" else 0  # its comment and a blank line come first
    got = outline(ctx, "m.py")
    assert got["syntax_errors"] == 0
    assert [(s["name"], s["line"] - shift, s["end_line"] - shift) for s in got["symbols"]
            if s["name"] != "s"] == [("f", 1, 2), ("g", 5, 6)]
    assert [s["name_path"] for s in find_symbols(ctx, "g")["symbols"]] == ["g"]
    line = text.splitlines()[5]
    assert [(r["line"] - shift, r["column"], r["text"], r["in"]) for r in
            references(ctx, "f")["references"]] == [(6, line.index("f()") + 1, line, "g")]
    assert code_map(ctx)["map"] == "m.py:\n  def f():\n  def g():"
