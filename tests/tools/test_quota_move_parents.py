"""Regression: a `file.move` refused by the files quota half-way up the destination's
missing parents left the ones it had made (docs/protocol.md, Quotas: nothing written)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.mutate import move
from chorus_tools.tools.mutate.quota import Room


def test_a_move_refused_by_the_files_quota_leaves_no_parent_it_made(
        ctx: ToolContext, root: Path) -> None:
    (root / "s.py").write_text("x")
    ctx.room, ctx.grown = Room(1, None, 1, 2), (0, 0, 0)  # room for one more entry
    with pytest.raises(ToolError) as err:
        move.move(ctx, "s.py", "m/n/o/s.py")
    assert err.value.code == "quota_exceeded"
    assert err.value.details["quota"] == "files"
    assert sorted(p.name for p in root.iterdir()) == ["s.py"]
    assert ctx.grown[:2] == (0, 0)  # what it made and took away again books nothing
    move.move(ctx, "s.py", "m/s.py")  # one parent fits
    assert (root / "m" / "s.py").read_text() == "x"

