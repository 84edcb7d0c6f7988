"""Issue 25's kinds over the real server: for each kind, one row that applies and every row
that is refused, sent through file.patch, the claude Edit and MultiEdit, and the shadow
Edit, checked byte for byte on disk; and the syntax guard's error as the wire carries it
(-32019, data with patch_index, tier, line, reason, diff)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from patch_kinds import FIRST_OF_EACH, ROWS, Row
from rpc_client import RpcServer

REFUSED = {name: row for name, row in ROWS.items() if row.after is None}
_TAGS = itertools.count()


def _tag() -> str:
    return f"case{next(_TAGS)}"


@pytest.fixture(scope="module")
def claude(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RpcServer]:
    root = tmp_path_factory.mktemp("kinds_claude")
    with RpcServer(root, "--tools", "claude", "--workers", "2") as srv:
        srv.root = root  # type: ignore[attr-defined]
        yield srv


@pytest.fixture(scope="module")
def shadow(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RpcServer]:
    root = tmp_path_factory.mktemp("kinds_shadow")
    with RpcServer(root, "--tools", "shadow", "--workers", "2") as srv:
        srv.root = root  # type: ignore[attr-defined]
        yield srv


def _send(srv: RpcServer, editor: str, path: str, row: Row) -> dict[str, Any]:
    if editor == "file.patch":
        return srv.call("file.patch", {"path": path, "patches": [
            {"find": row.find, "replace": row.replace}]})
    if editor == "MultiEdit":
        return srv.call("MultiEdit", {"file_path": path, "edits": [
            {"old_string": row.find, "new_string": row.replace}]})
    return srv.call("Edit", {"file_path": path, "old_string": row.find,
                             "new_string": row.replace})


def _server(editor: str, claude: RpcServer, shadow: RpcServer) -> RpcServer:
    return shadow if editor == "shadow Edit" else claude


def _place(srv: RpcServer, tag: str, row: Row) -> tuple[str, Path]:
    """The row's file in its own directory (the name decides the language), read first as
    the claude set requires."""
    folder = srv.root / tag  # type: ignore[attr-defined]
    folder.mkdir()
    f = folder / row.path
    f.write_bytes(row.before.encode())
    rel = f"{tag}/{row.path}"
    assert "result" in srv.call("Read", {"file_path": rel})
    return rel, f


EDITORS = ["file.patch", "Edit", "MultiEdit", "shadow Edit"]


@pytest.mark.parametrize("editor", EDITORS)
@pytest.mark.parametrize("kind", list(FIRST_OF_EACH))
def test_each_kind_applies_exactly_over_the_wire(claude: RpcServer, shadow: RpcServer,
                                                 kind: str, editor: str) -> None:
    row = FIRST_OF_EACH[kind]
    srv = _server(editor, claude, shadow)
    rel, f = _place(srv, _tag(), row)
    reply = _send(srv, editor, rel, row)
    assert "result" in reply, reply
    assert row.after is not None
    assert f.read_bytes() == row.after.encode()


@pytest.mark.parametrize("editor", EDITORS)
@pytest.mark.parametrize("name", list(REFUSED))
def test_each_refusal_reaches_the_agent_with_its_reason(claude: RpcServer, shadow: RpcServer,
                                                        name: str, editor: str) -> None:
    row = REFUSED[name]
    srv = _server(editor, claude, shadow)
    rel, f = _place(srv, _tag(), row)
    reply = _send(srv, editor, rel, row)
    error = reply["error"]
    assert error["code"] == -32011 and error["data"]["error"] == "find_not_found"
    assert error["data"]["reason"] and error["data"]["hint"]["text"]
    assert f.read_bytes() == row.before.encode()


@pytest.mark.parametrize("editor", EDITORS)
def test_edit_breaks_syntax_over_the_wire(claude: RpcServer, shadow: RpcServer,
                                          editor: str) -> None:
    before = "def handler(event):\n    if event:\n        return 1\n    return 0\n"
    row = Row("h.py", before, "if event:\n    return 1\n", "if event:\nreturn 1\n", None)
    srv = _server(editor, claude, shadow)
    rel, f = _place(srv, _tag(), row)
    error = _send(srv, editor, rel, row)["error"]
    assert error["code"] == -32019
    data = error["data"]
    assert data["error"] == "edit_breaks_syntax" and data["patch_index"] == 0
    assert data["tier"] == "indentation" and data["line"] == 3
    assert "IndentationError" in data["reason"] and "+    return 1" in data["diff"]
    assert f.read_bytes() == before.encode()
