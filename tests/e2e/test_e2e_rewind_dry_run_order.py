"""A dry run is ordered as the change it previews (docs/protocol.md, Ordering; History).

Bug: a `workspace.rewind` with `dry_run: true` was ordered as a read of the root, which
waits for no change beneath it: pipelined after a write, it planned without that write
and previewed a rewind that was not the one the same call without `dry_run` makes.
"""

from __future__ import annotations

from pathlib import Path

from rpc_client import RpcServer


def test_a_dry_run_rewind_sent_after_a_write_previews_undoing_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with RpcServer(ws, "--workers", "2", "--history", str(tmp_path / "hist")) as server:
        cp = server.result("workspace.checkpoint", {})["checkpoint"]
        write, dry, real = server.call_many([
            ("file.write", {"path": "big.txt", "content": "x" * 30_000_000}),
            ("workspace.rewind", {"checkpoint": cp, "dry_run": True}),
            ("workspace.rewind", {"checkpoint": cp})])
        assert write["result"]["created"] is True
        assert dry["result"]["deleted"] == ["big.txt"], dry
        assert real["result"]["deleted"] == ["big.txt"], real
    assert not (ws / "big.txt").exists()
