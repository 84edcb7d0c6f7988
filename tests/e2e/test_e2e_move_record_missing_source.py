"""A file.move refused for a missing `source` (docs/protocol.md, Audit records): its record
named the destination as the call's `path` (the first path param given) and left out
`destination`, and hashed the destination's file as if the call were about it. The record
keeps each path as the client gave it: no `path`, the `destination` under its own name."""

from __future__ import annotations

import json
from pathlib import Path

from rpc_client import RpcServer, error_code


def test_move_without_source_records_destination_as_destination(tmp_path: Path) -> None:
    root, records = tmp_path / "ws", tmp_path / "records"
    root.mkdir()
    (root / "c").write_text("existing\n")
    with RpcServer(root, "--records", str(records)) as server:
        reply = server.call("file.move", {"destination": "c"})
        assert error_code(reply) == "invalid_params"
    (line,) = [json.loads(text) for text in (records / "records.jsonl").read_text().splitlines()]
    assert line["method"] == "file.move"
    assert line["path"] is None
    assert line["destination"] == "c"
    assert line["outcome"] == "invalid_params"
    assert line["sha256_before"] is None and line["sha256_after"] is None
    assert (root / "c").read_text() == "existing\n"


def test_write_by_its_second_alias_still_records_it_as_path(tmp_path: Path) -> None:
    """The fix keys on a required first path param: a path's aliases (shadow's `Write`
    takes `file_path` or `filePath`) are never required, so the alias given is the path."""
    root, records = tmp_path / "ws", tmp_path / "records"
    root.mkdir()
    with RpcServer(root, "--tools", "shadow", "--records", str(records)) as server:
        server.result("Write", {"filePath": "x.txt", "content": "x\n"})
    (line,) = [json.loads(text) for text in (records / "records.jsonl").read_text().splitlines()]
    assert line["path"] == "x.txt" and "filePath" not in line
    assert line["outcome"] == "ok"
