"""Regressions: an apply_patch that shrinks the workspace was refused quota_exceeded when
its files came in an order that grew it first (a new file before a deletion), and, over
quota, whatever the order, since its deletions were never counted: the quota's account
never heard of the room they freed (docs/protocol.md, Quotas: a change that shrinks the
workspace is always allowed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.dialects.codex_commit import PlannedFile, commit
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.mutate.quota import Room

BIG = b"x" * 900


def _plan(first_new: bool) -> list[PlannedFile]:
    new = PlannedFile("n.txt", "n.txt", None, None, None, after=b"n" * 10)
    gone = PlannedFile("big.txt", "big.txt", BIG, 0o644, None, present=True, removed=True)
    return [new, gone] if first_new else [gone, new]


@pytest.mark.parametrize("first_new", [True, False])
def test_a_patch_that_shrinks_the_workspace_passes_over_quota(
        ctx: ToolContext, root: Path, first_new: bool) -> None:
    (root / "big.txt").write_bytes(BIG)
    ctx.room, ctx.grown = Room(1400, 1000, 2, None), (0, 0, 0)  # over it from outside
    commit(ctx, _plan(first_new))
    assert sorted(p.name for p in root.iterdir()) == ["n.txt"]
    assert ctx.grown[:2] == (10 - 900, 0)  # booked: the deletion freed a file and 900 bytes


def test_a_patch_that_grows_past_the_quota_is_still_refused_whole(
        ctx: ToolContext, root: Path) -> None:
    (root / "big.txt").write_bytes(BIG)
    (root / "s.txt").write_bytes(b"s" * 50)
    files = [PlannedFile("n.txt", "n.txt", None, None, None, after=b"n" * 120),
             PlannedFile("s.txt", "s.txt", b"s" * 50, 0o644, None, after=b"s")]
    ctx.room, ctx.grown = Room(950, 1000, 2, None), (0, 0, 0)  # 49 freed + 50 left < 120
    with pytest.raises(ToolError) as err:
        commit(ctx, files)
    assert err.value.code == "quota_exceeded"
    assert (root / "s.txt").read_bytes() == b"s" * 50 and not (root / "n.txt").exists()
    ctx.room, ctx.grown = Room(950, 1000, 2, None), (0, 0, 0)
    files[0].after = b"n" * 99  # 49 freed first, then 99 taken: 50 net, within the 50 left
    commit(ctx, files)
    assert (root / "n.txt").read_bytes() == b"n" * 99 and (root / "s.txt").read_bytes() == b"s"
