"""Regression: file.write of content that starts with U+FEFF (written as the UTF-8 BOM, as
Windows editors save files) reported a syntax error at line 1 for Python ("invalid
non-printable character U+FEFF") and JSON ("Unexpected UTF-8 BOM"), though the file reads
back without it and file.check of the very same bytes finds none; under `--syntax-gate
all` the write was refused. The BOM is the encoding's: the text is judged as it reads
back (docs/protocol.md, Diagnostics)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chorus_tools.tools.code.check import check
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.mutate.write import write

CASES = {  # path, content after the BOM, (line, message start) of its one real error
    "python": ("m.py", "x = 1\nprint(x)\n", None),
    "python, a real error": ("e.py", "def f(:\n    pass\n", (1, "invalid syntax")),
    "json": ("m.json", '{"a": 1}\n', None),
    "javascript": ("m.js", "const x = 1;\nconsole.log(x);\n", None),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_bom_is_no_syntax_error(ctx: ToolContext, root: Path, name: str) -> None:
    path, text, error = CASES[name]
    got = write(ctx, path, "\ufeff" + text)["diagnostics"]
    assert (root / path).read_bytes() == b"\xef\xbb\xbf" + text.encode()
    found = [(e["line"], e["message"]) for e in got["errors"]]
    assert found == ([] if error is None else [error]), got
    assert got["introduced"] == len(found)
    checked = check(ctx, path)["diagnostics"]  # the same bytes, as they read back
    assert (checked["errors"], checked["total"]) == (got["errors"], got["total"])


def test_the_gate_all_writes_a_bom_file(ctx: ToolContext, root: Path) -> None:
    ctx.syntax_gate = "all"
    write(ctx, "g.py", "\ufeffx = 1\n")
    assert (root / "g.py").read_bytes() == b"\xef\xbb\xbfx = 1\n"
