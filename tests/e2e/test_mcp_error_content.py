"""What a model reads of a failed edit over MCP (docs/protocol.md, MCP: tools/call), for
every tool set, on the real server: most hosts hand the model `content` alone, so the
text must hold what `structuredContent` holds (the closest region's lines and text, the
lines of every occurrence, why no indentation mapping fits) in the tool's own parameter
names, never a pointer to `data`.

Issue 35: a failed claude `Edit` said "its text is in data.hint.text", which no model
behind such a host ever sees, and said `find` where the tool takes `old_string`.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from e2e_support import E2EServer
from rpc_client import REPO

# app.py: a typo'd find lands on line 1; "LIMIT = 10" stands on lines 14, 27 and 31 alone
NOT_UNIQUE_LINES = [14, 27, 31]
APP = "".join("def connect():\n" if n == 1 else "    return open_db(timeout=30)\n" if n == 2
              else "LIMIT = 10\n" if n in NOT_UNIQUE_LINES else f"value_{n} = {n}\n"
              for n in range(1, 41))
# nest.py: lines 2-5 match the misfit's lines only when indentation is ignored, and no one
# mapping takes all of them (its line 1 moves 4 columns, its line 3 none)
NEST = "class A:\n    def f(self):\n        if x:\n            y = 1\n        z = 2\n"
MISFIT = "def f(self):\n    if x:\n            y = 1\n    z = 2"


def _edits(find_name: str, replace_name: str, tool: str,
           **extra: Any) -> Callable[[str, str], tuple[str, dict[str, Any]]]:
    """A set whose edit tool takes the file, the old text and the new as named."""
    path_name = extra.pop("path_name", "file_path")

    def call(path: str, old: str) -> tuple[str, dict[str, Any]]:
        return tool, {path_name: path, find_name: old, replace_name: "q", **extra}
    return call


def _native(path: str, old: str) -> tuple[str, dict[str, Any]]:
    return "file_patch", {"path": path, "patches": [{"find": old, "replace": "q"}]}


def _codex(path: str, old: str) -> tuple[str, dict[str, Any]]:
    """A V4A hunk whose old side is `old`: the misfit keeps its first and last lines as
    context, as a model writing the hunk would."""
    lines = old.split("\n")
    if len(lines) > 1:
        body = [f" {lines[0]}", *(f"-{line}" for line in lines[1:-1]), "+q", f" {lines[-1]}"]
    else:
        body = [f"-{old}", "+q"]
    patch = "\n".join(["*** Begin Patch", f"*** Update File: {path}", "@@", *body,
                       "*** End Patch"])
    return "apply_patch", {"input": patch}


def _anthropic(tool: str) -> Callable[[str, str], tuple[str, dict[str, Any]]]:
    def call(path: str, old: str) -> tuple[str, dict[str, Any]]:
        return tool, {"command": "str_replace", "path": path, "old_str": old,
                      "new_str": "q"}
    return call


# set: (its edit calls, words its content must never hold: names it does not have)
POINTERS = ["data.", "hint.text"]
CORE_NAMES = ["find", "patches", "file.patch", "file_patch"]
EDITORS: dict[str, list[tuple[Callable[[str, str], tuple[str, dict[str, Any]]], list[str]]]] = {
    "native": [(_native, POINTERS)],
    "scope": [(_native, POINTERS)],  # no editor of its own: file.* stays callable
    "claude": [(_edits("old_string", "new_string", "Edit"), POINTERS + CORE_NAMES),
               (lambda path, old: ("MultiEdit", {"file_path": path, "edits": [
                   {"old_string": old, "new_string": "q"}]}), POINTERS + CORE_NAMES)],
    "shadow": [(_edits("old", "new", "Edit"), POINTERS + CORE_NAMES + ["old_string"])],
    # Codex's own text says "Failed to find expected lines": the verb, not a parameter
    "codex": [(_codex, POINTERS + CORE_NAMES[1:] + ["old_string", "replace_all"])],
    "anthropic": [(_anthropic("str_replace_based_edit_tool"),
                   POINTERS + CORE_NAMES + ["old_string", "replace_all"]),
                  (_anthropic("str_replace_editor"),
                   POINTERS + CORE_NAMES + ["old_string", "replace_all"])],
    "gemini": [(_edits("old_string", "new_string", "replace"),
                POINTERS + CORE_NAMES + ["replace_all", "old_str"])],
}
READS = {"claude": "Read", "shadow": "Read"}  # read-before-write, or just a look


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ws")
    (root / "app.py").write_text(APP)
    (root / "nest.py").write_text(NEST)
    return root


@pytest.fixture(scope="module", params=list(EDITORS))
def mcp(request: pytest.FixtureRequest, ws: Path) -> Iterator[tuple[str, E2EServer]]:
    """An initialized MCP session with one tool set, each file read once (the claude
    set refuses to edit a file the session has not read)."""
    toolset = request.param
    with E2EServer(ws, "--tools", toolset, "--workers", "1") as server:
        reply = server.call("initialize", {"protocolVersion": "2025-11-25",
                                           "capabilities": {},
                                           "clientInfo": {"name": "content", "version": "1"}})
        assert "result" in reply, reply
        if toolset in READS:
            for name in ("app.py", "nest.py"):
                _call(server, READS[toolset], {"file_path": name})
        yield toolset, server


def _call(server: E2EServer, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    reply = server.call("tools/call", {"name": name, "arguments": arguments})
    assert "result" in reply, reply
    return reply["result"]


def _failure(server: E2EServer, call: tuple[str, dict[str, Any]],
             forbidden: list[str]) -> tuple[str, dict[str, Any]]:
    """The text the model reads and the data, checked for names the tool lacks."""
    result = _call(server, *call)
    assert result["isError"] is True, result
    assert [block["type"] for block in result["content"]] == ["text"]
    text = result["content"][0]["text"]
    for name in forbidden:
        assert not re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text), (name, text)
    assert text == result["structuredContent"]["message"]  # the same text on both faces
    return text, result["structuredContent"]


def test_a_find_found_nowhere_shows_the_closest_region(mcp: tuple[str, E2EServer]) -> None:
    toolset, server = mcp
    for edit, forbidden in EDITORS[toolset]:
        text, data = _failure(server, edit("app.py", "def conect():"), forbidden)
        assert data["error"] == "find_not_found"
        hint = data["hint"]
        assert (hint["start_line"], hint["end_line"], hint["text"]) == (1, 1, "def connect():")
        assert "lines 1-1" in text and text.endswith("\n" + hint["text"]), text


def test_a_find_found_more_than_once_names_every_line(mcp: tuple[str, E2EServer]) -> None:
    toolset, server = mcp
    for edit, forbidden in EDITORS[toolset]:
        text, data = _failure(server, edit("app.py", "LIMIT = 10"), forbidden)
        assert data["error"] == "find_not_unique"
        assert data["lines"] == NOT_UNIQUE_LINES
        for line in NOT_UNIQUE_LINES:
            assert re.search(rf"\b{line}\b", text), (line, text)


def test_a_refused_mapping_says_why_and_shows_the_lines(mcp: tuple[str, E2EServer]) -> None:
    toolset, server = mcp
    for edit, forbidden in EDITORS[toolset]:
        text, data = _failure(server, edit("nest.py", MISFIT), forbidden)
        assert data["error"] == "find_not_found"
        assert data["reason"] and data["reason"] in text, (data["reason"], text)
        assert "no single shift or change of unit fits both" in text
        assert data["hint"]["start_line"] == 2
        assert text.endswith("\n" + data["hint"]["text"]), text
        assert data["hint"]["text"].startswith("    def f(self):\n        if x:")


# Names each set's tools take, in errors beside the edits: a refused path or pattern names
# the parameter as the tool spells it.
NAMED = [
    ("claude", "Read", {"file_path": ""}, "'file_path'", ["'path'"]),
    ("shadow", "Read", {"file_path": ""}, "'file_path'", ["'path'"]),
    ("codex", "read_file", {"file_path": ""}, "'file_path'", ["'path'"]),
    ("gemini", "read_file", {"file_path": ""}, "'file_path'", ["'path'"]),
    ("claude", "Grep", {"pattern": "("}, "escape its special characters", ["literal"]),
    ("shadow", "Grep", {"query": "("}, "escape its special characters", ["literal"]),
    ("codex", "grep_files", {"pattern": "("}, "escape its special characters", ["literal"]),
    ("gemini", "grep_search", {"pattern": "("}, "fixed_strings: true", ["literal"]),
    ("scope", "search_files", {"pattern": "(", "regex": True}, "regex: false", ["literal"]),
    ("claude", "LS", {"path": "app.py"}, "use Read for a file", ["file.info", "file.read"]),
]


@pytest.mark.parametrize("toolset, tool, arguments, says, never", NAMED)
def test_other_errors_name_the_tools_own_parameters(ws: Path, toolset: str, tool: str,
                                                    arguments: dict[str, Any], says: str,
                                                    never: list[str]) -> None:
    with E2EServer(ws, "--tools", toolset, "--workers", "1") as server:
        result = _call(server, tool, arguments)
    text = result["content"][0]["text"]
    assert result["isError"] is True and says in text, text
    for name in never:
        assert name not in text, (name, text)


def test_the_official_sdk_hands_the_model_what_the_data_holds(ws: Path) -> None:
    """The same through the official MCP Python SDK's client (stdio_client +
    ClientSession), for the claude set the issue named."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "chorus_tools", "--workspace", str(ws), "--tools",
                                "claude", "--workers", "1"], cwd=str(REPO),
        env=_sdk_env())
    seen: dict[str, Any] = {}

    async def main() -> None:
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for name in ("app.py", "nest.py"):
                    assert not (await session.call_tool("Read", {"file_path": name})).isError
                for key, path, old in [("hint", "app.py", "def conect():"),
                                       ("lines", "app.py", "LIMIT = 10"),
                                       ("reason", "nest.py", MISFIT)]:
                    seen[key] = await session.call_tool("Edit", {
                        "file_path": path, "old_string": old, "new_string": "q"})
    anyio.run(main)
    for result in seen.values():
        assert result.isError
        text = result.content[0].text
        assert "data." not in text and not re.search(r"\bfind\b", text), text
    hint = seen["hint"]
    assert hint.content[0].text.endswith("lines 1-1 (similarity "
                                         f"{hint.structuredContent['hint']['similarity']}); "
                                         "correct old_string from its text, which follows "
                                         "exactly as in the file:\ndef connect():")
    assert "lines 14, 27, 31" in seen["lines"].content[0].text
    reason = seen["reason"]
    assert reason.structuredContent["reason"].startswith("old_string line 3 is indented")
    assert reason.structuredContent["reason"] in reason.content[0].text


def _sdk_env() -> dict[str, str]:
    """The SDK gives its server a minimal environment: keep this run's state directory
    (tests/conftest.py) and the checkout first on the import path."""
    return {"XDG_STATE_HOME": os.environ["XDG_STATE_HOME"], "PATH": os.environ["PATH"],
            "PYTHONPATH": os.environ.get("PYTHONPATH", str(REPO))}
