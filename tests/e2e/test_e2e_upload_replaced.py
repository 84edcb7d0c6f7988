"""The digest of a file the server landed from an upload is taken, not read again, when
an upload replaces it (rpc/dispatch/landed.py): over stdio in parts, and over HTTP by PUT,
which share one memory. Observed for real: a same-size rewrite in place whose mtime is
put back keeps the version, so a record that still says the landed digest proves the old
file was not hashed again (the limit docs/protocol.md names); a rewrite that changes the
version is hashed, as is a file the server never landed. A client cannot hand the
digest in itself."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

import httpx

import pytest

from http_server import HttpServer
from rpc_client import RpcServer

PART = 512 << 10
SIZE = 3 << 19  # past what the history takes inline (1 MiB), which it reads to keep
# the records need the old file's digest, and so does the history; but it reads a file
# it keeps anyway, so only one over its budget (then only hashed) is spared the read
NOT_KEPT = {"history off": ("--history", "0"),
            "over the history's budget": ("--history-bytes", str(1 << 20))}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _upload(server: RpcServer, path: str, blob: bytes) -> None:
    uid = server.result("file.upload_begin", {"path": path, "size": len(blob),
                                              "sha256": _sha(blob)})["upload_id"]
    for at in range(0, len(blob), PART):
        server.result("file.upload_part", {"upload_id": uid, "offset": at, "data":
                                           base64.b64encode(blob[at:at + PART]).decode()})
    server.result("file.upload_commit", {"upload_id": uid})


def _rewrite_keeping_the_version(path: Path, content: bytes) -> None:
    st = path.stat()
    assert len(content) == st.st_size
    with open(path, "r+b") as f:
        f.write(content)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _befores(records: Path, path: str) -> list[str | None]:
    lines = [json.loads(line) for line in (records / "records.jsonl").read_text().splitlines()]
    return [r["sha256_before"] for r in lines
            if r.get("path") == path and r["method"] == "file.upload_commit"]


@pytest.mark.parametrize("history", NOT_KEPT.values(), ids=NOT_KEPT.keys())
def test_an_upload_over_a_file_it_landed_takes_that_digest(tmp_path: Path,
                                                           history: tuple[str, str]) -> None:
    ws, records = tmp_path / "ws", tmp_path / "records"
    ws.mkdir()
    records.mkdir()
    first, second, third, fourth = (os.urandom(SIZE) for _ in range(4))
    (ws / "theirs.bin").write_bytes(first)
    where = ("--history", str(tmp_path / "history")) if history[0] != "--history" else ()
    with RpcServer(ws, "--records", str(records), *history, *where) as server:
        _upload(server, "m.bin", first)
        _upload(server, "m.bin", second)  # replaces what it landed: digest known
        _rewrite_keeping_the_version(ws / "m.bin", third)
        _upload(server, "m.bin", fourth)  # still "that version": the landed digest
        (ws / "m.bin").write_bytes(third)  # another version: hashed
        _upload(server, "m.bin", first)
        _rewrite_keeping_the_version(ws / "theirs.bin", second)
        _upload(server, "theirs.bin", third)  # never landed by it: hashed
    assert _befores(records, "m.bin") == [None, _sha(first), _sha(second), _sha(third)]
    assert _befores(records, "theirs.bin") == [_sha(second)]
    assert (ws / "m.bin").read_bytes() == first


def test_a_put_and_parts_share_what_the_server_landed(tmp_path: Path) -> None:
    ws, records = tmp_path / "ws", tmp_path / "records"
    ws.mkdir()
    records.mkdir()
    first, second, third = (os.urandom(SIZE) for _ in range(3))
    with HttpServer(ws, "--records", str(records), *NOT_KEPT["history off"]) as server:
        put = httpx.put(f"{server.base}/files/p.bin", content=first, timeout=60)
        assert put.status_code == 201, put.text
        _rewrite_keeping_the_version(ws / "p.bin", second)
        begin = httpx.post(server.rpc, json={
            "jsonrpc": "2.0", "id": 1, "method": "file.upload_begin",
            "params": {"path": "p.bin", "size": len(third)}}).json()["result"]
        for at in range(0, len(third), PART):
            httpx.post(server.rpc, json={
                "jsonrpc": "2.0", "id": 2, "method": "file.upload_part",
                "params": {"upload_id": begin["upload_id"], "offset": at,
                           "data": base64.b64encode(third[at:at + PART]).decode()}})
        done = httpx.post(server.rpc, json={
            "jsonrpc": "2.0", "id": 3, "method": "file.upload_commit",
            "params": {"upload_id": begin["upload_id"]}}).json()
        assert done["result"]["bytes_written"] == len(third), done
    assert _befores(records, "p.bin") == [None, _sha(first)]


def test_a_client_cannot_say_what_the_file_held(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "m.bin").write_bytes(b"old")
    version = None
    with RpcServer(ws) as server:
        version = server.result("file.info", {"path": "m.bin"})["version"]
        for name, value in (("replaced_version", version), ("replaced_sha256", _sha(b"x"))):
            refused = server.error("file.upload_begin", {"path": "m.bin", name: value})
            assert refused["data"]["error"] == "invalid_params", refused
    assert (ws / "m.bin").read_bytes() == b"old"
