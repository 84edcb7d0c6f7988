"""Bug: the problems of a file's text before a change were kept by the text's hash, I001
included, so after another module changed (a name a relative import named removed), an
unrelated edit of the importing file compared against the kept, older verdict: the
import's I001 counted as introduced by an edit that did not touch it, and
--problems-gate introduced refused the edit. A fresh worker (nothing kept) said
otherwise. The text before is judged against the workspace as it is now
(docs/protocol.md, Diagnostics: never stale, never from an earlier version)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.patch.patch import patch


def _i001(reply: dict) -> list[tuple[str, bool]]:
    return [(p["message"], p["introduced"]) for p in reply["diagnostics"]["problems"]
            if p["code"] == "I001"]


@pytest.mark.parametrize("gate", ["off", "introduced"])
def test_an_import_broken_elsewhere_is_not_brought_by_an_unrelated_edit(
        ctx: ToolContext, root: Path, gate: str) -> None:
    ctx = replace(ctx, problems_gate=gate)
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "x.py").write_text("def q():\n    pass\n")
    (root / "pkg" / "y.py").write_text("from .x import q\nA = 1\n")
    first = patch(ctx, "pkg/y.py", [{"find": "A = 1", "replace": "A = 2"}])
    assert _i001(first) == []  # its check of "A = 2" is kept for the next edit
    (root / "pkg" / "x.py").write_text("def q2():\n    pass\n")  # q is gone
    second = patch(ctx, "pkg/y.py", [{"find": "A = 2", "replace": "A = 3"}])
    assert _i001(second) == [("'.x' does not define 'q'", False)]
    assert second["diagnostics"]["problems_introduced"] == 0
    assert (root / "pkg" / "y.py").read_text() == "from .x import q\nA = 3\n"
