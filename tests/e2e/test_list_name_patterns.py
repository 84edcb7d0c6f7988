"""A glob without '/' over the real server (docs/protocol.md, file.list), issue 35:
`file.list {"pattern": "*.py"}` answered `[]` when src/app.py existed, and so did
`recursive: true` and `depth: 3`, while file.search's `glob` matched at any depth. Now a
name pattern matches at any depth when the listing recurses, and an empty answer says how
many `**/PATTERN` would match, in the data and in what a model reads over MCP. The tool
sets' listing tools keep their harness's own rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from rpc_client import RpcServer


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ws")
    (root / "src" / "lib").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print(1)\n")
    (root / "src" / "lib" / "util.py").write_text("print(2)\n")
    (root / "README.md").write_text("# readme\n")
    return root


@pytest.fixture(scope="module")
def native(ws: Path) -> Iterator[RpcServer]:
    with RpcServer(ws, "--tools", "native,claude,scope", "--workers", "2") as server:
        yield server


def _paths(reply: dict[str, Any]) -> list[str]:
    return [f["path"] for f in reply["files"]]


@pytest.mark.parametrize("params, expected", [
    ({"pattern": "*.py", "recursive": True}, ["src/app.py", "src/lib/util.py"]),
    ({"pattern": "*.py", "depth": 3}, ["src/app.py", "src/lib/util.py"]),
    ({"pattern": "*.py", "depth": 2}, ["src/app.py"]),
    ({"pattern": "*.md", "recursive": True}, ["README.md"]),
    ({"pattern": "*.py", "path": "src"}, ["src/app.py"]),
])
def test_file_list_finds_names_at_any_depth_when_it_recurses(
        native: RpcServer, params: dict[str, Any], expected: list[str]) -> None:
    assert _paths(native.result("file.list", params)) == expected


def test_an_empty_answer_says_what_matches_deeper(native: RpcServer) -> None:
    assert native.result("file.list", {"pattern": "*.py"}) == {
        "files": [], "truncated": False, "hint": {"pattern": "**/*.py", "count": 2}}
    assert native.result("file.list", {"pattern": "*.rs"}) == {"files": [],
                                                               "truncated": False}


def test_the_model_reads_the_hint_over_mcp(ws: Path) -> None:
    with RpcServer(ws, "--workers", "1") as server:
        server.result("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                     "clientInfo": {"name": "t", "version": "1"}})
        result = server.result("tools/call", {"name": "file_list",
                                              "arguments": {"pattern": "*.py"}})
        texts = [block["text"] for block in result["content"]]
        assert texts[0] == "" and "2 match **/*.py" in texts[1]
        assert "recursive: true" in texts[1]
        assert result["structuredContent"]["hint"] == {"pattern": "**/*.py", "count": 2}
        tools = {t["name"]: t for t in server.result("tools/list")["tools"]}
        assert "any depth" in tools["file_list"]["description"]


def test_claude_and_scope_listings_keep_their_rule(native: RpcServer) -> None:
    # claude's Glob is a shell's glob (the top only) and answers its own shape
    assert native.result("Glob", {"pattern": "*.py"}) == {"files": [], "truncated": False}
    assert sorted(native.result("Glob", {"pattern": "**/*.py"})["files"]) == [
        "src/app.py", "src/lib/util.py"]
    # scope's recursive list_directory filters names at every depth
    flat = native.result("list_directory", {"path": ".", "glob": "*.py"})
    assert flat["entries"] == [] and "hint" not in flat
    deep = native.result("list_directory", {"path": ".", "glob": "*.py", "recursive": True})
    assert [e["path"] for e in deep["entries"]] == ["src/app.py", "src/lib/util.py"]


def test_shadow_and_gemini_globs_keep_their_rule(ws: Path) -> None:
    with RpcServer(ws, "--tools", "shadow,gemini", "--workers", "1") as server:
        assert server.result("Glob", {"pattern": "*.py"}) == {
            "matches": [], "count": 0, "truncated": False}
        got = server.result("glob", {"pattern": "*.py"})
        assert got["files"] == [] and got["output"].startswith("No files found")
        assert sorted(server.result("glob", {"pattern": "**/*.py"})["files"]) == [
            "src/app.py", "src/lib/util.py"]
