"""code.outline's `syntax_errors` for Python counts what the file's diagnostics count
(docs/protocol.md, "Code by structure" and Diagnostics): what CPython's compiler refuses
beyond the grammar (`return` outside a function, a duplicate parameter) is a syntax error,
and a text the compiler accepts (lines ended by a lone CR) holds none. The outline used
to count only tree-sitter's ERROR nodes: 0 for the first, 1 for the second, unlike
file.check beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from chorus_tools.tools.code.check import check
from chorus_tools.tools.code.outline import outline
from chorus_tools.tools.context import ToolContext

CASES = {
    "return_outside.py": b"def f():\n    pass\nreturn 1\nbreak\n",
    "duplicate_parameter.py": b"def f(a, a):\n    pass\n",
    "lone_cr.py": b"def f():\r    return 1\rdef g():\r    return 2\r",
    "unclosed.py": b"def ok():\n    pass\n\nx = (\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_outline_syntax_errors_agree_with_file_check(ctx: ToolContext, root: Path,
                                                     name: str) -> None:
    (root / name).write_bytes(CASES[name])
    counted = check(ctx, name)["diagnostics"]["total"]
    assert outline(ctx, name)["syntax_errors"] == counted


def test_compiler_level_errors_count_in_the_outline(ctx: ToolContext, root: Path) -> None:
    (root / "r.py").write_bytes(CASES["return_outside.py"])
    found = outline(ctx, "r.py")
    assert found["syntax_errors"] == 2  # 'return' outside function, 'break' outside loop
    assert [s["name"] for s in found["symbols"]] == ["f"]
