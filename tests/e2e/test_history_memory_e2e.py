"""Through the real server: the dispatcher's memory does not grow with the changes its
history keeps (a long-lived server used by many agents keeps millions)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rpc_client import RpcServer

WARM_UP, CHANGES, BATCH = 2_000, 20_000, 100
BOUND = 250  # bytes of RSS a change; the index holding the lines in memory took ~600


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _writes(server: RpcServer, start: int, count: int) -> None:
    """`count` file.write calls over 50 files, each replacing a distinct content,
    sent a batch at a time."""
    for base in range(start, start + count, BATCH):
        for n in range(base, base + BATCH):
            server.request("file.write", {"path": f"src/f{n % 50}.py",
                                          "content": f"x = {n}\n"})
        for _ in range(BATCH):
            reply = server.recv(60)
            assert "result" in reply, reply


@pytest.mark.long
def test_regression_history_index_grows_600_bytes_per_change_in_the_server(
        tmp_path: Path) -> None:
    ws, history = tmp_path / "ws", tmp_path / "history"
    ws.mkdir()
    server = RpcServer(ws, "--history", str(history))
    try:
        _writes(server, 0, WARM_UP)
        before = _rss(server.proc.pid)
        _writes(server, WARM_UP, CHANGES)
        after = _rss(server.proc.pid)
        got = server.result("file.history", {"path": "src/f7.py", "limit": 1})
        assert got["total"] == (WARM_UP + CHANGES) // 50  # the first: no file before
    finally:
        server.close()
    per_change = (after - before) / CHANGES
    print(f"dispatcher RSS {before / 2**20:.1f} -> {after / 2**20:.1f} MiB: "
          f"{per_change:.0f} bytes a change")
    assert per_change < BOUND, f"{per_change:.0f} bytes a change"
