"""Regression: under `--syntax-gate all` every refused write or edit carries
`data.diagnostics` (docs/protocol.md, Diagnostics), but the refusals of the syntax guard
itself, code.edit's (judged though exact, since the server placed it) and a looser-tier
file.patch's, came without it: only the guard's own fields. They now carry it beside
those fields (patch_index, tier, line, reason, diff); under the default gate they are
as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from chorus_tools.tools.code.edit import edit
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.patch.patch import patch

TEXT = "class A:\n    def m(self):\n        return 1\n"


def broken_edit(ctx: ToolContext) -> Any:
    return edit(ctx, "a.py", "A/m", "replace", "def m(self:\n    return 2\n")


def broken_patch(ctx: ToolContext) -> Any:  # matched by the indentation tier
    return patch(ctx, "a.py", [{"find": "def m(self):\n  return 1",
                                "replace": "def m(self):\n  return (1"}])


@pytest.mark.parametrize("call", [broken_edit, broken_patch], ids=["code.edit", "indentation"])
@pytest.mark.parametrize("gate", ["all", "loose"])
def test_a_guard_refusal_under_gate_all_says_the_diagnostics(
        ctx: ToolContext, root: Path, call: Callable[[ToolContext], Any], gate: str) -> None:
    (root / "a.py").write_text(TEXT)
    ctx.syntax_gate = gate
    with pytest.raises(ToolError) as info:
        call(ctx)
    data = info.value.details
    assert info.value.code == "edit_breaks_syntax" and data["diff"] and data["line"]
    assert (root / "a.py").read_text() == TEXT
    if gate == "loose":
        assert "diagnostics" not in data
        return
    shown = data["diagnostics"]
    assert shown["total"] == 1 and shown["introduced"] == 1, shown
    assert shown["errors"][0]["line"] == data["line"]
