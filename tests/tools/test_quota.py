"""The quota's one check (tools/mutate/quota.py) at the adding places it guards, called
directly, and the invoker's account (rpc/dispatch/quota.py)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from chorus_tools.rpc.dispatch.quota import UsageAccount
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.dialects.codex_commit import PlannedFile, commit
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.mutate import dirs, move
from chorus_tools.tools.mutate.quota import GROWN, Room, charge, measure
from chorus_tools.tools.mutate.write import write


def _room(ctx: ToolContext, used_bytes: int = 0, limit_bytes: int | None = None,
          used_files: int = 0, limit_files: int | None = None) -> None:
    ctx.room, ctx.grown = Room(used_bytes, limit_bytes, used_files, limit_files), (0, 0, 0)


def test_charge_sums_the_call_and_never_refuses_shrinking(ctx: ToolContext) -> None:
    _room(ctx, 90, 100)
    charge(ctx, 6, 0, "a")
    with pytest.raises(ToolError) as err:
        charge(ctx, 5, 0, "b")
    assert err.value.code == "quota_exceeded"
    assert err.value.details == {"path": "b", "quota": "bytes", "used": 90, "limit": 100,
                                 "needed": 11}
    charge(ctx, -50, -1, "c")  # shrinking passes
    assert ctx.grown == (-44, -1, 0)
    _room(ctx, 150, 100)  # over quota from outside: only shrinking (or no growth) passes
    charge(ctx, -10, 0, "d")
    charge(ctx, 10, 0, "e")  # back to where the call began: no growth
    with pytest.raises(ToolError):
        charge(ctx, 1, 0, "f")


def test_no_room_means_no_check(ctx: ToolContext) -> None:
    ctx.room = None
    charge(ctx, 1 << 40, 1 << 20, "a")
    assert ctx.grown == (0, 0, 0)


def test_write_refused_leaves_no_file_and_no_directory(ctx: ToolContext,
                                                        root: Path) -> None:
    _room(ctx, 0, 10)
    with pytest.raises(ToolError) as err:
        write(ctx, "a/b/c.txt", "x" * 11, create_dirs=True)
    assert err.value.code == "quota_exceeded"
    assert list(root.iterdir()) == []
    write(ctx, "a/b/c.txt", "x" * 10, create_dirs=True)
    assert ctx.grown == (10, 3, 0)


def test_dir_create_refused_whole(ctx: ToolContext, root: Path) -> None:
    _room(ctx, 0, None, 0, 2)
    with pytest.raises(ToolError):
        dirs.create(ctx, "a/b/c")
    assert list(root.iterdir()) == []
    dirs.create(ctx, "a/b")
    assert ctx.grown == (0, 2, 0)


def test_move_over_a_file_books_what_it_replaced(ctx: ToolContext, root: Path) -> None:
    (root / "a").write_text("aaa")
    (root / "b").write_text("bbbbbb")
    _room(ctx, 9, 9, 2, 2)
    move.move(ctx, "a", "b", overwrite=True)
    assert ctx.grown == (-6, -1, 0)


def test_apply_patch_commit_refused_half_way_puts_back_all(ctx: ToolContext,
                                                            root: Path) -> None:
    (root / "old.txt").write_text("o" * 20)
    files = [PlannedFile("old.txt", "old.txt", b"o" * 20, 0o644, None, after=b"o"),
             PlannedFile("n1.txt", "n1.txt", None, None, None, after=b"1" * 20),
             PlannedFile("d/n2.txt", "d/n2.txt", None, None, None, after=b"2" * 20,
                         missing_dirs=["d"])]
    _room(ctx, 20, 30)
    with pytest.raises(ToolError) as err:
        commit(ctx, files)
    assert err.value.code == "quota_exceeded"
    assert sorted(p.name for p in root.iterdir()) == ["old.txt"]
    assert (root / "old.txt").read_text() == "o" * 20


def test_measure_walks_the_disk_as_the_quota_counts(ctx: ToolContext, root: Path) -> None:
    (root / "d" / "e").mkdir(parents=True)
    (root / "d" / "e" / "f.txt").write_bytes(b"1" * 100)
    (root / "g.txt").write_bytes(b"1" * 5)
    os.symlink("g.txt", root / "link")
    (root / ".chorus-tmp-0123456789abcdef").write_bytes(b"1" * 1000)  # ours: not counted
    assert measure(ctx) == {"bytes": 105, "files": 5}
    assert measure(ctx, walk=False) is None  # no warm tree: the account keeps its own


def test_account_books_a_success_and_not_a_failure() -> None:
    async def go() -> None:
        account = UsageAccount(1000, None)
        measured = []

        async def measure_now(walk: bool) -> dict[str, int]:
            measured.append(walk)
            return {"bytes": 100, "files": 3}

        async with account.turn(measure_now) as room:
            assert room == Room(100, 1000, 3, None)
            account.book(True, {GROWN: (50, 1, 0)})
        audit = {GROWN: (500, 1, -20), "kept": []}
        async with account.turn(measure_now):
            account.book(False, audit)
        assert audit == {"kept": []}  # taken out of the record either way
        assert account.figures().workspace_bytes == 130 and measured == [True]  # the lasting -20
        report = await account.report(measure_now)
        assert report == {"usage": {"bytes": 130, "files": 4},
                          "quota": {"bytes": 1000, "files": None}}

    asyncio.run(go())


def test_turns_are_one_at_a_time() -> None:
    async def go() -> None:
        account = UsageAccount(10, None)
        inside: list[int] = []

        async def measure_now(walk: bool) -> dict[str, int]:
            return {"bytes": 0, "files": 0}

        async def change(n: int) -> None:
            async with account.turn(measure_now) as room:
                inside.append(n)
                assert len(inside) == 1
                await asyncio.sleep(0)
                assert account.used is not None and room.used_bytes == account.used[0]
                account.book(True, {GROWN: (1, 0, 0)})
                inside.remove(n)

        await asyncio.gather(*(change(n) for n in range(5)))
        assert account.used == (5, 0)

    asyncio.run(go())
