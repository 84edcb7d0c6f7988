"""One history directory, several servers (docs/protocol.md, History): the byte budget is
the directory's, whoever writes to it, and each server still reads the others' versions."""

from __future__ import annotations

import os
from pathlib import Path

from rpc_client import RpcServer

BUDGET = 131072


def packs(hist: Path) -> int:
    return sum(p.stat().st_size for p in (hist / "packs").iterdir())


def test_two_servers_sharing_a_history_stay_within_its_budget_together(tmp_path: Path) -> None:
    """The fault: 254,510 B of packs against --history-bytes 131072 (1.94x), each server
    evicting only the packs it knew."""
    hist = tmp_path / "history"
    roots = [tmp_path / "one", tmp_path / "two"]
    for root in roots:
        root.mkdir()
    servers = [RpcServer(root, "--history", str(hist), "--history-bytes", str(BUDGET),
                         "--workers", "1") for root in roots]
    try:
        for n in range(24):  # each write replaces 12 KiB nobody kept before
            for i, srv in enumerate(servers):
                srv.result("file.write", {"path": "f.bin",
                                          "content": os.urandom(6 << 10).hex()})
                assert packs(hist) <= BUDGET, (n, i, packs(hist))
        newest = [srv.result("file.history", {"path": "f.bin"})["versions"][0]
                  for srv in servers]
        assert all(not v["evicted"] for v in newest)  # the oldest go first, never the newest
        for srv in servers:
            listed = srv.result("file.history", {"path": "f.bin", "limit": 100})
            assert listed["total"] == 2 * 24 and listed["evicted"] > 0
    finally:
        for srv in servers:
            srv.close()
    assert packs(hist) <= BUDGET
