"""gemini's grep_search with an `exclude_pattern` nesting groups a thousand deep answered
internal_error (the regex module's parser recursed past Python's stack); it is
invalid_pattern naming exclude_pattern, as a `pattern` so nested is (docs/protocol.md,
Tool set `gemini`), and a plain exclude_pattern still drops its lines."""

from __future__ import annotations

from pathlib import Path

from rpc_client import RpcServer


def test_exclude_pattern_nested_a_thousand_deep_is_invalid_pattern(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("keep x\ndrop x\n")
    with RpcServer(tmp_path, "--tools", "gemini") as srv:
        reply = srv.call("grep_search", {"pattern": "x",
                                         "exclude_pattern": "(" * 1000 + ")" * 1000})
        assert reply["error"]["data"]["error"] == "invalid_pattern", reply
        assert reply["error"]["data"]["param"] == "exclude_pattern"
        assert "deeply" in reply["error"]["message"]
        mcp = srv.call("tools/call", {"name": "grep_search", "arguments": {
            "pattern": "x", "exclude_pattern": "(" * 1000 + ")" * 1000}})
        assert mcp["result"]["isError"] is True
        assert mcp["result"]["structuredContent"]["error"] == "invalid_pattern"
        kept = srv.call("grep_search", {"pattern": "x", "exclude_pattern": "^drop"})
        assert "L1: keep x" in kept["result"]["output"]
        assert "drop" not in kept["result"]["output"].split("\n", 1)[1]
