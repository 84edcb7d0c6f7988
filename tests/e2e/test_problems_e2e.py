"""Problems over the real server (issue 44, docs/protocol.md Diagnostics): broken_imports
across a small package, the note in each set's text answer (MCP content of the JSON sets,
`output` of anthropic, codex and gemini), --problems-gate, and no SyntaxWarning on the
server's stderr for a patched Python file (issue 45)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from e2e_support import E2EServer
from rpc_client import RpcServer

CALLS = "def parse_config():\n    return 1\n\n\ndef run():\n    return parse_config()\n"
RENAMED = {"old": "def parse_config():", "new": "def load_config():"}
NOTE = ("Note: this edit introduced 1 problem: line 6: undefined name 'parse_config' "
        "(F821)")


def _package(root: Path) -> None:
    (root / "pkg").mkdir()
    (root / "pkg/__init__.py").write_text("")
    (root / "pkg/mod.py").write_text("def load():\n    pass\n")
    (root / "pkg/user.py").write_text("from .mod import load\n")
    (root / "app.py").write_text("from pkg.mod import load\n")


def test_broken_imports_and_the_mcp_note(tmp_path: Path) -> None:
    _package(tmp_path)
    with E2EServer(tmp_path, "--workers", "1") as server:
        assert "result" in server.call("initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}})
        reply = server.result("tools/call", {"name": "file_patch", "arguments": {
            "path": "pkg/mod.py", "patches": [{"find": "def load", "replace": "def fetch"}]}})
        found = reply["structuredContent"]["diagnostics"]
        assert found["broken_imports"] == [{"path": "app.py", "line": 1, "name": "load"},
                                           {"path": "pkg/user.py", "line": 1, "name": "load"}]
        assert reply["content"][-1] == {"type": "text", "text": (
            "Note: this edit broke imports: 2 files import the removed name 'load': "
            "app.py:1, pkg/user.py:1")}
        checked = server.result("tools/call", {"name": "file_check",
                                               "arguments": {"path": "pkg/mod.py"}})
        assert "broken_imports" not in checked["structuredContent"]["diagnostics"]


@pytest.mark.parametrize("toolset, call", [
    ("anthropic", ("str_replace_based_edit_tool", {
        "command": "str_replace", "path": "a.py", "old_str": RENAMED["old"],
        "new_str": RENAMED["new"]})),
    ("gemini", ("replace", {"file_path": "a.py", "old_string": RENAMED["old"],
                            "new_string": RENAMED["new"]})),
    ("codex", ("apply_patch", {"input": "*** Begin Patch\n*** Update File: a.py\n@@\n"
                               "-def parse_config():\n+def load_config():\n"
                               "     return 1\n*** End Patch"})),
])
def test_each_text_set_says_it_in_its_output(tmp_path: Path, toolset: str,
                                             call: tuple[str, dict[str, Any]]) -> None:
    (tmp_path / "a.py").write_text(CALLS)
    with RpcServer(tmp_path, "--tools", toolset, "--workers", "1") as server:
        output = server.result(*call)["output"]
    said = NOTE.replace("problem:", "problem in a.py:") if toolset == "codex" else NOTE
    assert output.rstrip("\n").endswith(said), output


def test_the_gate_refuses_over_the_wire(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(CALLS)
    with RpcServer(tmp_path, "--problems-gate", "introduced", "--workers", "1") as server:
        refused = server.error("file.patch", {"path": "a.py", "patches": [
            {"find": RENAMED["old"], "replace": RENAMED["new"]}]})
        assert refused["data"]["reason"] == "problems"
        assert refused["data"]["diagnostics"]["problems_introduced"] == 1
        assert (tmp_path / "a.py").read_text() == CALLS
        fine = server.result("file.patch", {"path": "a.py", "patches": [
            {"find": "return 1", "replace": "return 2"}]})
        assert fine["diagnostics"]["problems_introduced"] == 0


def test_no_syntax_warning_reaches_stderr(tmp_path: Path) -> None:
    text = "".join(f"x{i} = {i}\n" for i in range(47)) + "def f(a):\n    return a is 1\n"
    (tmp_path / "a.py").write_text(text)
    with RpcServer(tmp_path, "--workers", "1") as server:
        done = server.result("file.patch", {"path": "a.py", "patches": [
            {"find": "return a is 1", "replace": "return a is 2"}]})
        assert [p["code"] for p in done["diagnostics"]["problems"]] == ["F632"]
        server.close()
    assert b"SyntaxWarning" not in server.stderr, server.stderr.decode()


def test_problems_off_checks_syntax_only_and_the_gate_lets_it_through(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(CALLS)
    (tmp_path / "b.ts").write_text("export const a = 1;\n")
    with RpcServer(tmp_path, "--problems", "off", "--problems-gate", "introduced",
                   "--workers", "1") as server:
        done = server.result("file.patch", {"path": "a.py", "patches": [
            {"find": RENAMED["old"], "replace": RENAMED["new"]}]})
        broken = server.result("file.patch", {"path": "a.py", "patches": [
            {"find": "return 1", "replace": "return (1"}]})
        typed = server.result("file.patch", {"path": "b.ts", "patches": [
            {"find": "= 1", "replace": "= missing"}]})
        checked = server.result("file.check", {"path": "a.py"})
    assert done["diagnostics"] == {"errors": [], "total": 0, "introduced": 0,
                                   "problems_checked": False}
    assert (tmp_path / "a.py").read_text().startswith("def load_config():")
    assert broken["diagnostics"]["introduced"] == 1
    assert broken["diagnostics"]["problems_checked"] is False
    assert typed["diagnostics"]["problems_checked"] is False
    assert checked["diagnostics"]["problems_checked"] is False
    assert "problems" not in checked["diagnostics"]
