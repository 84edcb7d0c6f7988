"""A change refused `shutting_down` by the drain is an audit record (docs/protocol.md,
Audit records: "one JSON object per mutating call, failed ones included"), over plain
JSON-RPC and MCP tools/call alike, with the untouched file's hash before and after.
Regression: the drain answered them before the invoker saw them, so no line was written."""

from __future__ import annotations

import hashlib
import json
import signal
from pathlib import Path
from typing import Any

from e2e_support import E2EServer, draining, slow_workspace

MCP_INIT = {"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "drain-records", "version": "1"}}


def test_changes_refused_by_the_drain_are_recorded(tmp_path: Path) -> None:
    ws, records = slow_workspace(_made(tmp_path / "ws")), tmp_path / "records"
    with E2EServer(ws, "--workers", "2", "--records", str(records),
                   "--log-level", "info") as server:
        server.result("initialize", MCP_INIT)
        server.workers(2)
        server.request("file.read", {"path": "slow.txt", "limit": 1}, rid="slow")
        server.running(ws / "slow.txt")
        server.proc.send_signal(signal.SIGTERM)
        draining(server)
        server.request("file.write", {"path": "a.txt", "content": "lost\n"}, rid="write")
        server.request("file.delete", {"path": "missing.txt"}, rid="delete")
        server.request("file.read", {"path": "a.txt"}, rid="read")
        server.request("tools/call", {"name": "file_write", "arguments": {
            "path": "a.txt", "content": "lost\n"}}, rid="tool")
        replies = {(r := server.recv(timeout=60))["id"]: r for _ in range(5)}
        assert server.proc.wait(15) == 0
    assert replies["tool"]["result"]["structuredContent"]["error"] == "shutting_down"
    assert (ws / "a.txt").read_text() == "alpha\nbeta\n"
    lines = [json.loads(ln) for ln in (records / "records.jsonl").read_text().splitlines()]
    by_id: dict[Any, dict[str, Any]] = {ln["id"]: ln for ln in lines}
    assert sorted(by_id) == ["delete", "tool", "write"]  # the reads are no changes
    digest = hashlib.sha256(b"alpha\nbeta\n").hexdigest()
    for rid, method, path in (("write", "file.write", "a.txt"),
                              ("delete", "file.delete", "missing.txt"),
                              ("tool", "file.write", "a.txt")):  # the core method
        line = by_id[rid]
        assert (line["method"], line["path"], line["outcome"], line["bytes"]) == (
            method, path, "shutting_down", 0), line
        expected = None if path == "missing.txt" else digest
        assert line["sha256_before"] == line["sha256_after"] == expected, line


def _made(directory: Path) -> Path:
    directory.mkdir()
    return directory
