"""Regression: an MCP tools/call whose tool failed (answered, as MCP wants, as a result
with `isError: true`) was counted in chorus_requests_total and logged with outcome `ok`,
so an operator saw no failure at all from MCP clients (docs/protocol.md, Running many:
an outcome is `ok` or a name of the error table). Its outcome is now the tool's error."""

from __future__ import annotations

import json
import time
from pathlib import Path

from e2e_support import E2EServer

INITIALIZE = {"protocolVersion": "2025-06-18", "capabilities": {},
              "clientInfo": {"name": "probe", "version": "1"}}


def test_a_failed_tool_call_counts_and_logs_the_tools_error(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    with E2EServer(tmp_path, "--workers", "1", "--log-format", "json",
                   "--log-requests") as server:
        assert "result" in server.call("initialize", INITIALIZE)
        failed = server.call("tools/call", {"name": "file_read",
                                            "arguments": {"path": "missing.txt"}})
        assert failed["result"]["isError"] is True
        worked = server.call("tools/call", {"name": "file_read",
                                            "arguments": {"path": "a.txt"}})
        assert worked["result"]["isError"] is False
        counted = {(entry["method"], entry["outcome"]): entry["value"] for entry in
                   server.result("rpc.metrics", {})["chorus_requests_total"]}
        assert server.close() == 0
    assert counted[("tools/call", "file_not_found")] == 1
    assert counted[("tools/call", "ok")] == 1
    time.sleep(0.1)
    lines = [json.loads(line) for line in server.stderr.splitlines() if line.strip()]
    calls = [(e["path"], e["outcome"]) for e in lines
             if e["event"] == "request" and e["method"] == "tools/call"]
    assert calls == [("missing.txt", "file_not_found"), ("a.txt", "ok")]
