"""Parts over 1 MiB over stdio, the lines the server lifts the base64 out of before parsing
the rest (rpc/wire/envelope.py) and hands on decoded: out of order and resent, they land
byte for byte with the digest checked; a part that is not base64 is invalid_params, and a
line that is not JSON is still a parse error, each leaving the file as it was."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import orjson
import pybase64

from rpc_client import RpcServer

PART = 2 << 20


def test_big_parts_land_whole_and_bad_ones_are_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "big.bin").write_bytes(b"old")
    blob = os.urandom(3 * PART + 12345)
    with RpcServer(ws) as server:
        uid = server.result("file.upload_begin", {
            "path": "big.bin", "size": len(blob),
            "sha256": hashlib.sha256(blob).hexdigest()})["upload_id"]

        def part(at: int, data: str | None = None) -> dict[str, Any]:
            return server.call("file.upload_part", {"upload_id": uid, "offset": at, "data":
                                                    data or pybase64.b64encode(
                                                        blob[at:at + PART]).decode()})

        bad = pybase64.b64encode(blob[:PART]).decode()
        refused = part(0, bad[:-8] + "!!!!!!!!")
        assert refused["error"]["data"]["error"] == "invalid_params"
        assert refused["error"]["data"]["param"] == "data"
        line = orjson.dumps({"jsonrpc": "2.0", "id": 99, "method": "file.upload_part",
                             "params": {"upload_id": uid, "offset": 0, "data": bad}})
        at = line.index(b'"data":"') + 1000
        server.send_raw(line[:at] + b"\x01" + line[at + 1:] + b"\n")
        assert server.recv()["error"]["code"] == -32700
        for at in (2 * PART, 0, 3 * PART, PART, 0):  # out of order, the first resent
            assert "result" in part(at), at
        assert (ws / "big.bin").read_bytes() == b"old"
        done = server.result("file.upload_commit", {"upload_id": uid})
        assert done["bytes_written"] == len(blob)
    assert (ws / "big.bin").read_bytes() == blob


def test_parts_written_direct_over_stdio_land_whole(tmp_path: Path) -> None:
    """Parts of 4 MiB and more (tools/bytes/spool.py: written past the page cache, hashed
    in a thread), their lines sent in 64 KiB writes so the server's decoder keeps each
    as pieces (rpc/wire/framing.py): out of order, one with an unaligned tail, one at an
    unaligned offset; a resent part with other bytes is refused and changes nothing."""
    ws = tmp_path / "ws"
    ws.mkdir()
    big = 4 << 20
    cuts = [(0, big), (big, 2 * big + 1000), (2 * big + 1000, 3 * big + 1777)]
    blob = os.urandom(cuts[-1][1])
    with RpcServer(ws) as server:
        uid = server.result("file.upload_begin", {
            "path": "direct.bin", "size": len(blob),
            "sha256": hashlib.sha256(blob).hexdigest()})["upload_id"]

        def part(start: int, end: int, data: bytes = blob) -> dict[str, Any]:
            line = orjson.dumps({"jsonrpc": "2.0", "id": start + 1, "method":
                                 "file.upload_part", "params": {
                                     "upload_id": uid, "offset": start, "data":
                                     pybase64.b64encode(data[start:end]).decode()}}) + b"\n"
            for at in range(0, len(line), 1 << 16):
                server.send_raw(line[at:at + (1 << 16)])
            return server.recv()

        for start, end in (cuts[2], cuts[0], cuts[1]):
            assert "result" in part(start, end), start
        other = bytearray(blob)
        other[big + 4096] ^= 1
        refused = part(*cuts[1], bytes(other))
        assert refused["error"]["data"]["error"] == "invalid_params"
        assert refused["error"]["data"]["overlap"] == list(cuts[1])
        done = server.result("file.upload_commit", {"upload_id": uid})
        assert done["bytes_written"] == len(blob)
    assert (ws / "direct.bin").read_bytes() == blob
