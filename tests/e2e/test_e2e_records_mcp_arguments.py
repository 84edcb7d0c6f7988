"""An MCP tools/call of a mutating tool whose `arguments` is no object is an audit record
(docs/protocol.md, Audit records: calls refused as invalid_params are recorded too).

Bug: the MCP face refused such a call (-32602, param `arguments`) before the invoker saw
it, so no line was written, while the same refusal over plain JSON-RPC (`params` an
array) was recorded.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rpc_client import RpcServer, error_code


@pytest.mark.parametrize("arguments", ["a.txt", ["a.txt", "x"], 7])
def test_a_mutating_tool_called_with_arguments_not_an_object_is_recorded(
        tmp_path: Path, arguments: object) -> None:
    ws, records = tmp_path / "ws", tmp_path / "records"
    ws.mkdir()
    (ws / "a.txt").write_text("kept\n")
    with RpcServer(ws, "--records", str(records)) as server:
        server.result("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "probe", "version": "1"}})
        server.request("tools/call", {"name": "file_write", "arguments": arguments}, rid="w")
        reply = server.recv()
        assert reply["id"] == "w" and error_code(reply) == "invalid_params", reply
        assert reply["error"]["data"]["param"] == "arguments"
        read = server.call("tools/call", {"name": "file_read", "arguments": "a.txt"})
        assert error_code(read) == "invalid_params"  # a read: refused, never recorded
        lines = [json.loads(line) for line in
                 (records / "records.jsonl").read_text().splitlines()]
    assert [(r["id"], r["method"], r["path"], r["outcome"], r["bytes"]) for r in lines] == [
        ("w", "file.write", None, "invalid_params", 0)]
    assert (ws / "a.txt").read_text() == "kept\n"
