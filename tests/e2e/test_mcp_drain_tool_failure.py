"""An MCP tools/call that arrives while the server drains (docs/protocol.md, MCP: "a tool
failure (every error of the Errors table except the protocol ones) is a result with
`isError: true`"): `shutting_down` is in that table, so the model gets it as a result it
can read, as it gets `server_busy`; plain JSON-RPC and MCP's own methods keep the error
response. Found by probing: the drain answered tools/call with a JSON-RPC error -32027."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

from e2e_support import draining
from rpc_client import RpcServer

SLOW = "(a|aa)*[^a]"  # the python engine backtracks on every line of these files


def _reply(server: RpcServer, rid: Any) -> dict[str, Any]:
    """The response to `rid`, past progress notices and the long search's answer."""
    while (message := server.recv()).get("id") != rid:
        pass
    return message


def test_a_tools_call_during_the_drain_is_an_is_error_result(tmp_path: Path) -> None:
    for i in range(8):
        (tmp_path / f"slow{i}.txt").write_text(("a" * 21 + "\n") * 40)
    with RpcServer(tmp_path, "--search-engine", "python", "--workers", "1",
                   "--log-level", "info") as server:
        server.result("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "drain", "version": "1"}})
        server.request("tools/call", {"name": "file_search", "arguments": {"pattern": SLOW},
                                      "_meta": {"progressToken": "p"}}, "long")
        assert server.recv()["method"] == "notifications/progress"  # it runs: the drain waits
        server.proc.send_signal(signal.SIGTERM)
        draining(server)  # else the next call may be queued behind the long search
        plain = _reply(server, server.request("file.info", {"path": "slow0.txt"}, "plain"))
        assert plain["error"]["code"] == -32027, plain  # plain JSON-RPC: the error response
        late = _reply(server, server.request("tools/call", {
            "name": "file_read", "arguments": {"path": "slow0.txt"}}, "late"))
        assert "result" in late, late
        result = late["result"]
        assert result["isError"] is True, result
        assert result["structuredContent"]["error"] == "shutting_down"
        assert "shutting down" in result["content"][0]["text"]
        listed = _reply(server, server.request("tools/list", {}, "list"))
        assert listed["error"]["code"] == -32027, listed
