"""A result cut short tells the model so in the tool's own parameter names (docs/protocol.md,
MCP: `content` holds everything the model needs to act, "in the tool's own parameter
names"). Found by probing: the claude set's `Grep` said "raise max_results" (its cap is
`head_limit`) and its `Glob`, which has no cap to raise, said the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rpc_client import RpcServer


def _note(server: RpcServer, name: str, arguments: dict[str, Any]) -> str:
    result = server.result("tools/call", {"name": name, "arguments": arguments})
    assert result["isError"] is False and result["structuredContent"]["truncated"], result
    return result["content"][-1]["text"]


def test_a_cut_results_note_names_the_tools_own_parameters(tmp_path: Path) -> None:
    for i in range(105):
        (tmp_path / f"f{i:03}.txt").write_text("hit\n")
    with RpcServer(tmp_path, "--tools", "claude,native", "--workers", "1") as server:
        server.result("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "cut", "version": "1"}})
        grep = _note(server, "Grep", {"pattern": "hit", "output_mode": "content",
                                      "head_limit": 2})
        assert "head_limit" in grep and "max_results" not in grep, grep
        glob = _note(server, "Glob", {"pattern": "*.txt"})
        assert "max_results" not in glob and "narrow" in glob, glob
        native = _note(server, "file_search", {"pattern": "hit", "max_results": 2})
        assert "max_results" in native, native  # file_search's own name is kept
