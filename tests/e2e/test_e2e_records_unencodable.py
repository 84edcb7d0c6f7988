"""Audit records of calls whose id or path orjson cannot encode (docs/protocol.md, Audit
records; Process and transport: every request gets exactly one response).

Bug: with --records, a mutating call whose id is an integer beyond 64 bits (a double holds
it, so it is a valid id) or whose id or path holds a lone surrogate sent as a `\\ud800`
escape got no response at all: the record line failed to encode, and the answer died
with it. The line must be written, with the id and path as the client gave them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rpc_client import RpcServer, error_code

BIG = 2 ** 70


@pytest.mark.parametrize(("rid", "path", "code"), [
    (BIG, "big.txt", None),
    ("\udc80", "lone-id.txt", None),
    (7, "lone\ud800.txt", "invalid_params"),
])
def test_a_record_that_orjson_cannot_encode_still_gets_its_line_and_its_answer(
        tmp_path: Path, rid: object, path: str, code: str | None) -> None:
    ws, records = tmp_path / "ws", tmp_path / "records"
    ws.mkdir()
    with RpcServer(ws, "--workers", "1", "--records", str(records)) as server:
        server.send({"jsonrpc": "2.0", "id": rid, "method": "file.write",
                     "params": {"path": path, "content": "x\n"}})
        reply = server.recv()
        assert reply["id"] == rid and error_code(reply) == code, reply
        line, = (json.loads(ln) for ln in
                 (records / "records.jsonl").read_text().splitlines())
    assert (line["id"], line["path"], line["method"]) == (rid, path, "file.write")
    assert line["outcome"] == (code or "ok")
