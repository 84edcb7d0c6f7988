"""The code.* methods through the real server: JSON-RPC calls answered by the pool (a
split call too), the same answers on both engines' servers, `--deny`, `--read-only` and
the schemas that validate them (docs/protocol.md, "Code by structure")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from e2e_support import E2EServer

MODULE = "class Store:\n    def load(self):\n        return read()\n\n\ndef read():\n    return 1\n"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("code") / "ws"
    (root / "pkg").mkdir(parents=True)
    for i in range(40):  # more files than one worker parses inline: the call splits
        (root / "pkg" / f"m{i:02d}.py").write_text(MODULE + f"\nVALUE_{i} = read()\n")
    (root / "secret").mkdir()
    (root / "secret" / "keys.py").write_text("def read():\n    return 'key'\n")
    (root / "notes.md").write_text("# Notes\n\n## read\n\nread() is documented here.\n")
    return root


@pytest.fixture(scope="module", params=["ripgrep", "python"])
def server(request: pytest.FixtureRequest, workspace: Path) -> E2EServer:
    with E2EServer(workspace, "--workers", "2", "--deny", "secret/**", "--read-only",
                   "--search-engine", request.param) as s:
        yield s


def result(server: E2EServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
    reply = server.call(method, params)
    assert "result" in reply, reply
    return reply["result"]


def test_symbols_across_the_pool_never_show_a_denied_file(server: E2EServer) -> None:
    found = result(server, "code.symbols", {"query": "read"})
    paths = [s["path"] for s in found["symbols"]]
    assert "secret/keys.py" not in paths
    assert found["total"] == 41 and len(paths) == 41  # 40 functions and a heading
    assert paths[0] == "notes.md" and found["symbols"][0]["kind"] == "heading"
    assert found["files_parsed"] == 41


def test_references_across_the_pool(server: E2EServer) -> None:
    found = result(server, "code.references", {"name": "read", "max_results": 3})
    assert found["total"] == 80 and found["truncated"]
    assert [(r["path"], r["line"], r["kind"], r["in"]) for r in found["references"]] == [
        ("pkg/m00.py", 3, "call", "Store/load"), ("pkg/m00.py", 9, "call", ""),
        ("pkg/m01.py", 3, "call", "Store/load")]


def test_outline_under_read_only_and_deny(server: E2EServer) -> None:
    found = result(server, "code.outline", {"path": "pkg/m00.py"})
    assert [s["name_path"] for s in found["symbols"]] == ["Store", "read", "VALUE_0"]
    denied = server.call("code.outline", {"path": "secret/keys.py"})
    assert denied["error"]["data"]["error"] == "permission_denied"


@pytest.mark.parametrize(("method", "params"), [
    ("code.outline", {}), ("code.outline", {"path": "a.py", "depth": 0}),
    ("code.symbols", {"query": "x", "match": "fuzzy"}), ("code.symbols", {"query": 3}),
    ("code.references", {"name": "x", "include_hidden": True}),
    ("code.references", {"name": "x", "context_lines": -1})])
def test_schemas_refuse_bad_params(server: E2EServer, method: str,
                                   params: dict[str, Any]) -> None:
    assert server.call(method, params)["error"]["data"]["error"] == "invalid_params"


def test_discover_describes_the_code_methods(server: E2EServer) -> None:
    names = {m["name"] for m in result(server, "rpc.discover", {})["methods"]}
    assert {"code.outline", "code.symbols", "code.references"} <= names


@pytest.mark.parametrize(("options", "listed"), [
    ((), True), (("--tools", "claude"), False), (("--tools", "claude", "--code-tools"), True),
    (("--tools", "codex,anthropic", "--code-tools"), True)])
def test_code_tools_are_listed_by_native_or_when_asked(workspace: Path, options: tuple[str, ...],
                                                       listed: bool) -> None:
    with E2EServer(workspace, *options) as s:
        init = s.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "t", "version": "0"}})["result"]
        names = {t["name"] for t in s.call("tools/list", {})["result"]["tools"]}
        code = {"code_outline", "code_symbols", "code_references", "code_map", "code_edit"}
        assert (code <= names) == listed and (not names & code) == (not listed)
        assert init["instructions"].endswith("before reading whole files.") == listed
        called = s.call("tools/call", {"name": "code_outline",
                                       "arguments": {"path": "pkg/m00.py"}})["result"]
        assert called["content"][0]["text"].startswith("1-3 class Store:\n 2-3 def load")
        assert s.call("code.symbols", {"query": "Store"})["result"]["total"] == 40
