"""Bug: `__path__`, which the import system defines in a package's `__init__.py`, was
F821 "undefined name '__path__'" there (pyflakes was never told the file's name, so its
own rule for packages never applied), and --problems-gate introduced refused an
`__init__.py` that extends its path (`__path__ = extend_path(__path__, __name__)`).
Elsewhere it is still undefined, as pyflakes and ruff say (docs/protocol.md, Diagnostics:
F821 a name no scope, import or builtin defines)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from chorus_tools.tools.code.check import check
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.mutate.write import write
from chorus_tools.tools.patch.patch import patch

EXTEND = "from pkgutil import extend_path\n__path__ = extend_path(__path__, __name__)\n"


def _f821(reply: dict) -> list[str]:
    return [p["message"] for p in reply["diagnostics"]["problems"] if p["code"] == "F821"]


def test_a_package_reads_its_path(ctx: ToolContext, root: Path) -> None:
    ctx = replace(ctx, problems_gate="introduced")
    (root / "pkg").mkdir()
    assert _f821(write(ctx, "pkg/__init__.py", EXTEND)) == []
    assert _f821(check(ctx, "pkg/__init__.py")) == []
    edited = patch(ctx, "pkg/__init__.py", [{"find": "__name__)", "replace": "__name__)\n"
                                             "print(__path__)"}])  # the incremental check
    assert _f821(edited) == []


@pytest.mark.parametrize("name", ["mod.py", "pkg/__init__.pyi", "pkg/not__init__.py"])
def test_a_module_does_not(ctx: ToolContext, root: Path, name: str) -> None:
    (root / "pkg").mkdir()
    assert _f821(write(ctx, name, EXTEND)) == ["undefined name '__path__'"]


def test_a_package_exports_its_submodules(ctx: ToolContext, root: Path) -> None:
    """With the name known, pyflakes' (and ruff's) other rule for packages holds too: an
    `__init__.py`'s `__all__` names its submodules, which it need not bind (F822 is for
    modules)."""
    (root / "pkg").mkdir()
    (root / "pkg" / "sub.py").write_text("X = 1\n")
    exports = '__all__ = ["sub"]\n'
    assert write(ctx, "pkg/__init__.py", exports)["diagnostics"]["problems"] == []
    assert [p["code"] for p in write(ctx, "mod.py", exports)["diagnostics"]["problems"]] \
        == ["F822"]
