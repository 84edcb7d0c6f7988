"""MCP 2026-07-28 over HTTP as the official conformance suite checks it (docs/protocol.md,
HTTP: MCP 2026-07-28), from a raw client: a stateless request needs a complete `_meta`
(400, -32602), headers that mirror its body (400, -32020), a version the server speaks
(400, -32022 naming them); the methods that revision removed are 404, -32601; every error
carries the request's id. Requests of the older versions are answered as before. The
suite itself runs in tests/e2e/test_http_node_clients.py where node is present."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from http_server import HttpServer, initialize

MODERN = "2026-07-28"
VERSION = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META = {VERSION: MODERN, CAPABILITIES: {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    ws = tmp_path_factory.mktemp("ws")
    (ws / "a.txt").write_text("alpha\n")
    with HttpServer(ws, "--workers", "1") as running:
        yield running


def post(server: HttpServer, method: Any, params: Any, rid: Any = 7,
         **headers: str) -> tuple[int, dict[str, Any]]:
    message = {"jsonrpc": "2.0", "id": rid, "method": method,
               **({"params": params} if params is not None else {})}
    reply = server.post("/mcp", message, **headers)
    return reply.status_code, reply.json()


def modern(method: str, name: str | None = None, **more: str) -> dict[str, str]:
    """The headers a 2026-07-28 client sends with `method`."""
    headers = {"mcp_protocol_version": MODERN, "mcp_method": method}
    if name is not None:
        headers["mcp_name"] = name
    return {**headers, **more}


@pytest.mark.parametrize("params", [
    {}, {"_meta": {CAPABILITIES: {}}}, {"_meta": {VERSION: MODERN}},
    {"_meta": {VERSION: MODERN, CAPABILITIES: ["sampling"]}}])
def test_a_stateless_request_with_a_missing_or_partial_meta_is_served_instead_of_400(
        server: HttpServer, params: dict[str, Any]) -> None:
    status, reply = post(server, "server/discover", params, rid=101,
                         **modern("server/discover"))
    assert status == 400 and reply["error"]["code"] == -32602, reply
    assert reply["id"] == 101 and reply["error"]["data"]["param"] == "_meta"


def test_client_info_is_not_required(server: HttpServer) -> None:
    status, reply = post(server, "server/discover", {"_meta": {
        VERSION: MODERN, CAPABILITIES: {}}}, **modern("server/discover"))
    assert status == 200 and reply["result"]["supportedVersions"][0] == MODERN


@pytest.mark.parametrize("headers", [
    {"mcp_protocol_version": MODERN},  # Mcp-Method missing
    {"mcp_protocol_version": MODERN, "mcp_method": "prompts/list"},
    {"mcp_protocol_version": MODERN, "mcp_method": "TOOLS/LIST"},  # values are exact
    {"mcp_method": "tools/list"},  # MCP-Protocol-Version missing
    {"mcp_protocol_version": "2025-11-25", "mcp_method": "tools/list"},
])
def test_mcp_method_and_protocol_version_headers_are_never_checked_against_the_body(
        server: HttpServer, headers: dict[str, str]) -> None:
    status, reply = post(server, "tools/list", {"_meta": META}, rid="x-1", **headers)
    assert status == 400 and reply["error"]["code"] == -32020, reply
    assert reply["id"] == "x-1" and reply["error"]["data"]["error"] == "header_mismatch"


@pytest.mark.parametrize("name", [None, "file_write", "=?base64?ZmlsZV9yZWFk", "=?base64?!!?="])
def test_a_tools_call_whose_mcp_name_is_missing_or_differs_is_served_instead_of_400(
        server: HttpServer, name: str | None) -> None:
    status, reply = post(server, "tools/call", {"_meta": META, "name": "file_read",
                                                "arguments": {"path": "a.txt"}},
                         **modern("tools/call", name))
    assert status == 400 and reply["error"]["code"] == -32020, reply
    assert reply["id"] == 7


@pytest.mark.parametrize("name", ["file_read",
                                  "=?base64?" + base64.b64encode(b"file_read").decode() + "?="])
def test_mcp_name_is_compared_after_base64_decoding(
        server: HttpServer, name: str) -> None:
    status, reply = post(server, "tools/call", {"_meta": META, "name": "file_read",
                                                "arguments": {"path": "a.txt"}},
                         **modern("tools/call", name))
    assert status == 200, reply
    assert reply["result"]["structuredContent"]["content"] == "     1\talpha"


@pytest.mark.parametrize("method", ["initialize", "ping", "logging/setLevel",
                                    "resources/subscribe", "resources/unsubscribe",
                                    "unknown/method"])
def test_methods_removed_in_2026_07_28_get_200_instead_of_404(
        server: HttpServer, method: str) -> None:
    status, reply = post(server, method, {"_meta": META}, rid=500, **modern(method))
    assert status == 404 and reply["error"]["code"] == -32601, reply
    assert reply["id"] == 500


def test_a_stateless_initialize_opens_no_session(server: HttpServer) -> None:
    reply = server.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "_meta": META, "protocolVersion": "2025-11-25", "capabilities": {}}},
        **modern("initialize"))
    assert reply.status_code == 404 and "mcp-session-id" not in reply.headers


def test_an_unsupported_version_error_carries_id_null_instead_of_the_requests(
        server: HttpServer) -> None:
    status, reply = post(server, "server/discover", {"_meta": {**META, VERSION: "v999.0.0"}},
                         rid=301, **modern("server/discover", mcp_protocol_version="v999.0.0"))
    discovered = post(server, "server/discover", {"_meta": META},
                      **modern("server/discover"))[1]["result"]
    assert status == 400 and reply["id"] == 301
    assert reply["error"]["code"] == -32022
    assert reply["error"]["data"]["requested"] == "v999.0.0"
    assert reply["error"]["data"]["supported"] == discovered["supportedVersions"]


def test_a_header_naming_another_version_than_meta_is_a_mismatch(server: HttpServer) -> None:
    status, reply = post(server, "server/discover", {"_meta": {**META, VERSION: "v999.0.0"}},
                         rid=302, **modern("server/discover"))
    assert status == 400 and reply["error"]["code"] == -32020 and reply["id"] == 302


def test_a_modern_request_ignores_a_session_id(server: HttpServer) -> None:
    status, reply = post(server, "tools/list", {"_meta": META},
                         **modern("tools/list", mcp_session_id="no-such-session"))
    assert status == 200 and reply["result"]["resultType"] == "complete"


def test_older_clients_see_no_change(server: HttpServer) -> None:
    """No header, or a handshake version's: no header is required, an unknown method is
    200 with -32601 as before, ping and initialize are served."""
    session = initialize(server, "2025-06-18")
    status, reply = post(server, "ping", None, mcp_session_id=session,
                         mcp_protocol_version="2025-06-18")
    assert status == 200 and reply["result"] == {}
    status, reply = post(server, "unknown/method", None, mcp_session_id=session,
                         mcp_protocol_version="2025-06-18")
    assert status == 200 and reply["error"]["code"] == -32601
    status, reply = post(server, "tools/list", None)  # sessionless, no header at all
    assert status == 200 and "resultType" not in reply["result"]
    status, reply = post(server, "ping", None, rid=9, mcp_protocol_version="1900-01-01")
    assert status == 400 and reply["error"]["code"] == -32022 and reply["id"] == 9


@pytest.mark.parametrize("method", [[], ["tools/call"], {"a": 1}, 5])
def test_a_method_that_is_no_string_is_an_invalid_request_not_500(server: HttpServer,
                                                                  method: Any) -> None:
    """A 2026-07-28 POST whose `method` is no string was 500 "Internal server error":
    checking its Mcp-Name header looked the method up in a table and could not hash it.
    It is an invalid request like any other (-32600 with its id)."""
    status, reply = post(server, method, {"name": "file_read", "_meta": META}, rid=3,
                         **modern("tools/call", "file_read"))
    assert status != 500 and reply["error"]["code"] == -32600 and reply["id"] == 3, reply


def test_a_tool_name_that_is_no_string_is_invalid_params(server: HttpServer) -> None:
    status, reply = post(server, "tools/call", {"name": [], "arguments": {}, "_meta": META},
                         rid=4, **modern("tools/call"))
    assert status != 500 and reply["error"]["code"] == -32602, reply
    assert reply["error"]["data"]["param"] == "name"
    _, served = post(server, "tools/call", {"name": "file_read", "_meta": META,
                                            "arguments": {"path": "a.txt"}},
                     rid=5, **modern("tools/call", "file_read"))
    assert served["result"]["isError"] is False
