"""The history's index in memory: a long-lived server keeps changes for ever, so what it
holds in memory per change must stay a few tens of bytes (the log lines stay on disk)."""

from __future__ import annotations

import asyncio
import gc
import hashlib
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from chorus_tools.rpc.dispatch.history import History

pytestmark = pytest.mark.long  # 20,000 changes a test, traced: seconds each
CHANGES = 20_000
BOUND = 100  # bytes a change; the log line itself is ~150 and a parsed entry ~600


def _item(path: str, data: bytes) -> dict[str, Any]:
    return {"path": path, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data),
            "mode": 0o644, "data": data, "spool": None, "after": f"v-{len(data)}"}


def _bytes_per_change(history: History, path_of: Any) -> float:
    async def run() -> int:
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for n in range(CHANGES):
            await history.keep("file.write", [_item(path_of(n), b"content %d" % n)])
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before

    tracemalloc.start()
    try:
        return asyncio.run(run()) / CHANGES
    finally:
        tracemalloc.stop()


def test_regression_history_index_grows_600_bytes_per_change(tmp_path: Path) -> None:
    """20,000 writes of one file, each replacing a distinct content (all within budget)."""
    history = History(str(tmp_path), 1 << 30)
    try:
        per_change = _bytes_per_change(history, lambda n: "src/app.py")
        assert per_change < BOUND, f"{per_change:.0f} bytes a change"
        got = history.versions("src/app.py", 2)
        assert got["total"] == CHANGES and got["evicted"] == 0
        assert history.read(got["versions"][0]["sha256"]) == b"content %d" % (CHANGES - 1)
    finally:
        history.close()


def test_regression_history_index_of_many_paths_stays_small(tmp_path: Path) -> None:
    """20,000 writes spread over 20,000 paths: nor does a path cost its name in memory."""
    history = History(str(tmp_path), 1 << 30)
    try:
        per_change = _bytes_per_change(history, lambda n: f"src/module_{n:05d}.py")
        assert per_change < BOUND, f"{per_change:.0f} bytes a change"
        (version,) = history.versions("src/module_12345.py", 20)["versions"]
        assert history.read(version["sha256"]) == b"content 12345"
    finally:
        history.close()
