"""The history is out of the agent's reach: a worker in its Landlock domain streams what a
write replaces into the spool the dispatcher opened for it, and can do nothing else with
the history directory (no read, no write, no new file), whatever path handling bug it has."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from security.test_confinement import in_child

from chorus_tools.rpc.dispatch.history import History
from chorus_tools.tools.confine import landlock
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.mutate import keep
from chorus_tools.tools.mutate.write import write

pytestmark = pytest.mark.skipif(landlock.abi_version() == 0,
                                reason="this kernel has no Landlock (the layer under test)")


def test_a_confined_worker_writes_its_spool_and_nothing_else_of_the_history(
        root: Path, tmp_path: Path) -> None:
    hist = tmp_path / "history"
    store = History(str(hist), 1 << 30)
    ws = Workspace(str(root))
    spools = store.spools(2)
    ctx = ToolContext(ws=ws, history_spools=spools)
    old = os.urandom(3 * keep.INLINE_MAX)
    (root / "big.bin").write_bytes(old)
    (hist / "log.jsonl").write_bytes(b"")

    def worker() -> dict[str, str]:
        keep._spool = None
        ctx.record = {}
        write(ctx, "big.bin", "new")
        seen = {"kept": repr(ctx.record["kept"][0]["spool"])}
        for name, attempt in [
            ("read log", lambda: (hist / "log.jsonl").read_bytes()),
            ("append log", lambda: os.open(hist / "log.jsonl", os.O_WRONLY | os.O_APPEND)),
            ("list packs", lambda: os.listdir(hist / "packs")),
            ("new spool", lambda: (hist / "spool" / "9").write_bytes(b"x")),
            ("list spools", lambda: os.listdir(hist / "spool")),
        ]:
            try:
                seen[name] = f"ok {attempt()!r}"
            except PermissionError:
                seen[name] = "refused"
        return seen

    seen = in_child(ctx, worker)
    assert seen.pop("kept") == "(0, 0)"
    assert set(seen.values()) == {"refused"}, seen
    assert os.pread(spools[0], len(old), 0) == old
    assert (hist / "log.jsonl").read_bytes() == b""
    store.close()
    os.close(ws.root_fd)
