"""GET and PUT /files/{path} over real HTTP (docs/protocol.md, Bytes in and out): streamed
both ways, ETag/Range/If-None-Match/If-Match/X-Content-SHA256 honoured, the token and the
confinement as for /rpc, and a PUT whose connection drops halfway leaves the file as it
was with no spool behind."""

from __future__ import annotations

import hashlib
import os
import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from http_server import HttpServer

BLOB = os.urandom(20 << 20)  # three upload parts and three read ranges


def _spools(ws: Path) -> list[str]:
    return [p.name for p in ws.iterdir() if p.name.startswith(".chorus-tmp-")]


def test_put_then_get_streams_the_bytes_both_ways(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with HttpServer(ws, token="t0ken", tmp=tmp_path) as server:
        auth = {"authorization": "Bearer t0ken"}
        put = httpx.put(server.base + "/files/data/model%20v1.bin", content=BLOB,
                        headers={**auth, "x-content-sha256": hashlib.sha256(BLOB).hexdigest()},
                        timeout=60)
        assert put.status_code == 201, put.text
        version = put.json()["version"]
        assert put.headers["etag"] == f'"{version}"'
        assert (ws / "data/model v1.bin").read_bytes() == BLOB
        got = httpx.get(server.base + "/files/data/model%20v1.bin", headers=auth, timeout=60)
        assert got.status_code == 200 and got.content == BLOB
        assert got.headers["etag"] == f'"{version}"'
        assert int(got.headers["content-length"]) == len(BLOB)
        part = httpx.get(server.base + "/files/data/model%20v1.bin",
                         headers={**auth, "range": "bytes=100-199"})
        assert part.status_code == 206 and part.content == BLOB[100:200]
        assert part.headers["content-range"] == f"bytes 100-199/{len(BLOB)}"
        tail = httpx.get(server.base + "/files/data/model%20v1.bin",
                         headers={**auth, "range": "bytes=-10"})
        assert tail.status_code == 206 and tail.content == BLOB[-10:]
        past = httpx.get(server.base + "/files/data/model%20v1.bin",
                         headers={**auth, "range": f"bytes={len(BLOB)}-"})
        assert past.status_code == 416
        same = httpx.get(server.base + "/files/data/model%20v1.bin",
                         headers={**auth, "if-none-match": f'"{version}"'})
        assert same.status_code == 304 and same.content == b""
        again = httpx.put(server.base + "/files/data/model%20v1.bin", content=b"v2",
                          headers={**auth, "if-match": f'"{version}"'})
        assert again.status_code == 200 and again.json()["created"] is False
        stale = httpx.put(server.base + "/files/data/model%20v1.bin", content=b"v3",
                          headers={**auth, "if-match": f'"{version}"'})
        assert stale.status_code == 412 and stale.json()["error"] == "conflict"
        assert httpx.get(server.base + "/files/data/model%20v1.bin").status_code == 401
    assert (ws / "data/model v1.bin").read_bytes() == b"v2"
    assert _spools(ws) == []


def test_put_if_match_star_replaces_only_and_if_none_match_star_creates_only(
        tmp_path: Path) -> None:
    """`*` was read as a version: `If-Match: *` refused every file (412) and
    `If-None-Match: *` replaced one (RFC 9110, 13.1.1-2: exists / does not exist)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "there.bin").write_bytes(b"old")
    with HttpServer(ws) as server:
        def put(name: str, header: str) -> httpx.Response:
            return httpx.put(f"{server.base}/files/{name}", content=b"new",
                             headers={header: "*"})
        assert put("there.bin", "if-match").status_code == 200
        absent = put("absent.bin", "if-match")
        assert absent.status_code == 412 and absent.json()["error"] == "file_not_found"
        taken = put("there.bin", "if-none-match")
        assert taken.status_code == 412 and taken.json()["error"] == "already_exists"
        assert put("fresh.bin", "if-none-match").status_code == 201
    assert (ws / "there.bin").read_bytes() == b"new"  # replaced once, by If-Match: *
    assert not (ws / "absent.bin").exists()
    assert (ws / "fresh.bin").read_bytes() == b"new"
    assert _spools(ws) == []


def test_refusals_carry_the_error_data_and_change_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "keep.bin").write_bytes(b"keep")
    (ws / "link").symlink_to(tmp_path)
    with HttpServer(ws) as server:
        wrong = httpx.put(server.base + "/files/keep.bin", content=b"new",
                          headers={"x-content-sha256": "0" * 64})
        assert wrong.status_code == 422 and wrong.json()["error"] == "verification_failed"
        out = httpx.put(server.base + "/files/link/evil.bin", content=b"x")
        assert out.status_code == 403 and out.json()["error"] == "path_outside_workspace"
        missing = httpx.get(server.base + "/files/nope.bin")
        assert missing.status_code == 404 and missing.json()["error"] == "file_not_found"
        assert httpx.delete(server.base + "/files/keep.bin").status_code == 405
    assert (ws / "keep.bin").read_bytes() == b"keep"
    assert not (tmp_path / "evil.bin").exists()
    assert _spools(ws) == []


def _raw_put(base: str, path: str, length: int, sent: bytes) -> socket.socket:
    """A PUT announcing `length` bytes that sends only `sent` (the caller closes it)."""
    where = urlsplit(base)
    sock = socket.create_connection((where.hostname, where.port))
    sock.sendall(f"PUT /files/{path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 f"Content-Length: {length}\r\n\r\n".encode() + sent)
    return sock


def _spool_bytes(ws: Path) -> int:
    """Bytes written (not merely reserved) in the spools' data files."""
    return sum(p.stat().st_blocks * 512 for spool in ws.glob(".chorus-tmp-upload-*")
               for p in spool.glob("data"))


def test_a_put_whose_connection_drops_halfway_lands_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.bin").write_bytes(b"as it was")
    with HttpServer(ws) as server:
        sock = _raw_put(server.base, "f.bin", len(BLOB), BLOB[:len(BLOB) // 2])
        deadline = time.monotonic() + 15  # until bytes are in the spool, written by the server
        while not _spool_bytes(ws) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _spool_bytes(ws)
        sock.close()
        deadline = time.monotonic() + 15
        while _spools(ws) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _spools(ws) == []
        assert httpx.get(server.base + "/files/f.bin").content == b"as it was"
    assert (ws / "f.bin").read_bytes() == b"as it was"


def test_a_slow_loris_put_is_cut_at_the_idle_timeout(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with HttpServer(ws, "--http-idle-timeout", "1") as server:
        sock = _raw_put(server.base, "slow.bin", 1000, b"x" * 10)
        sock.settimeout(15)
        answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 408"), answer
        sock.close()
        deadline = time.monotonic() + 15
        while _spools(ws) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _spools(ws) == [] and not (ws / "slow.bin").exists()


def test_regression_a_put_expecting_100_continue_waited_for_the_clients_timeout(
        tmp_path: Path) -> None:
    """curl -T sends `Expect: 100-continue` and waits a second for it before sending the
    body: the server never answered it, so every upload by curl paid that second."""
    ws = tmp_path / "ws"
    ws.mkdir()
    with HttpServer(ws) as server:
        where = urlsplit(server.base)
        sock = socket.create_connection((where.hostname, where.port))
        sock.settimeout(15)
        sock.sendall(b"PUT /files/c.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\n"
                     b"Expect: 100-continue\r\n\r\n")
        assert sock.recv(4096).startswith(b"HTTP/1.1 100 ")
        sock.sendall(b"abc")
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 201 ")
        sock.close()
    assert (ws / "c.bin").read_bytes() == b"abc"


def test_regression_a_put_longer_than_max_message_bytes_was_refused_by_its_length(
        tmp_path: Path) -> None:
    """A PUT's declared Content-Length was held to --max-message-bytes (one JSON message's
    bound) before its body was streamed: every upload of a file over 64 MiB by a client
    that sends a length (curl -T, httpx) was 413, though docs/protocol.md excepts a /files
    PUT. A /rpc body over the limit is still refused from its length."""
    ws = tmp_path / "ws"
    ws.mkdir()
    with HttpServer(ws, "--max-message-bytes", "1M") as server:
        blob = BLOB[:3 << 20]
        put = httpx.put(server.base + "/files/big.bin", content=blob, timeout=60)
        assert put.status_code == 201, put.text
        assert (ws / "big.bin").read_bytes() == blob
        rpc = httpx.post(server.rpc, content=b" " * (2 << 20),
                         headers={"content-type": "application/json"}, timeout=60)
        assert rpc.status_code == 413


def test_confinement_holds_for_every_spelling_of_a_path_out(tmp_path: Path) -> None:
    """A symlink out, a FIFO (opening it would block a worker), `..` percent-encoded (the
    URL's own `..` never reaches /files), an encoded absolute path and a reserved name:
    each refused with its error, nothing read from outside, nothing written anywhere."""
    ws = tmp_path / "ws"
    ws.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cr3t-payload")
    (ws / "out").symlink_to(secret)
    os.mkfifo(ws / "pipe")
    with HttpServer(ws) as server:
        refused = {"out": (403, "path_outside_workspace"),
                   "pipe": (409, "not_a_regular_file"),
                   "%2e%2e/secret.txt": (403, "path_outside_workspace"),
                   "sub/%2E%2E/%2e%2e/secret.txt": (403, "path_outside_workspace"),
                   "%2F" + "%2F".join(secret.parts[1:]): (403, "path_outside_workspace")}
        for path, (status, error) in refused.items():
            got = httpx.get(server.base + "/files/" + path, timeout=30)
            assert (got.status_code, got.json()["error"]) == (status, error), path
            assert b"s3cr3t" not in got.content
            put = httpx.put(server.base + "/files/" + path, content=b"evil", timeout=30)
            assert (put.status_code, put.json()["error"]) == (status, error), path
        reserved = httpx.put(server.base + "/files/.chorus-tmp-x", content=b"evil")
        assert reserved.status_code == 400 and reserved.json()["error"] == "invalid_params"
    assert secret.read_text() == "s3cr3t-payload"
    assert sorted(p.name for p in ws.iterdir()) == ["out", "pipe"]
