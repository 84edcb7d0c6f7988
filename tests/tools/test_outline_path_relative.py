"""Bug: code.outline echoed the client's path into its result, so an absolute path (or
`./x`, `sub/../x`) came back as given, where every result path is workspace-relative and
never absolute (docs/protocol.md, "Paths"), as file.check's already was."""

from __future__ import annotations

from pathlib import Path

import pytest

from chorus_tools.tools.code.check import check
from chorus_tools.tools.code.outline import outline
from chorus_tools.tools.context import ToolContext


@pytest.mark.parametrize("given", ["ABS", "./pkg/mod.py", "pkg/../pkg/mod.py", "pkg//mod.py"])
def test_outline_answers_the_workspace_relative_path(ctx: ToolContext, root: Path,
                                                     given: str) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "mod.py").write_text("def f():\n    return 1\n")
    path = str(root / "pkg" / "mod.py") if given == "ABS" else given
    got = outline(ctx, path)
    assert got["path"] == "pkg/mod.py"
    assert [s["name"] for s in got["symbols"]] == ["f"]
    assert check(ctx, path)["path"] == got["path"]
