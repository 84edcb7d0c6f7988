"""Bug: codex apply_patch judged each file's problems against the other files as they were
on disk before the patch, though the patch writes them all at once: a rename done across
files in one patch reported its own fixed importers in broken_imports, an import of a name
(or a module) the same patch adds was I001, and --problems-gate introduced refused the
whole, correct patch. Each file is judged against the workspace as the patch leaves it
(docs/protocol.md, Diagnostics: computed on the exact bytes written, within the call)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.dialects.codex import apply_patch


def _patch(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"]) + "\n"


def _diagnostics(got: dict) -> dict[str, dict]:
    return {f["path"]: f["diagnostics"] for f in got["files"] if "diagnostics" in f}


@pytest.fixture
def package(root: Path) -> Path:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "mod.py").write_text("def load():\n    pass\n")
    (root / "pkg" / "rel.py").write_text("from .mod import load\nload()\n")
    (root / "app.py").write_text("from pkg.mod import load\n")
    (root / "old.py").write_text("from pkg.mod import load\n")
    return root


@pytest.mark.parametrize("gate", ["off", "introduced"])
def test_a_rename_across_files_in_one_patch_breaks_nothing(
        ctx: ToolContext, package: Path, gate: str) -> None:
    ctx = replace(ctx, problems_gate=gate)
    got = apply_patch(ctx, _patch(
        "*** Update File: pkg/rel.py", "@@", "-from .mod import load", "-load()",
        "+from .mod import load2", "+load2()",
        "*** Update File: pkg/mod.py", "@@", "-def load():", "+def load2():",
        "*** Update File: app.py", "@@", "-from pkg.mod import load",
        "+from pkg.mod import load2",
        "*** Delete File: old.py"))
    for path, found in _diagnostics(got).items():
        assert found["problems"] == [], path
        assert "broken_imports" not in found, path
    assert "Note:" not in got["output"]
    assert (package / "pkg" / "mod.py").read_text() == "def load2():\n    pass\n"


def test_a_module_the_patch_adds_is_there_for_its_importer(ctx: ToolContext,
                                                           package: Path) -> None:
    got = apply_patch(ctx, _patch(
        "*** Add File: pkg/new/user.py", "+from .tools import thing", "+from . import tools",
        "*** Add File: pkg/new/__init__.py", "+",
        "*** Add File: pkg/new/tools.py", "+def thing():", "+    pass"))
    assert _diagnostics(got)["pkg/new/user.py"]["problems"] == []


def test_the_importers_the_patch_leaves_broken_are_still_named(ctx: ToolContext,
                                                               package: Path) -> None:
    """Only what the patch itself fixes is left out: an importer it does not touch, or
    one it changes but keeps importing the old name, is named."""
    got = apply_patch(ctx, _patch(
        "*** Update File: pkg/mod.py", "@@", "-def load():", "+def load2():",
        "*** Update File: app.py", "@@", "-from pkg.mod import load",
        "+from pkg.mod import load  # still"))
    found = _diagnostics(got)["pkg/mod.py"]
    assert found["broken_imports"] == [
        {"path": "app.py", "line": 1, "name": "load"},
        {"path": "old.py", "line": 1, "name": "load"},
        {"path": "pkg/rel.py", "line": 1, "name": "load"}]
