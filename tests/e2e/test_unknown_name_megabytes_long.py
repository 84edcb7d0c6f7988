"""An unknown method or MCP tool name megabytes long (docs/protocol.md, Errors:
`did_you_mean`): looking for the names it probably meant compared it with every known
name at a cost that grows with its length, seconds a megabyte, in the dispatcher, so every
other request waited behind it (an 8 MB name held a ping for about 40 s). A name whose
length alone rules out every suggestion is not compared; both are answered at once, and
a near name still gets its suggestion."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from rpc_client import RpcServer

LONG = 8_000_000


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RpcServer]:
    root: Path = tmp_path_factory.mktemp("ws")
    with RpcServer(root, "--tools", "native,claude") as server:
        yield server


@pytest.mark.parametrize("method, params, code", [
    pytest.param("tools/call", {"name": "x" * LONG, "arguments": {}}, -32602, id="tool"),
    # the same path, seconds more; an id of its own, as the name would be the test's id
    # and so PYTEST_CURRENT_TEST, past what one variable of a child's environment may hold
    pytest.param("y" * LONG, {}, -32601, marks=pytest.mark.long, id="method"),
])
def test_a_huge_unknown_name_holds_up_no_other_request(srv: RpcServer, method: str,
                                                       params: dict[str, Any], code: int) -> None:
    srv.send({"jsonrpc": "2.0", "id": "huge", "method": method, "params": params})
    srv.send({"jsonrpc": "2.0", "id": "ping", "method": "ping"})
    replies = {}
    for _ in range(2):
        reply = srv.recv(timeout=15)  # a hang guard: it took ~40 s before
        replies[reply["id"]] = reply
    assert replies["ping"]["result"] == {}
    assert replies["huge"]["error"]["code"] == code
    assert "did_you_mean" not in replies["huge"]["error"]["data"]


def test_a_near_name_is_still_suggested(srv: RpcServer) -> None:
    reply = srv.call("tools/call", {"name": "Reed", "arguments": {}})
    assert reply["error"]["data"]["did_you_mean"] == ["Read"]
    reply = srv.call("file.raed", {})
    assert reply["error"]["data"]["did_you_mean"] == ["file.read"]
