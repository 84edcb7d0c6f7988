"""The history's seam in the invoker (rpc/dispatch/history_calls.py), in-process with a
fake pool: what a job is told to hand back, what is kept before the response, and a
rewind refused before any worker ran it leaves no journal for the next one to finish."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

from chorus_tools.rpc.dispatch import rewind
from chorus_tools.rpc.dispatch.dispatcher import Dispatcher
from chorus_tools.rpc.dispatch.history import History
from chorus_tools.rpc.dispatch.history_calls import REWIND_TARGET, HistoryCalls
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.task import Task
from fake_pool import Client, FakePool, Outcome

ROOTS = ("/srv/ws",)
OLD = b"old\n"


def kept_write(task: Task) -> Outcome:
    """A worker's answer: a write hands back what it replaced, inline."""
    if task.target.endswith(("restore:locate", "restore:listed")):
        return True, {"path": "a.txt"}, None
    kept = [{"path": "a.txt", "sha256": hashlib.sha256(OLD).hexdigest(), "bytes": len(OLD),
             "mode": 0o644, "data": OLD, "spool": None, "after": "v2"}]
    return True, {"success": True, "version": "v2"}, {"kept": kept}


def test_a_mutation_keeps_what_it_replaced_before_it_is_answered(tmp_path: Path) -> None:
    async def go() -> None:
        history = History(str(tmp_path / "history"), 1 << 20)
        pool = FakePool(kept_write)
        client = Client(Dispatcher(pool, request_timeout=30.0, roots=ROOTS,
                                   history=HistoryCalls(history, ROOTS, False)))
        await client.call("file.write", {"path": "a.txt", "content": "new\n"})
        listed = await client.call("file.history", {"path": "a.txt"}, rid=2)
        history.close()
        assert [(t.mutating, t.record, t.keep) for t in pool.tasks] == [
            (True, False, True), (False, False, False)]
        (version,) = listed["result"]["versions"]
        assert (version["method"], version["bytes"], version["exists"]) == (
            "file.write", len(OLD), True)
    asyncio.run(go())


def test_rewind_refused_before_it_ran_leaves_no_journal(tmp_path: Path) -> None:
    """Regression: a rewind answered server_busy (or cancelled) before a worker took it
    kept its journal, so the next rewind first finished the refused one."""
    def busy_for_rewinds(task: Task) -> Outcome:
        if task.target == REWIND_TARGET:
            raise ToolError("server_busy", "The server is busy.")
        return True, {}, None

    async def go() -> None:
        history = History(str(tmp_path / "history"), 1 << 20)
        pool = FakePool(busy_for_rewinds)
        client = Client(Dispatcher(pool, request_timeout=30.0, roots=ROOTS,
                                   history=HistoryCalls(history, ROOTS, False)))
        mark = await client.call("workspace.checkpoint", {})
        refused = await client.call("workspace.rewind",
                                    {"checkpoint": mark["result"]["checkpoint"]}, rid=2)
        journal = rewind.read_journal(history)
        history.close()
        assert refused["error"]["data"]["error"] == "server_busy"
        assert journal is None
    asyncio.run(go())
