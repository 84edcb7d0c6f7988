"""Bug: an unknown parameter of a method that takes none (`workspace.status {"x": 1}`)
was refused with "accepted there: ." — a list with nothing in it, where the message
should tell the agent what to send instead (docs/protocol.md, Errors)."""

from __future__ import annotations

from pathlib import Path

from rpc_client import RpcServer


def test_the_refusal_says_the_method_takes_no_parameters(tmp_path: Path) -> None:
    with RpcServer(tmp_path, "--index-memory", "0") as server:
        for method in ("workspace.status",):
            error = server.error(method, {"x": 1})
            assert error["data"]["error"] == "invalid_params"
            assert error["data"]["param"] == "x"
            assert error["message"] == (f"Unknown parameter 'x' for {method}; it takes no "
                                        "parameters: send {}.")
        named = server.error("file.list", {"x": 1})["message"]
        assert named.startswith("Unknown parameter 'x' for file.list; accepted there: path, ")
