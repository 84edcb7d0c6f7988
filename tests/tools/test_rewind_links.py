"""workspace.rewind's worker half (tools/mutate/rewind.py) on a symlink an archive import
made where nothing was (its history entry: an absence, `expected` the link's version): a
REAL link removed while it is the very link made, a conflict once replaced, and put back
when a later change of the same rewind fails (all or nothing)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from chorus_tools.tools.confine.sandbox import version_of
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.mutate import rewind as rewind_mod
from chorus_tools.tools.mutate.rewind import rewind


def _link_item(root: Path, name: str) -> dict[str, Any]:
    return {"path": name, "sha256": None, "mode": 0, "content": None,
            "expected": version_of(os.lstat(root / name))}


def test_a_link_made_is_removed_and_a_replaced_one_is_a_conflict(ctx: ToolContext,
                                                                 root: Path) -> None:
    (root / "a.txt").write_text("a")
    (root / "made").symlink_to("a.txt")
    (root / "swapped").symlink_to("a.txt")
    items = [_link_item(root, "made"), _link_item(root, "swapped")]
    (root / "swapped").unlink()
    (root / "swapped").symlink_to("elsewhere")  # someone else's link now
    done = rewind(ctx, "cp-1", items)
    assert done["deleted"] == ["made"] and done["conflicts"] == ["swapped"]
    assert not (root / "made").is_symlink() and (root / "a.txt").read_text() == "a"
    assert os.readlink(root / "swapped") == "elsewhere"


def test_a_failed_rewind_puts_the_link_back(ctx: ToolContext, root: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    (root / "made").symlink_to("z.txt")
    (root / "z.txt").write_text("now")
    file_item = {"path": "z.txt", "sha256": "0" * 64, "mode": 0o644, "content": b"then",
                 "expected": version_of(os.stat(root / "z.txt"))}

    def failing(*args: Any, **kwargs: Any) -> None:
        raise ToolError("write_failed", "disk full (simulated)", errno="ENOSPC")

    monkeypatch.setattr(rewind_mod, "mutate", failing)
    with pytest.raises(ToolError):
        rewind(ctx, "cp-1", [_link_item(root, "made"), file_item])
    assert os.readlink(root / "made") == "z.txt"
    assert (root / "z.txt").read_text() == "now"
