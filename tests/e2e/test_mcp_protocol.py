"""The MCP face over raw pipes (docs/protocol.md, MCP): version negotiation, the one
initialize, ping, tools before initialize, plain file.* on the same connection, isError
shapes, cancellation and progress. The official SDK's view is in test_mcp_sdk.py."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from e2e_support import E2EServer, endless_tree, error_of, request, wait_for
from chorus_tools.tools.registry import METHODS

NEWEST = "2025-11-25"
CLIENT = {"name": "raw-test", "version": "1"}


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ws")
    (root / "a.txt").write_text("alpha\nbeta\n")
    return root


def initialize(server: E2EServer, version: Any = NEWEST) -> dict[str, Any]:
    reply = server.call("initialize", {"protocolVersion": version, "capabilities": {},
                                       "clientInfo": CLIENT})
    assert "result" in reply, reply
    return reply["result"]


def tool(server: E2EServer, name: str, arguments: Any, **extra: Any) -> dict[str, Any]:
    reply = server.call("tools/call", {"name": name, "arguments": arguments, **extra})
    assert "result" in reply, reply
    return reply["result"]


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", NEWEST])
def test_a_supported_version_is_echoed(ws: Path, version: str) -> None:
    with E2EServer(ws, "--workers", "1") as server:
        result = initialize(server, version)
        assert result["protocolVersion"] == version
        assert result["capabilities"] == {"tools": {"listChanged": False}}
        assert result["serverInfo"]["name"] == "chorus-tools"
        assert result["serverInfo"]["version"]
        assert "workspace" in result["instructions"] and "hint" in result["instructions"]
        tools = server.result("tools/list")["tools"]
        with_schema = version >= "2025-06-18"
        assert all(("outputSchema" in t) == with_schema for t in tools), version


@pytest.mark.parametrize("version", ["2099-01-01", "1.0", None, 5])
def test_an_unknown_version_gets_the_newest(ws: Path, version: Any) -> None:
    with E2EServer(ws, "--workers", "1") as server:
        assert initialize(server, version)["protocolVersion"] == NEWEST


def test_one_connection_speaks_mcp_and_plain_json_rpc(ws: Path) -> None:
    with E2EServer(ws, "--workers", "1") as server:
        # lenient: tools before initialize are served, with the newest version's shape
        listed = server.result("tools/list")["tools"]
        assert all("outputSchema" in t for t in listed)
        assert tool(server, "file_read", {"path": "a.txt"})["isError"] is False
        initialize(server)
        server.notify("notifications/initialized")
        assert server.result("ping") == {}
        second = server.call("initialize", {"protocolVersion": NEWEST, "capabilities": {},
                                            "clientInfo": CLIENT})
        assert error_of(second) == (-32600, "invalid_request")
        assert "already initialized" in second["error"]["message"]
        assert server.result("file.read", {"path": "a.txt"})["total_lines"] == 2
        assert tool(server, "file_read", {"path": "a.txt"})["structuredContent"][
            "total_lines"] == 2
        server.fence()  # the notification got no reply


def test_tools_list_follows_the_registry(ws: Path) -> None:
    with E2EServer(ws, "--workers", "1") as server:
        tools = {t["name"]: t for t in server.result("tools/list")["tools"]}
    native = [m for m in METHODS.values() if m.toolset == "native" and m.mcp_tool]
    assert set(tools) == {m.name.replace(".", "_") for m in native}
    assert "workspace_watch" not in tools  # its notifications would reach no model
    for method in native:
        listed = tools[method.tool_name]
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", listed["name"])
        assert listed["inputSchema"] == method.params
        assert listed["outputSchema"]["type"] == "object"
        result, failure = listed["outputSchema"]["anyOf"]
        assert result == method.reply and failure["required"] == ["error", "message"]
        assert listed["title"] and listed["description"] != listed["title"]
        assert listed["annotations"] == {
            "title": listed["title"], "readOnlyHint": not method.mutating,
            "destructiveHint": method.destructive, "idempotentHint": method.idempotent,
            "openWorldHint": False}
    assert tools["file_read"]["annotations"]["readOnlyHint"] is True
    assert tools["file_delete"]["annotations"]["destructiveHint"] is True


def test_tool_failures_are_is_error_results_and_protocol_faults_errors(ws: Path) -> None:
    with E2EServer(ws, "--workers", "1") as server:
        initialize(server)
        missing = tool(server, "file_read", {"path": "nope.txt"})
        assert missing["isError"] is True
        assert missing["content"] == [{"type": "text",
                                       "text": missing["structuredContent"]["message"]}]
        assert missing["structuredContent"]["error"] == "file_not_found"
        assert missing["structuredContent"]["path"] == "nope.txt"

        patch = tool(server, "file_patch", {"path": "a.txt", "patches": [
            {"find": "alpha\nbeto", "replace": "x"}]})
        assert patch["isError"] is True
        data = patch["structuredContent"]
        assert data["error"] == "find_not_found" and data["hint"]["start_line"] == 1

        bad = tool(server, "file_read", {"path": "a.txt", "colour": "red"})
        assert bad["isError"] is True
        assert bad["structuredContent"]["error"] == "invalid_params"
        assert bad["structuredContent"]["param"] == "colour"
        assert (ws / "a.txt").read_text() == "alpha\nbeta\n"

        for params, param in [({"name": "file_nope", "arguments": {}}, "name"),
                              ({"name": 7}, "name"), ({}, "name"),
                              ({"name": "file_read", "arguments": ["a.txt"]}, "arguments"),
                              ({"name": "file_read", "arguments": "a.txt"}, "arguments")]:
            reply = server.call("tools/call", params)
            assert error_of(reply) == (-32602, "invalid_params"), params
            assert reply["error"]["data"]["param"] == param
        assert error_of(server.call("tools/call", ["file_read"])) == (-32602, "invalid_params")
        assert error_of(server.call("resources/list")) == (-32601, "method_not_found")


def test_content_is_what_a_model_reads(ws: Path) -> None:
    with E2EServer(ws, "--workers", "1") as server:
        initialize(server)
        read = tool(server, "file_read", {"path": "a.txt", "limit": 1})
        assert read["content"][0] == {"type": "text", "text": "     1\talpha"}
        assert "offset 2" in read["content"][1]["text"]
        found = tool(server, "file_search", {"pattern": "a$"})
        assert found["content"] == [{"type": "text", "text": "a.txt:1:alpha\na.txt:2:beta"}]
        counted = tool(server, "file_search", {"pattern": "a", "output_mode": "count"})
        assert counted["content"][0]["text"] == "a.txt:2"
        none = tool(server, "file_search", {"pattern": "zulu"})
        assert none["structuredContent"]["matches"] == []
        assert [b["text"] for b in none["content"]] == ["", "No matches."]
        listed = tool(server, "file_list", {})
        assert listed["content"][0]["text"] == "a.txt"
        info = tool(server, "file_info", {"path": "a.txt"})
        assert info["content"][0]["text"].startswith("{") and '"lines":2' in info[
            "content"][0]["text"]


def test_cancelled_call_gets_no_answer_and_reports_progress(tmp_path: Path) -> None:
    """A ripgrep search of a tree that takes minutes: it says it is working (one progress
    notification: ripgrep gives no count), then notifications/cancelled stops it, with no
    response (MCP's rule), and the server goes on."""
    endless_tree(tmp_path / "tree", links=4000)
    with E2EServer(tmp_path, "--workers", "2") as server:
        initialize(server)
        server.send(request("tools/call", {"name": "file_search", "arguments": {
            "pattern": "zebra", "include_ignored": True},
            "_meta": {"progressToken": "tok-1"}}, rid=41))
        note = server.recv(30)
        assert note == {"jsonrpc": "2.0", "method": "notifications/progress", "params": {
            "progressToken": "tok-1", "progress": 0,
            "message": "Working: nothing counted yet."}}
        server.send(request("notifications/cancelled", {"requestId": 41,
                                                        "reason": "user"}))
        server.fence()
        assert tool(server, "file_read", {"path": "tree/f1.txt", "limit": 1})[
            "isError"] is False
        assert server.no_more(0.6)


def test_a_split_search_reports_files_searched(tmp_path: Path) -> None:
    """The python engine splits a big search across the workers: progress counts the
    files of the finished parts, grows with every notification, and states the total.
    4 GiB to search (seconds on any machine): it is cancelled once a count has come."""
    files = 4000
    tree = tmp_path / "tree"
    tree.mkdir()
    first = tree / "f0.txt"
    first.write_bytes(b"the quick brown fox jumps over the lazy dog\n" * 24000)  # ~1 MiB
    for i in range(1, files):
        (tree / f"f{i}.txt").hardlink_to(first)
    with E2EServer(tmp_path, "--workers", "2", "--search-engine", "python",
                   "--search-file-timeout", "30") as server:
        initialize(server)
        server.send(request("tools/call", {"name": "file_search", "arguments": {
            "pattern": "zebra"}, "_meta": {"progressToken": 9}}, rid="long"))
        notes: list[dict[str, Any]] = []
        while len(notes) < 2 or notes[-1]["progress"] == 0:
            message = server.recv(60)
            assert message.get("method") == "notifications/progress", message
            notes.append(message["params"])
        server.send(request("notifications/cancelled", {"requestId": "long"}))
        server.fence()
    assert all(n["progressToken"] == 9 for n in notes)
    # a tick before the split has its parts reports 0 with no total (nothing to count yet);
    # once a part is done, every notification states the total
    assert all(n.get("total", files) == files for n in notes), notes
    assert all("total" in n for n in notes if n["progress"] > 0), notes
    counts = [n["progress"] for n in notes]
    assert counts == sorted(set(counts)) and counts[-1] > 0, counts
    assert notes[-1]["message"] == f"{counts[-1]} of {files} files searched so far."


def test_lsp_cancel_of_a_tool_call_is_answered_cancelled(tmp_path: Path) -> None:
    endless_tree(tmp_path / "tree", links=4000)
    with E2EServer(tmp_path, "--workers", "2") as server:
        server.send(request("tools/call", {"name": "file_search", "arguments": {
            "pattern": "zebra", "include_ignored": True}}, rid=5))
        wait_for(lambda: bool(server.searchers()))
        server.send(request("$/cancelRequest", {"id": 5}))
        assert error_of(server.recv(30)) == (-32800, "cancelled")
