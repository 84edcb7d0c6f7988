"""Every error is said in the tool set's own text (docs/protocol.md, Trained edit formats:
"every error is the §2 error, in the set's text"): a message a model reads names the tools
and parameters of the set it was given, never a core method (`file.list`) or a parameter
its tool does not have (`multiline`). Found by probing each set over MCP with the paths a
sloppy model sends (a directory to a file tool, a file to a directory tool, a binary)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import pytest

from rpc_client import RpcServer

CORE_NAME = re.compile(r"(?<![\w/])(?:file|dir)\.[a-z]+")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("words")
    (ws / "d").mkdir()
    (ws / "d/b.txt").write_text("foo\nbar\n")
    (ws / "a.py").write_text("x = 1\n")
    (ws / "bin.dat").write_bytes(b"\0\1" * 10)
    return ws


def _server(root: Path, toolset: str) -> RpcServer:
    server = RpcServer(root, "--tools", toolset, "--workers", "1")
    server.result("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "words", "version": "1"}})
    return server


def _tool_error(server: RpcServer, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The tool failure `name` answers over MCP: its text and its data."""
    result = server.result("tools/call", {"name": name, "arguments": arguments})
    assert result["isError"] is True, result
    return {"text": result["content"][0]["text"], **result["structuredContent"]}


@pytest.fixture(scope="module")
def sets(root: Path) -> Iterator[dict[str, RpcServer]]:
    servers = {name: _server(root, name)
               for name in ("codex", "claude", "anthropic", "shadow", "scope", "gemini")}
    try:
        yield servers
    finally:
        for server in servers.values():
            server.close()


@pytest.mark.parametrize("toolset, name, arguments, code", [
    ("codex", "list_dir", {"dir_path": "a.py"}, "not_a_directory"),
    ("codex", "read_file", {"file_path": "d"}, "is_directory"),
    ("codex", "read_file", {"file_path": "bin.dat"}, "binary_file"),
    ("codex", "apply_patch", {"input": "*** Begin Patch\n*** Update File: d\n@@\n-a\n+b\n"
                                       "*** End Patch"}, "is_directory"),
    ("scope", "read_file", {"path": "bin.dat"}, "binary_file"),
    ("scope", "read_file", {"path": "d"}, "is_directory"),
    ("scope", "write_file", {"path": "d", "content": "x"}, "is_directory"),
    ("shadow", "Read", {"file_path": "bin.dat"}, "binary_file"),
    ("shadow", "Write", {"file_path": "d", "content": "x", "overwrite": True},
     "is_directory"),
    ("claude", "Delete", {"file_path": "d"}, "is_directory"),
    ("anthropic", "str_replace_based_edit_tool", {"command": "view", "path": "bin.dat"},
     "binary_file"),
])
def test_core_method_names_never_leak_into_a_tool_sets_errors(
        sets: dict[str, RpcServer], toolset: str, name: str, arguments: dict[str, Any],
        code: str) -> None:
    error = _tool_error(sets[toolset], name, arguments)
    assert error["error"] == code, error
    assert not CORE_NAME.findall(error["text"]), error["text"]


@pytest.mark.parametrize("ending", ["\n", "\r"], ids=["line_break", "carriage_return"])
@pytest.mark.parametrize("toolset, name, param", [
    ("shadow", "Grep", "query"), ("scope", "search_files", "pattern"),
    ("codex", "grep_files", "pattern"), ("gemini", "grep_search", "pattern"),
])
def test_a_line_break_in_a_query_is_not_answered_with_a_multiline_parameter_the_tool_lacks(
        sets: dict[str, RpcServer], toolset: str, name: str, param: str, ending: str
        ) -> None:
    error = _tool_error(sets[toolset], name, {param: f"foo{ending}bar"})
    assert error["error"] == "invalid_pattern", error
    assert "multiline" not in error["text"], error["text"]
    assert ("\\n" if ending == "\n" else "\\r") in error["text"], error["text"]


def test_claude_grep_still_offers_multiline(sets: dict[str, RpcServer]) -> None:
    """Grep of the claude set has `multiline`: the advice stays."""
    error = _tool_error(sets["claude"], "Grep", {"pattern": "foo\nbar"})
    assert "multiline: true" in error["text"]


@pytest.mark.parametrize("name", ["Glob", "Grep"])
def test_shadow_root_and_path_that_disagree_are_named_both(
        sets: dict[str, RpcServer], name: str) -> None:
    """Found: the alias error said "'root' and 'root' are aliases" (the set's `'path'` →
    `'root'` rewording hit the adapter's own message)."""
    pattern = {"Glob": {"pattern": "*"}, "Grep": {"query": "foo"}}[name]
    error = _tool_error(sets["shadow"], name, {**pattern, "root": "d", "path": "."})
    assert error["error"] == "invalid_params", error
    assert "'root' and 'path'" in error["text"], error["text"]
