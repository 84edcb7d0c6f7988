"""Diagnostics over the real server (issue 34, docs/protocol.md Diagnostics): every writer
and editor of every tool set carries `diagnostics` (one row per tool, as
tests/patch_kinds.py tables edits), the sets that answer in text add the one-line note,
the JSON sets' MCP content adds it as a block; the three gates; file.check; a file past
the bounds answered with `skipped`; code_edit as an MCP tool."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest
from e2e_support import E2EServer
from rpc_client import RpcServer

GOOD = "def f():\n    return 1\n"
BAD = "def f()\n    return 1\n"  # Python: line 1, column 8, expected ':'
ERROR = {"line": 1, "column": 8, "message": "expected ':'"}
# a Python file with syntax errors is not checked for problems (docs/protocol.md, Diagnostics)
UNCHECKED = {"problems_checked": True, "problems": {"skipped": "the file has syntax errors"}}
CHECKED = {"problems_checked": True, "problems": [], "problems_total": 0,
           "problems_introduced": 0}
BROKE = {"errors": [ERROR], "total": 1, "introduced": 1, **UNCHECKED}
NOTE = "Note: this edit left 1 syntax error: line 1: expected ':'"


@dataclass(frozen=True)
class Row:
    toolset: str
    calls: Callable[[str], list[tuple[str, dict[str, Any]]]]  # path -> calls, the last judged
    start: str | None = GOOD  # the file before the calls (None: no file)
    text: str | None = None  # where the reply's text is ("output"), None: JSON
    gate: str = "loose"  # --syntax-gate (code.edit is guarded: off lets a break through)


def _one(method: str, **params: Any) -> Callable[[str], list[tuple[str, dict[str, Any]]]]:
    def calls(path: str) -> list[tuple[str, dict[str, Any]]]:
        return [(method, {k: path if v is PATH else v for k, v in params.items()})]
    return calls


PATH = object()  # stands for the row's file in a call's params
V4A = "*** Begin Patch\n*** Update File: {p}\n@@\n-def f():\n+def f()\n     return 1\n*** End Patch"

ROWS: dict[str, Row] = {
    "native file.write": Row("native", _one("file.write", path=PATH, content=BAD)),
    "native file.patch": Row("native", _one("file.patch", path=PATH, patches=[
        {"find": "def f():", "replace": "def f()"}])),
    "native file.restore": Row("native", lambda p: [
        ("file.write", {"path": p, "content": GOOD}),
        ("file.restore", {"path": p, "version": "@1"})], start=BAD),
    "native code.edit": Row("native", _one("code.edit", path=PATH, symbol="f",
                                           action="replace", text=BAD), gate="off"),
    "claude Write": Row("claude", lambda p: [("Read", {"file_path": p}),
                                             ("Write", {"file_path": p, "content": BAD})]),
    "claude Edit": Row("claude", lambda p: [("Read", {"file_path": p}), (
        "Edit", {"file_path": p, "old_string": "def f():", "new_string": "def f()"})]),
    "claude MultiEdit": Row("claude", lambda p: [("Read", {"file_path": p}), (
        "MultiEdit", {"file_path": p, "edits": [{"old_string": "def f():",
                                                 "new_string": "def f()"}]})]),
    "scope write_file": Row("scope", _one("write_file", path=PATH, content=BAD)),
    "shadow Write": Row("shadow", _one("Write", file_path=PATH, content=BAD, overwrite=True)),
    "shadow Edit": Row("shadow", _one("Edit", file_path=PATH, old="def f():", new="def f()")),
    "codex apply_patch": Row("codex", lambda p: [("apply_patch", {"input": V4A.format(p=p)})],
                             text="output"),
    "anthropic create": Row("anthropic", _one("str_replace_editor", command="create",
                                              path=PATH, file_text=BAD),
                            start=None, text="output"),
    "anthropic str_replace": Row("anthropic", _one(
        "str_replace_based_edit_tool", command="str_replace", path=PATH, old_str="def f():",
        new_str="def f()"), text="output"),
    "anthropic insert": Row("anthropic", _one(
        "str_replace_editor", command="insert", path=PATH, insert_line=0,
        new_str="x = (1,"), text="output"),
    "anthropic undo_edit": Row("anthropic", lambda p: [
        ("str_replace_editor", {"command": "str_replace", "path": p, "old_str": "def f()",
                                "new_str": "def f():"}),
        ("str_replace_editor", {"command": "undo_edit", "path": p})], start=BAD,
        text="output"),
    "gemini write_file": Row("gemini", _one("write_file", file_path=PATH, content=BAD),
                             text="output"),
    "gemini replace": Row("gemini", _one("replace", file_path=PATH, old_string="def f():",
                                         new_string="def f()"), text="output"),
}


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("diag")
    running: dict[str, RpcServer] = {}
    yield root, running
    for server in running.values():
        server.close()


def _server(servers: Any, toolset: str, gate: str) -> tuple[Path, RpcServer]:
    root, running = servers
    if (toolset, gate) not in running:
        running[toolset, gate] = RpcServer(root, "--tools", toolset, "--workers", "1",
                                           "--syntax-gate", gate)
    return root, running[toolset, gate]


def _diagnostics(result: dict[str, Any]) -> dict[str, Any]:
    return result["files"][0]["diagnostics"] if "files" in result else result["diagnostics"]


@pytest.mark.parametrize("name", list(ROWS))
def test_every_writer_and_editor_carries_diagnostics(servers: Any, name: str) -> None:
    row = ROWS[name]
    root, server = _server(servers, row.toolset, row.gate)
    path = name.replace(" ", "_").replace(".", "_") + ".py"
    if row.start is not None:
        (root / path).write_text(row.start)
    calls = row.calls(path)
    if name == "native file.restore":  # the version the history kept of the broken text
        server.result(*calls[0])
        version = server.result("file.history", {"path": path})["versions"][0]["version"]
        calls = [("file.restore", {"path": path, "version": version})]
    for method, params in calls[:-1]:
        assert "result" in server.call(method, params)
    result = server.result(*calls[-1])
    found = _diagnostics(result)
    if name == "anthropic insert":  # `x = (1,` never closed: reported on line 1
        assert found["introduced"] == 1 and found["errors"][0]["line"] == 1
        assert "Note: this edit left 1 syntax error: line 1: '(' was never closed" in \
            result["output"]
        return
    assert found == BROKE, found
    if row.text is not None:
        said = NOTE.replace("error:", f"error in {path}:") if row.toolset == "codex" else NOTE
        assert result[row.text].rstrip("\n").endswith(said), result[row.text]


def test_a_clean_change_and_an_unparsed_file(tmp_path: Path) -> None:
    with RpcServer(tmp_path) as server:
        done = server.result("file.write", {"path": "a.py", "content": GOOD})
        assert done["diagnostics"] == {"errors": [], "total": 0, "introduced": 0, **CHECKED}
        assert "diagnostics" not in server.result("file.write", {"path": "a.txt",
                                                                 "content": BAD})


def test_mcp_content_says_it_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(GOOD)
    (tmp_path / "b.py").write_text(GOOD)
    with E2EServer(tmp_path, "--workers", "1") as server:
        assert "result" in server.call("initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}})
        names = [t["name"] for t in server.result("tools/list", {})["tools"]]
        assert "code_edit" in names and "file_check" in names
        reply = server.result("tools/call", {"name": "file_patch", "arguments": {
            "path": "a.py", "patches": [{"find": "def f():", "replace": "def f()"}]}})
        assert reply["structuredContent"]["diagnostics"] == BROKE
        assert reply["content"][-1] == {"type": "text", "text": NOTE}
        edited = server.result("tools/call", {"name": "code_edit", "arguments": {
            "path": "b.py", "symbol": "f", "action": "replace", "text": "def f():\n  pass"}})
        assert not edited.get("isError"), edited
        assert (tmp_path / "b.py").read_text() == "def f():\n    pass\n"
        assert len(edited["content"]) == 1  # nothing to note


@pytest.mark.parametrize("gate, exact, looser", [
    ("loose", "written", "edit_breaks_syntax"),
    ("all", "edit_breaks_syntax", "edit_breaks_syntax"),
    ("off", "written", "written"),
])
def test_the_three_gates(tmp_path: Path, gate: str, exact: str, looser: str) -> None:
    (tmp_path / "a.py").write_text(GOOD)
    (tmp_path / "b.py").write_text(GOOD)
    with RpcServer(tmp_path, "--syntax-gate", gate) as server:
        replies = {
            "exact": server.call("file.patch", {"path": "a.py", "patches": [
                {"find": "    return 1", "replace": "return 1"}]}),
            "looser": server.call("file.patch", {"path": "b.py", "patches": [
                {"find": "\treturn 1\n", "replace": "return 1\n"}]}),
        }
        kept = server.call("file.write", {"path": "c.py", "content": BAD})
    for kind, wanted in (("exact", exact), ("looser", looser)):
        reply, f = replies[kind], tmp_path / ("a.py" if kind == "exact" else "b.py")
        if wanted == "written":
            assert reply["result"]["diagnostics"]["introduced"] == 1, reply
            assert f.read_text() != GOOD
        else:
            assert reply["error"]["data"]["error"] == "edit_breaks_syntax", reply
            assert f.read_text() == GOOD
    if gate == "all":
        data = kept["error"]["data"]
        assert data["diagnostics"] == BROKE and data["line"] == 1
        assert not (tmp_path / "c.py").exists()
        (tmp_path / "d.py").write_text(BAD + "x = 1\n")  # an error already there passes
        with RpcServer(tmp_path, "--syntax-gate", "all") as server:
            done = server.result("file.patch", {"path": "d.py", "patches": [
                {"find": "x = 1", "replace": "x = 2"}]})
        assert done["diagnostics"] == {"errors": [ERROR], "total": 1, "introduced": 0, **UNCHECKED}
    else:
        assert kept["result"]["diagnostics"] == BROKE


def test_file_check_and_a_file_past_the_bounds(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(BAD)
    (tmp_path / "big.py").write_text(GOOD + "# padding\n" * 200)
    (tmp_path / "a.txt").write_text("x\n")
    with RpcServer(tmp_path, "--syntax-max-bytes", "1000") as server:
        assert server.result("file.check", {"path": "a.py"}) == {
            "path": "a.py", "language": "python",
            "diagnostics": {"errors": [ERROR], "total": 1, "introduced": 0, **UNCHECKED}}
        assert server.result("file.check", {"path": "big.py"})["diagnostics"] == {
            "skipped": "file over 1000 bytes", "problems_checked": True,
            "problems": {"skipped": "file over 1000 bytes"}}
        error = server.error("file.check", {"path": "a.txt"})
        assert error["code"] == -32023 and error["data"]["language"] == "txt"
        patched = server.result("file.patch", {"path": "big.py", "patches": [
            {"find": "return 1", "replace": "return 2"}]})
        assert patched["diagnostics"] == {
            "skipped": "file over 1000 bytes", "problems_checked": True,
            "problems": {"skipped": "file over 1000 bytes"}}


def test_code_edit_obeys_read_only(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(GOOD)
    with RpcServer(tmp_path, "--read-only") as server:
        error = server.error("code.edit", {"path": "a.py", "symbol": "f", "action": "delete"})
    assert error["data"]["error"] == "permission_denied"
    assert (tmp_path / "a.py").read_text() == GOOD
