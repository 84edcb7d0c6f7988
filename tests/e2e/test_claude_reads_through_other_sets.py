"""Read-before-write counts every result that showed the client a file or wrote it,
the other sets' tools built on file.read, file.write and file.patch included
(docs/protocol.md, Tool set `claude`): a client served `--tools claude,gemini` that read a
file with gemini's read_file was refused `not_read` by claude's Edit, as was one that had
just written it with codex's apply_patch or viewed it with the anthropic editor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rpc_client import RpcServer, error_code

PATCH = "*** Begin Patch\n*** Update File: {0}\n@@\n one\n-two\n+TWO\n*** End Patch"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    for name in ("a.txt", "b.txt", "c.txt"):
        (root / name).write_text("one\ntwo\n")
    return root


def _edit(srv: RpcServer, path: str) -> dict[str, Any]:
    return srv.call("Edit", {"file_path": path, "old_string": "one", "new_string": "1"})


def _edited(reply: dict[str, Any], ws: Path, path: str) -> None:
    assert "result" in reply, reply
    assert (ws / path).read_text().startswith("1\n")


@pytest.mark.parametrize("sets, shown", [
    ("claude,gemini", ("read_file", {"file_path": "a.txt"})),
    ("claude,gemini", ("write_file", {"file_path": "a.txt", "content": "one\ntwo\n"})),
    ("claude,gemini", ("replace", {"file_path": "a.txt", "old_string": "two",
                                   "new_string": "TWO"})),
    ("claude,codex", ("read_file", {"file_path": "a.txt", "offset": 2})),
    ("claude,codex", ("apply_patch", {"input": PATCH.format("a.txt")})),
    ("claude,anthropic", ("str_replace_based_edit_tool", {"command": "view",
                                                          "path": "a.txt"})),
    ("claude,anthropic", ("str_replace_editor", {"command": "str_replace", "path": "a.txt",
                                                 "old_str": "two", "new_str": "TWO"})),
])
def test_a_file_another_set_showed_or_wrote_can_be_edited(
        ws: Path, tmp_path: Path, sets: str, shown: tuple[str, dict[str, Any]]) -> None:
    with RpcServer(ws, "--tools", sets, "--state", str(tmp_path / "state")) as srv:
        assert "result" in srv.call(*shown)
        _edited(_edit(srv, "a.txt"), ws, "a.txt")


def test_the_same_through_mcp(ws: Path, tmp_path: Path) -> None:
    with RpcServer(ws, "--tools", "claude,gemini", "--state", str(tmp_path / "s")) as srv:
        shown = srv.call("tools/call", {"name": "read_file",
                                        "arguments": {"file_path": "b.txt"}})
        assert shown["result"]["isError"] is False
        reply = srv.call("tools/call", {"name": "Edit", "arguments": {
            "file_path": "b.txt", "old_string": "one", "new_string": "1"}})
        assert reply["result"]["isError"] is False, reply
        assert (ws / "b.txt").read_text() == "1\ntwo\n"


def test_what_another_set_showed_is_still_checked_for_changes(ws: Path,
                                                              tmp_path: Path) -> None:
    """A file shown by another set and changed since is `conflict`, as after Read."""
    with RpcServer(ws, "--tools", "claude,gemini", "--state", str(tmp_path / "s")) as srv:
        assert "result" in srv.call("read_file", {"file_path": "c.txt"})
        (ws / "c.txt").write_text("one\nchanged elsewhere\n")
        assert error_code(_edit(srv, "c.txt")) == "conflict"
        assert (ws / "c.txt").read_text() == "one\nchanged elsewhere\n"


def test_a_patch_remembers_every_file_it_wrote_and_forgets_what_it_moved_away(
        ws: Path, tmp_path: Path) -> None:
    patch = ("*** Begin Patch\n*** Update File: a.txt\n*** Move to: moved.txt\n@@\n one\n"
             "-two\n+TWO\n*** Update File: b.txt\n@@\n one\n-two\n+TWO\n*** End Patch")
    with RpcServer(ws, "--tools", "claude,codex", "--state", str(tmp_path / "s")) as srv:
        assert "result" in srv.call("apply_patch", {"input": patch})
        _edited(_edit(srv, "moved.txt"), ws, "moved.txt")
        _edited(_edit(srv, "b.txt"), ws, "b.txt")
        assert error_code(_edit(srv, "c.txt")) == "not_read"  # nothing else counted
