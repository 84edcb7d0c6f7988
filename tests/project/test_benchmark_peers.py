"""The peers' driver (benchmarks/peers.py, peer_rows.py) against a fake that answers in
Desktop Commander's and mcp-text-editor's shapes: a background search is started, polled
and counted, a line edit carries the hashes its read gave, and a peer that is not
installed is a skip that says why, not a failure."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks import peer_rows
from benchmarks.loadclient import McpSession, ProtocolError
from benchmarks.mcp_reference import Unavailable
from benchmarks.peers import DESKTOP_COMMANDER, PEERS, TEXT_EDITOR, content_text

FAKE = r'''
import json, sys
polls = 0
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    name = msg.get("params", {}).get("name")
    args = msg.get("params", {}).get("arguments", {})
    if msg["method"] == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {}}
    elif name == "start_search":
        seen = {"pattern": args["pattern"], "type": args["searchType"]}
        text = "Started content search session: s_1\nStatus: RUNNING\n" + json.dumps(seen)
        result = {"content": [{"type": "text", "text": text}]}
    elif name == "get_more_search_results":
        polls += 1
        lines = ["\U0001f4c4 /w/f%d.py:1 - import os" % i for i in range(60 * polls)]
        status = "COMPLETED" if polls >= 3 else "RUNNING"
        text = "Status: %s\nTotal results found: %d (x)\n\n" % (status, len(lines))
        text += "\n".join(lines[:args["length"]])
        result = {"content": [{"type": "text", "text": text}]}
    elif name == "get_text_file_contents":
        path = args["files"][0]["file_path"]
        text = "line one\nline two\ncounter = 7\nlast\n"
        ranges = [{"content": text, "start_line": 1, "end_line": 4, "range_hash": "whole"}]
        body = {path: {"ranges": ranges, "file_hash": "file-hash"}}
        result = {"content": [{"type": "text", "text": json.dumps(body)}]}
    else:
        result = {"content": [{"type": "text", "text": "nope"}], "isError": True}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
'''


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[McpSession]:
    script = tmp_path / "fake_peer.py"
    script.write_text(FAKE)
    server = McpSession([sys.executable, str(script)], cwd=tmp_path)
    server.initialize()
    yield server
    server.close()


def test_first_results_are_polled_until_enough(fake: McpSession, tmp_path: Path) -> None:
    start = DESKTOP_COMMANDER.search(tmp_path, "import", 100)
    assert start[1]["arguments"]["searchType"] == "content"
    # 60 lines on the first poll, 120 on the second: enough for 100
    assert peer_rows.background_results(fake, DESKTOP_COMMANDER, start, 100) == 100


def test_a_glob_is_polled_until_complete_and_counts_its_total(fake: McpSession,
                                                              tmp_path: Path) -> None:
    start = DESKTOP_COMMANDER.glob(tmp_path, "*.md")
    assert start[1]["arguments"] == {"path": str(tmp_path), "pattern": "*.md",
                                     "searchType": "files"}
    assert peer_rows.background_results(fake, DESKTOP_COMMANDER, start, None) == 180


def test_a_reply_without_a_session_is_a_protocol_error(fake: McpSession,
                                                       tmp_path: Path) -> None:
    start = McpSession.tool("get_more_search_results", {"sessionId": "x", "length": 1})
    with pytest.raises(ProtocolError, match="no search session"):
        peer_rows.background_results(fake, DESKTOP_COMMANDER, start, 1)


def test_calls_are_in_the_peers_own_words(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    assert DESKTOP_COMMANDER.read(path) == ("tools/call", {
        "name": "read_file", "arguments": {"path": str(path)}})
    assert DESKTOP_COMMANDER.replace(path, "a", "b", None)[1]["arguments"] == {
        "file_path": str(path), "old_string": "a", "new_string": "b"}
    assert content_text({"content": [{"text": "x"}, {"text": "y"}]}) == "x\ny"


def test_a_line_edit_names_the_line_and_the_hashes_its_read_gave(fake: McpSession,
                                                                 tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    name, params = TEXT_EDITOR.replace(path, "counter = 7\n", "counter = 8\n", fake)
    assert name == "tools/call" and params["name"] == "edit_text_file_contents"
    [edit] = params["arguments"]["files"]
    assert edit["path"] == str(path) and edit["file_hash"] == "file-hash"
    assert edit["patches"] == [{"line_start": 3, "line_end": 3, "contents": "counter = 8\n",
                                "range_hash": hashlib.sha256(b"counter = 7\n").hexdigest()}]


def test_a_missing_peer_is_unavailable_without_install(tmp_path: Path) -> None:
    for peer in PEERS:
        with pytest.raises(Unavailable, match="not installed|node not found"):
            peer.argv(tmp_path, False, tmp_path)


def test_every_peer_has_its_rows_and_openhands_says_why() -> None:
    keys = [s.key for s in peer_rows.SCENARIOS]
    for row in ("read_latency", "read_pipelined", "replace", "first_common", "glob", "spawn"):
        assert f"desktop_commander_{row}" in keys
    for row in ("read_latency", "read_pipelined", "replace", "spawn"):
        assert f"mcp_text_editor_{row}" in keys
    assert not [key for key in keys if key.startswith("mcp_text_editor_")
                and key.endswith(("first_common", "glob"))]  # it has no such tool
    with pytest.raises(Unavailable):
        peer_rows.openhands(None)  # type: ignore[arg-type]  # raises before using env
