"""An MCP `tools/call` whose `name` is not a string (docs/protocol.md, MCP): a `name`
given as an array or object was never answered (looking it up among the orchestrator's
methods raised, and the request was lost), and a missing one was "Unknown tool: None".
Each is -32602 naming `name`, and the server goes on serving."""

from __future__ import annotations

from typing import Any

import pytest

from rpc_client import RpcServer


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("ws")
    (root / "a.txt").write_text("one\n")
    with RpcServer(root) as server:
        yield server


@pytest.mark.parametrize("name", [[], {}, ["file_read"], {"a": 1}, None, 5, True, ""])
def test_a_name_that_is_no_tool_name_is_invalid_params(srv: RpcServer, name: Any) -> None:
    reply = srv.call("tools/call", {"name": name, "arguments": {"path": "a.txt"}},
                     timeout=10)
    error = reply["error"]
    assert error["code"] == -32602, reply
    assert error["data"]["param"] == "name"
    assert "None" not in error["message"]
    assert "string" in error["message"] or "Unknown tool" in error["message"]


def test_a_missing_name_says_it_is_missing(srv: RpcServer) -> None:
    reply = srv.call("tools/call", {"arguments": {}}, timeout=10)
    assert reply["error"]["code"] == -32602
    assert reply["error"]["data"]["param"] == "name"
    assert "name" in reply["error"]["message"] and "None" not in reply["error"]["message"]


def test_the_same_batch_is_answered_whole(srv: RpcServer) -> None:
    """The refusal is one answer among the others of its batch: none is lost."""
    srv.send([{"jsonrpc": "2.0", "id": "x", "method": "tools/call",
               "params": {"name": [], "arguments": {}}},
              {"jsonrpc": "2.0", "id": "y", "method": "ping"}])
    replies = {r["id"]: r for r in srv.recv(timeout=10)}
    assert replies["x"]["error"]["code"] == -32602
    assert replies["y"]["result"] == {}
