"""An unknown method or tool name is answered with the names it probably meant
(docs/protocol.md, Errors: `method_not_found`), on plain JSON-RPC and over MCP, from the
registry. Issue 35: an unknown method got no "did you mean"."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from chorus_tools.rpc.dispatch.unknown import near
from chorus_tools.tools.registry import callable_methods
from rpc_client import RpcServer


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RpcServer]:
    with RpcServer(tmp_path_factory.mktemp("ws"), "--workers", "1") as srv:
        yield srv


@pytest.mark.parametrize("name, meant", [
    ("file_read", ["file.read"]),  # the MCP tool name, sent as a method
    ("File.Read", ["file.read"]),
    ("read_file", ["file.read"]),  # another harness's order of the words
    ("file.reed", ["file.read"]),
    ("file.lst", ["file.list"]),
    ("workspace.stat", ["workspace.status"]),
    ("rpc_discover", ["rpc.discover"]),
    ("tools/lsit", ["tools/list"]),
])
def test_an_unknown_method_names_the_one_meant(server: RpcServer, name: str,
                                               meant: list[str]) -> None:
    error = server.error(name, {})
    assert error["code"] == -32601 and error["data"]["error"] == "method_not_found"
    assert error["data"]["did_you_mean"] == meant
    assert f"Did you mean {meant[0]!r}?" in error["message"]


def test_a_name_like_nothing_gets_no_guess(server: RpcServer) -> None:
    error = server.error("frobnicate", {})
    assert "did_you_mean" not in error["data"]
    assert error["message"] == ("Method not found: 'frobnicate'. Call rpc.discover for "
                                "the list.")


def test_another_tool_sets_method_names_its_set(server: RpcServer) -> None:
    error = server.error("Edit", {"file_path": "a", "old_string": "x", "new_string": "y"})
    assert error["code"] == -32601
    assert "claude and shadow tool sets" in error["message"]
    assert "--tools (now native)" in error["message"]


def test_an_unknown_mcp_tool_names_the_tool_meant(tmp_path: Path) -> None:
    with RpcServer(tmp_path, "--tools", "claude", "--workers", "1") as srv:
        srv.result("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                  "clientInfo": {"name": "t", "version": "1"}})
        for name, meant in [("file.read", ["file_read"]), ("edit", ["Edit"]),
                            ("MultiEdits", ["MultiEdit"])]:
            error = srv.error("tools/call", {"name": name, "arguments": {}})
            assert error["code"] == -32602 and error["data"]["param"] == "name"
            assert error["data"]["did_you_mean"] == meant, (name, error)
        error = srv.error("tools/call", {"name": "apply_patch", "arguments": {}})
        assert "codex tool set" in error["message"]


def test_near_names_come_from_the_served_methods_only() -> None:
    claude = list(callable_methods(("native", "claude")))
    assert near("Raed", claude) == ["Read"]
    assert near("read", claude) == ["Read"]
    assert near("Read", list(callable_methods(("native",)))) == ["file.read"]
    assert near("zzzz", claude) == []
