"""Regression: gemini `replace` refused `expected_replacements`, Gemini CLI's parameter for
the number of occurrences an edit must find (docs/protocol.md, "Tool set `gemini`"), as
an unknown parameter. It is the exact count now, beside `allow_multiple`, over plain
JSON-RPC and MCP `tools/call`; a wrong count changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from rpc_client import RpcServer, error_code, snapshot

TEXT = "foo bar foo\nfoo\n"


@pytest.fixture
def srv(tmp_path: Path) -> Iterator[RpcServer]:
    (tmp_path / "a.txt").write_text(TEXT)
    with RpcServer(tmp_path, "--tools", "gemini") as server:
        server.root = tmp_path  # type: ignore[attr-defined]
        yield server


def _replace(srv: RpcServer, **extra: object) -> dict:
    return srv.call("replace", {"file_path": "a.txt", "old_string": "foo",
                                "new_string": "F", **extra})


def test_expected_replacements_matching_the_count_replaces_them_all(srv: RpcServer) -> None:
    got = _replace(srv, expected_replacements=3)["result"]
    assert got["replacements"] == 3
    assert got["output"].startswith("Successfully modified file: a.txt (3 replacements).")
    assert (srv.root / "a.txt").read_text() == "F bar F\nF\n"  # type: ignore[attr-defined]


@pytest.mark.parametrize("expected", [1, 2, 4])
def test_a_different_count_is_find_not_unique_in_gemini_words(srv: RpcServer,
                                                             expected: int) -> None:
    before = snapshot(srv.root)  # type: ignore[attr-defined]
    reply = _replace(srv, expected_replacements=expected)
    assert error_code(reply) == "find_not_unique"
    data = reply["error"]["data"]
    assert (data["count"], data["expected"], data["lines"]) == (3, expected, [1, 1, 2])
    noun = "occurrence" if expected == 1 else "occurrences"
    assert data["message"].startswith(f"Failed to edit, Expected {expected} {noun} but "
                                      "found 3 for old_string in file: a.txt.")
    assert snapshot(srv.root) == before  # type: ignore[attr-defined]


@pytest.mark.parametrize("extra", [{"expected_replacements": 0},
                                   {"expected_replacements": "two"},
                                   {"expected_replacements": 3, "allow_multiple": True}])
def test_bad_expected_replacements_is_invalid_params(srv: RpcServer, extra: dict) -> None:
    reply = _replace(srv, **extra)
    assert error_code(reply) == "invalid_params"
    assert reply["error"]["data"]["param"] == "expected_replacements"
    assert (srv.root / "a.txt").read_text() == TEXT  # type: ignore[attr-defined]


def test_expected_replacements_through_mcp_tools_call(srv: RpcServer) -> None:
    srv.result("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "t", "version": "1"}})
    srv.notify("notifications/initialized")
    listed = {t["name"]: t for t in srv.result("tools/list", {})["tools"]}
    assert "expected_replacements" in listed["replace"]["inputSchema"]["properties"]
    got = srv.result("tools/call", {"name": "replace", "arguments": {
        "file_path": "a.txt", "old_string": "foo", "new_string": "F",
        "expected_replacements": 3}})
    assert got.get("isError") is not True
    assert (srv.root / "a.txt").read_text() == "F bar F\nF\n"  # type: ignore[attr-defined]
