"""MCP faults found by the third probe of docs/protocol.md's MCP sections, each a test
named after the fault, spoken over the real server's pipes or HTTP."""

from __future__ import annotations

from pathlib import Path

import pytest

from e2e_support import E2EServer, endless_tree, request
from http_server import HttpServer, initialize

CLIENT = {"name": "probe", "version": "1"}


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ws")
    (root / "a.txt").write_text("alpha\nbeta\n")
    return root


def test_initialize_sent_as_a_notification_does_not_initialize(ws: Path) -> None:
    """A notification gets no answer, so the client was never told a version: the real
    initialize that follows is the first, and answered, not refused as a second."""
    with E2EServer(ws, "--workers", "1") as server:
        server.notify("initialize", {"protocolVersion": "2024-11-05", "capabilities": {},
                                     "clientInfo": CLIENT})
        reply = server.call("initialize", {"protocolVersion": "2025-06-18",
                                           "capabilities": {}, "clientInfo": CLIENT})
        assert reply.get("result", {}).get("protocolVersion") == "2025-06-18", reply
        tools = server.result("tools/list")["tools"]
        assert all("outputSchema" in t for t in tools)  # 2025-06-18's shape, not 2024's


def test_a_refused_initialize_over_http_opens_no_session(ws: Path) -> None:
    """Mcp-Session-Id comes with an InitializeResult: an initialize answered with an
    error names no session, and a session id it would have named is unknown (404)."""
    with HttpServer(ws) as server:
        reply = server.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                     "params": ["2025-11-25"]})
        assert reply.status_code == 200
        assert reply.json()["error"]["code"] == -32602
        assert "mcp-session-id" not in reply.headers
        good = initialize(server)
        assert server.post("/mcp", {"jsonrpc": "2.0", "id": 2, "method": "ping"},
                           mcp_session_id=good).json()["result"] == {}


def test_a_progress_token_that_is_a_fractional_number_gets_progress(tmp_path: Path) -> None:
    """MCP's progressToken is a string or a number, any number: 2.5 is as good as 2."""
    endless_tree(tmp_path / "tree", links=4000)
    with E2EServer(tmp_path, "--workers", "2") as server:
        server.send(request("tools/call", {"name": "file_search", "arguments": {
            "pattern": "zebra", "include_ignored": True},
            "_meta": {"progressToken": 2.5}}, rid=1))
        note = server.recv(30)
        assert note.get("method") == "notifications/progress", note
        assert note["params"]["progressToken"] == 2.5
        server.send(request("notifications/cancelled", {"requestId": 1}))
        server.fence()


@pytest.mark.parametrize("version, said", [(None, "null"), (["x"], '["x"]'),
                                           ({"a": True}, '{"a": true}')])
def test_an_unsupported_meta_version_is_named_in_json_not_python(
        ws: Path, version: object, said: str) -> None:
    """-32022's message quotes what the client sent as JSON (`null`, `true`), never as
    Python's repr (`None`, `True`, single quotes)."""
    with E2EServer(ws, "--workers", "1") as server:
        reply = server.call("tools/list", {"_meta": {
            "io.modelcontextprotocol/protocolVersion": version}})
        assert reply["error"]["code"] == -32022
        assert f"Unsupported protocol version {said}:" in reply["error"]["message"]
        assert reply["error"]["data"]["requested"] == version


def test_a_json_rpc_response_posted_to_mcp_is_accepted_with_202(ws: Path) -> None:
    """MCP's Streamable HTTP (and docs/protocol.md): a POST of responses alone is 202
    with no body, as notifications are, never a 200 carrying -32600 for each."""
    with HttpServer(ws) as server:
        session = initialize(server)
        for message in ({"jsonrpc": "2.0", "id": 6, "result": {}},
                        [{"jsonrpc": "2.0", "id": "a", "error": {"code": -1, "message": "no"}},
                         {"jsonrpc": "2.0", "id": 7, "result": {"x": 1}}]):
            reply = server.post("/mcp", message, mcp_session_id=session)
            assert reply.status_code == 202, reply.text
            assert reply.content == b""
            assert reply.headers["mcp-session-id"] == session
        sessionless = server.post("/mcp", {"jsonrpc": "2.0", "id": 1, "result": {}})
        assert sessionless.status_code == 202 and sessionless.content == b""
        assert server.post("/mcp", {"jsonrpc": "2.0", "id": 2, "method": "ping"},
                           mcp_session_id=session).json()["result"] == {}


@pytest.mark.parametrize("tool, arguments, path", [
    ("Read", {"file_path": "file.list"}, "file.list"),
    ("Read", {"file_path": "file.read"}, "file.read"),
    ("LS", {"path": "file.info"}, "file.info"),
    ("Edit", {"file_path": "file.patch", "old_string": "a", "new_string": "b"}, "file.patch"),
])
def test_a_path_named_like_a_core_method_is_not_reworded(
        ws: Path, tool: str, arguments: dict[str, str], path: str) -> None:
    """A tool set says the core's method names in its own (file.list: LS), but a file the
    error names is that file: `Read file.list` is "File not found: file.list", never
    "File not found: LS" (the model would look for a file named LS)."""
    with E2EServer(ws, "--workers", "1", "--tools", "claude") as server:
        reply = server.call("tools/call", {"name": tool, "arguments": arguments})
        result = reply["result"]
        assert result["isError"] is True
        assert result["structuredContent"]["error"] == "file_not_found"
        said = result["content"][0]["text"]
        assert said.startswith(f"File not found: {path}"), said
        assert result["structuredContent"]["message"] == said
