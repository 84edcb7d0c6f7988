"""An edit the syntax or problems gate refuses, as a model reads it over MCP
(docs/protocol.md, MCP: `content` holds everything the model needs to act, "not a pointer
to `data`"): the refusal names every error or problem it would bring (up to three, as the
diagnostics note does), never "data.diagnostics lists them". Found by probing: both gates
sent the model to data.diagnostics, which a host that shows `content` alone never shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from rpc_client import RpcServer

SOURCE = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"


@pytest.mark.parametrize("gate, replace, named", [
    (("--syntax-gate", "all"), "def f(:\n    return 1\n\n\ndef g(:", ["line 1", "line 5"]),
    (("--problems-gate", "introduced"), "def f():\n    return alpha\n\n\ndef g():\n"
     "    return beta", ["alpha", "beta"]),
])
def test_a_gate_refusal_names_what_it_would_bring(
        tmp_path: Path, gate: tuple[str, str], replace: str, named: list[str]) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    with RpcServer(tmp_path, *gate, "--workers", "1") as server:
        server.result("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "gate", "version": "1"}})
        result = server.result("tools/call", {"name": "file_patch", "arguments": {
            "path": "m.py", "patches": [{"find": SOURCE.rstrip("\n"), "replace": replace}]}})
    assert result["isError"] is True
    assert result["structuredContent"]["error"] == "edit_breaks_syntax"
    text = result["content"][0]["text"]
    assert "data." not in text, text
    for name in named:
        assert name in text, (name, text)
    assert (tmp_path / "m.py").read_text() == SOURCE
