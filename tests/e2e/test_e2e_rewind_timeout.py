"""A rewind stopped part way by its request timeout (docs/protocol.md, History; Errors:
the reply tells the truth about the files).

Bug: the `timeout` answer said only that the request was stopped, while some files were
already back as at the checkpoint and others not; and the next rewind, which completes
the stopped one's journal first, answered `restored: []` although it put back every file
that was left. The error now says the rewind stopped part way and that rewinding again
completes it, and the next rewind lists the files it completed.
"""

from __future__ import annotations

import os
from pathlib import Path

from rewind_support import changed_since_checkpoint
from rpc_client import RpcServer, error_code

COUNT, SIZE = 150, 200_000


def test_a_timed_out_rewind_says_so_and_the_next_one_lists_what_it_completed(
        tmp_path: Path) -> None:
    ws, hist = tmp_path / "ws", tmp_path / "hist"
    ws.mkdir()
    before = {f"f{i:03}": os.urandom(SIZE) for i in range(COUNT)}
    cp = changed_since_checkpoint(ws, hist, before, lambda _: "after\n" * 30_000,
                                  "--workers", "1")
    with RpcServer(ws, "--workers", "1", "--history", str(hist),
                   "--request-timeout", "0.2") as server:
        stopped = server.call("workspace.rewind", {"checkpoint": cp}, timeout=60)
    assert error_code(stopped) == "timeout", stopped
    back = {n for n in before if (ws / n).read_bytes() == before[n]}
    assert len(back) < COUNT, "the rewind finished within the timeout: nothing to test"
    assert "stopped part way" in stopped["error"]["message"]
    assert "workspace.rewind again" in stopped["error"]["message"]
    with RpcServer(ws, "--workers", "1", "--history", str(hist)) as server:
        done = server.result("workspace.rewind", {"checkpoint": cp})
    assert done["restored"] == sorted(set(before) - back), done["restored"][:5]
    assert {n: (ws / n).read_bytes() for n in before} == before
