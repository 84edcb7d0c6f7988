"""A POST to /mcp speaking MCP 2026-07-28 whose `method` is not a string (an array, an
object) was answered 500 "Internal server error": checking its Mcp-Name header looked the
method up in a table and could not hash it. It is an invalid request like any other
(-32600 with its id, docs/protocol.md, Errors), every other request is still served, and
the tool name given as an array is -32602 naming `name` (rpc/mcp/face.py)."""

from __future__ import annotations

from typing import Any

import pytest

from http_server import HttpServer

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    ws = tmp_path_factory.mktemp("ws")
    (ws / "a.txt").write_text("alpha\n")
    with HttpServer(ws, "--workers", "1") as running:
        yield running


@pytest.mark.parametrize("method", [[], ["tools/call"], {"a": 1}, 5])
def test_a_method_that_is_no_string_is_an_invalid_request(server: HttpServer,
                                                          method: Any) -> None:
    reply = server.post("/mcp", {"jsonrpc": "2.0", "id": 3, "method": method,
                                 "params": {"name": "file_read", "_meta": META}},
                        mcp_protocol_version=MODERN, mcp_method="tools/call",
                        mcp_name="file_read")
    assert reply.status_code != 500, reply.text
    body = reply.json()
    assert body["error"]["code"] == -32600 and body["id"] == 3, body


def test_a_tool_name_that_is_no_string_is_invalid_params(server: HttpServer) -> None:
    reply = server.post("/mcp", {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                                 "params": {"name": [], "arguments": {}, "_meta": META}},
                        mcp_protocol_version=MODERN, mcp_method="tools/call")
    assert reply.status_code != 500, reply.text
    body = reply.json()
    assert body["error"]["code"] == -32602 and body["error"]["data"]["param"] == "name"
    served = server.post("/mcp", {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                                  "params": {"name": "file_read", "_meta": META,
                                             "arguments": {"path": "a.txt"}}},
                         mcp_protocol_version=MODERN, mcp_method="tools/call",
                         mcp_name="file_read")
    assert served.json()["result"]["isError"] is False
