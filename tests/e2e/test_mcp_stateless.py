"""MCP 2026-07-28 over stdio, spawned for real (docs/protocol.md, MCP): `server/discover`
and requests that carry their version in `_meta`, served without `initialize`; the older
versions' answers unchanged beside them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rpc_client import RpcServer

MODERN = "2026-07-28"
LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
META_VERSION = "io.modelcontextprotocol/protocolVersion"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def meta(version: str = MODERN, **more: Any) -> dict[str, Any]:
    return {"_meta": {META_VERSION: version,
                      "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                      "io.modelcontextprotocol/clientCapabilities": {}}, **more}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "notes.md").write_text("# Notes\nship it\n")
    return tmp_path


def test_server_discover_answers_before_anything_else(ws: Path) -> None:
    with RpcServer(ws, "--workers", "1") as server:
        found = server.result("server/discover", meta())
    assert found["supportedVersions"][0] == MODERN
    assert set(found["supportedVersions"]) == {MODERN, *LEGACY}
    assert found["capabilities"] == {"tools": {"listChanged": False}}
    assert found["_meta"][SERVER_INFO]["name"] == "chorus-tools"
    assert found["serverInfo"] == found["_meta"][SERVER_INFO]
    assert 0 < len(found["instructions"].encode()) <= 400
    assert found["resultType"] == "complete"
    assert found["ttlMs"] >= 0 and found["cacheScope"] in ("public", "private")


def test_server_discover_is_answered_without_meta_and_after_initialize(ws: Path) -> None:
    """The stdio probe of a dual-era client, and a legacy session asking too."""
    with RpcServer(ws, "--workers", "1") as server:
        bare = server.result("server/discover")
        server.result("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "t", "version": "1"}})
        after = server.result("server/discover")
    assert bare == after
    assert bare["resultType"] == "complete"


def test_a_stateless_tool_call_needs_no_initialize(ws: Path) -> None:
    with RpcServer(ws, "--workers", "1") as server:
        listed = server.result("tools/list", meta())
        called = server.result("tools/call", meta(name="file_search",
                                                  arguments={"pattern": "ship"}))
        failed = server.result("tools/call", meta(name="file_read",
                                                  arguments={"path": "missing.md"}))
    assert listed["resultType"] == "complete"
    assert listed["ttlMs"] > 0 and listed["cacheScope"] == "public"
    assert listed["_meta"][SERVER_INFO]["name"] == "chorus-tools"
    assert all("outputSchema" in tool for tool in listed["tools"])
    assert called["resultType"] == "complete" and called["isError"] is False
    assert called["content"] == [{"type": "text", "text": "notes.md:2:ship it"}]
    assert failed["resultType"] == "complete" and failed["isError"] is True
    assert failed["structuredContent"]["error"] == "file_not_found"


def test_an_unsupported_version_names_the_supported_ones(ws: Path) -> None:
    with RpcServer(ws, "--workers", "1") as server:
        reply = server.call("tools/list", meta("1900-01-01"))
    assert reply["error"]["code"] == -32022
    assert reply["error"]["data"]["requested"] == "1900-01-01"
    assert MODERN in reply["error"]["data"]["supported"]


@pytest.mark.parametrize("version", LEGACY)
def test_older_versions_see_no_change(ws: Path, version: str) -> None:
    with RpcServer(ws, "--workers", "1") as server:
        init = server.result("initialize", {"protocolVersion": version, "capabilities": {},
                                            "clientInfo": {"name": "t", "version": "1"}})
        server.notify("notifications/initialized")
        listed = server.result("tools/list")
        called = server.result("tools/call", {"name": "file_search",
                                              "arguments": {"pattern": "ship"}})
    assert init["protocolVersion"] == version
    assert set(init) == {"protocolVersion", "capabilities", "serverInfo", "instructions"}
    assert set(listed) == {"tools"}
    assert set(called) == {"content", "structuredContent", "isError"}


def test_a_session_serves_both_eras_at_once(ws: Path) -> None:
    """A legacy session that also receives a stateless request answers each in its own
    form (the revision lets a dual-era server serve both on one process)."""
    with RpcServer(ws, "--workers", "1") as server:
        server.result("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                     "clientInfo": {"name": "t", "version": "1"}})
        legacy = server.result("tools/list")
        modern = server.result("tools/list", meta())
    assert "resultType" not in legacy and "ttlMs" not in legacy
    assert modern["resultType"] == "complete"
    assert modern["tools"] == legacy["tools"]


def test_tools_are_listed_in_the_same_order_by_every_process(ws: Path) -> None:
    orders = []
    for _ in range(2):
        with RpcServer(ws, "--workers", "1", "--tools", "native,claude") as server:
            first = server.result("tools/list", meta())["tools"]
            again = server.result("tools/list", meta())["tools"]
        assert first == again
        orders.append([tool["name"] for tool in first])
    assert orders[0] == orders[1]


def test_initialize_negotiates_only_the_handshake_versions(ws: Path) -> None:
    """2026-07-28 has no handshake: a client initializing with it is answered in the
    newest version that has one, and its session goes on as before."""
    with RpcServer(ws, "--workers", "1") as server:
        init = server.result("initialize", {"protocolVersion": MODERN, "capabilities": {},
                                            "clientInfo": {"name": "t", "version": "1"}})
        listed = server.result("tools/list")
    assert init["protocolVersion"] == LEGACY[-1]
    assert "resultType" not in listed


@pytest.mark.parametrize("params", [{"_meta": {META_VERSION: MODERN}},
                                    {"_meta": {META_VERSION: MODERN,
                                               "io.modelcontextprotocol/clientCapabilities": 1}}])
def test_a_stateless_request_without_client_capabilities_is_invalid_params(
        ws: Path, params: dict[str, Any]) -> None:
    with RpcServer(ws, "--workers", "1") as server:
        reply = server.call("tools/list", params)
    assert reply["error"]["code"] == -32602 and reply["error"]["data"]["param"] == "_meta"


@pytest.mark.parametrize("method", ["initialize", "ping"])
def test_methods_the_revision_removed_are_not_found_for_its_requests(
        ws: Path, method: str) -> None:
    """A stateless request naming a method 2026-07-28 removed is -32601; the same method
    without that `_meta` is served as before."""
    with RpcServer(ws, "--workers", "1") as server:
        reply = server.call(method, meta())
        assert reply["error"]["code"] == -32601, reply
        assert server.result("ping") == {}
