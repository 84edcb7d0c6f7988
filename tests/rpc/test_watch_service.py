"""workspace.watch's plumbing in process (rpc/process/watch_service.py) with a real watcher
process: killed for real (SIGKILL) at the moments a spawned server cannot aim at, the
watch being started goes on in the watcher that replaces it."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

from chorus_tools.rpc.process.watch_service import Watches
from chorus_tools.tools.context import ToolContext

GUARD = 15.0
SPEC = {"path": ".", "pattern": None, "include_ignored": False}


def _dead(pid: int) -> None:
    """Wait until `pid` (our child) has died, leaving it unreaped."""
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)


def test_a_watcher_killed_just_before_a_watch_is_handed_to_it_is_replaced(
        ctx: ToolContext, root: Path) -> None:
    """Regression (issue 36): a watcher dead before its end of file was read made the next
    workspace.watch fail with BrokenPipeError (internal_error); now the watch goes on in a
    new watcher, and sees a change made after it is live."""
    changes: list[dict[str, Any]] = []

    async def run() -> None:
        watches = Watches(ctx, lambda: (), lambda: None)
        try:
            first = await asyncio.wait_for(watches.add(dict(SPEC), _collect(changes)), GUARD)
            old = watches._process
            os.kill(old.pid, signal.SIGKILL)
            _dead(old.pid)  # dead, and the loop has not run since: its end of file unread
            second = await asyncio.wait_for(watches.add(dict(SPEC), _collect(changes)), GUARD)
            assert second != first and watches._process is not old
            (root / "after.txt").write_text("made once the watch is live\n")
            while not any(c["path"] == "after.txt" and n["watch_id"] == second
                          for n in changes for c in n["changes"]):
                await asyncio.sleep(0.01)
        finally:
            watches.close()

    asyncio.run(asyncio.wait_for(run(), GUARD * 3))


def _collect(into: list[dict[str, Any]]):
    return lambda method, params: into.append(params)
