"""rpc.ordering: per path, changes keep arrival order; reads of one path run together."""

from __future__ import annotations

import asyncio

from chorus_tools.rpc.dispatch.ordering import MARK, PathOrder
from rpc_client import RpcServer


def _leave_all(order: PathOrder, entered: list[tuple[str, asyncio.Future]]) -> None:
    """Every call entered leaves, in order; nothing is left waiting."""
    for key, fut in entered:
        order.leave(key, fut)
    assert order._tails == {}


def test_a_write_waits_for_earlier_calls_and_later_reads_wait_for_it():
    async def go():
        order = PathOrder()
        before_r1, r1 = order.enter("a", mutating=False)
        before_r2, r2 = order.enter("a", mutating=False)
        before_w, w = order.enter("a", mutating=True)
        before_r3, r3 = order.enter("a", mutating=False)
        before_other, other = order.enter("b", mutating=True)
        assert before_r1 == [] and before_r2 == [] and before_other == []
        assert set(before_w) == {r1, r2} and before_r3 == [w]
        _leave_all(order, [("a", r1), ("a", r2), ("a", w), ("a", r3), ("b", other)])
    asyncio.run(go())


def test_a_change_of_a_directory_orders_the_calls_beneath_it():
    async def go():
        order = PathOrder()
        _, read_inside = order.enter("d/x", mutating=False)
        before_move, move = order.enter("d", mutating=True)
        before_after, after = order.enter("d/sub/y", mutating=False)
        before_aside, aside = order.enter("dx/y", mutating=True)
        assert before_move == [read_inside] and before_after == [move]
        assert before_aside == []  # 'dx' is no path beneath 'd'
        _leave_all(order, [("d/x", read_inside), ("d", move), ("d/sub/y", after),
                         ("dx/y", aside)])
    asyncio.run(go())


def test_a_change_of_the_root_orders_every_later_call():
    """Regression: a change of the root (a checkpoint, a rewind) waited for every earlier
    call, but later calls never waited for it: only the directories above a path with a
    '/' were looked at, never the root."""
    async def go():
        order = PathOrder()
        _, earlier = order.enter("d/x", mutating=True)
        before_rewind, rewind = order.enter(".", mutating=True)
        before_read, read = order.enter("a.txt", mutating=False)
        before_deep, deep = order.enter("d/x", mutating=True)
        assert before_rewind == [earlier]
        assert before_read == [rewind] and set(before_deep) == {earlier, rewind}
        _leave_all(order, [("d/x", earlier), (".", rewind), ("a.txt", read), ("d/x", deep)])
    asyncio.run(go())


def test_a_checkpoint_waits_for_changes_only_and_only_changes_wait_for_it():
    """Regression: a checkpoint was a change of the root, so it waited for a slow search
    in flight and every later call, reads too, waited for it in turn. It changes no file:
    it follows the earlier changes and precedes the later ones, and reads pass it by."""
    async def go():
        order = PathOrder()
        _, search = order.enter(".", mutating=False)
        _, write = order.enter("d/x", mutating=True)
        _, other = order.enter("d/x", mutating=True)
        before_mark, mark = order.enter(MARK, mutating=True)
        before_read, read = order.enter("d/x", mutating=False)
        before_change, change = order.enter("a.txt", mutating=True)
        before_rewind, rewind = order.enter(".", mutating=True)
        before_next, next_mark = order.enter(MARK, mutating=True)
        assert before_mark == [other]  # the later write on d/x follows the earlier one
        assert before_read == [other] and before_change == [mark]
        assert set(before_rewind) == {search, other, read, change, mark}
        assert set(before_next) == {mark, other, change, rewind}
        _leave_all(order, [(".", search), ("d/x", write), ("d/x", other), (MARK, mark),
                           ("d/x", read), ("a.txt", change), (".", rewind),
                           (MARK, next_mark)])
        assert order._mark is None
    asyncio.run(go())


def test_a_read_that_left_is_forgotten_at_once_and_a_later_write_waits_only_for_the_rest():
    """Regression: every entry and exit scanned all the reads in flight on the path (64
    pipelined reads of one file: a scan of 64 at each step of each)."""
    async def go():
        order = PathOrder()
        reads = [order.enter("a", mutating=False)[1] for _ in range(64)]
        for fut in reads[:63]:
            order.leave("a", fut)
        assert order._tails["a"].reads == {reads[63]}
        before_w, w = order.enter("a", mutating=True)
        assert before_w == [reads[63]]
        order.leave("a", reads[63])
        order.leave("a", w)
        assert order._tails == {}
    asyncio.run(go())


def test_pipelined_write_then_read_of_one_file_reads_what_was_written(tmp_path):
    """Regression: a piped session `write; read; patch; read` on one path could read
    before the write landed, since requests run concurrently."""
    with RpcServer(tmp_path, "--workers", "2") as server:
        for round_ in range(20):
            body = f"v{round_}\n"
            ids = [server.request("file.write", {"path": "f.txt", "content": body}),
                   server.request("file.read", {"path": "./f.txt", "raw": True}),
                   server.request("file.patch", {"path": "f.txt", "patches": [
                       {"find": f"v{round_}", "replace": f"w{round_}"}]}),
                   server.request("file.read", {"path": "f.txt", "raw": True})]
            replies = {r["id"]: r for r in (server.recv() for _ in ids)}
            assert replies[ids[1]]["result"]["content"] == body
            assert replies[ids[2]]["result"]["success"] is True
            assert replies[ids[3]]["result"]["content"] == f"w{round_}\n"
