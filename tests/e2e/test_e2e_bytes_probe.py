"""Regressions found probing docs/protocol.md's Bytes in and out over the real server as a
client would (HTTP and JSON-RPC over pipes): each test is named after the bug it pins
down, and failed before its fix."""

from __future__ import annotations

import socket
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from http_server import HttpServer

BODY = bytes(range(256)) * 4


def _raw(base: str, request: bytes) -> bytes:
    """One request on a fresh socket, everything the server answers until it closes or a
    second of silence (HEAD has no body to wait for)."""
    address = urlsplit(base)
    with socket.create_connection((address.hostname, address.port), timeout=5) as sock:
        sock.sendall(request)
        sock.settimeout(1)
        got = b""
        try:
            while chunk := sock.recv(65536):
                got += chunk
        except TimeoutError:
            pass
    return got


def test_head_on_files_and_probes_was_a_dropped_connection_and_an_error_log(
        tmp_path: Path) -> None:
    """HEAD /files/{path} (or /healthz) was answered 405 with a body, which h11 refuses
    for HEAD: the connection was dropped without any answer and a traceback logged."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.bin").write_bytes(BODY)
    with HttpServer(ws, token="t0ken", tmp=tmp_path) as server:
        auth = {"authorization": "Bearer t0ken"}
        for path in ("/files/a.bin", "/healthz", "/archive/"):
            head = httpx.head(server.base + path, headers=auth)
            assert head.status_code == 405 and head.content == b"", path
        host = urlsplit(server.base).netloc
        got = _raw(server.base, f"HEAD /files/a.bin HTTP/1.1\r\nHost: {host}\r\n"
                   "Authorization: Bearer t0ken\r\n\r\n".encode())
        assert got.startswith(b"HTTP/1.1 405 ") and got.endswith(b"\r\n\r\n"), got
        assert httpx.get(server.base + "/files/a.bin", headers=auth).content == BODY
    assert b"Traceback" not in server.stderr and b"ERROR" not in server.stderr, \
        server.stderr.decode(errors="replace")


def test_if_none_match_with_a_list_or_a_weak_tag_was_a_full_200(tmp_path: Path) -> None:
    """If-None-Match is a list of ETags compared weakly (RFC 9110, 13.1.2): a client
    sending the tag it holds among others, or as W/"...", got the whole file again."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.bin").write_bytes(BODY)
    with HttpServer(ws) as server:
        url = server.base + "/files/a.bin"
        tag = httpx.get(url).headers["etag"]
        for given in (f'"other", {tag}', f"W/{tag}", f'W/"x", W/{tag}', tag, "*"):
            got = httpx.get(url, headers={"if-none-match": given})
            assert got.status_code == 304 and got.content == b"", given
            assert got.headers["etag"] == tag
        assert httpx.get(url, headers={"if-none-match": '"other"'}).content == BODY


def test_range_of_the_last_zero_bytes_was_a_206_with_a_backwards_content_range(
        tmp_path: Path) -> None:
    """`Range: bytes=-0` asks for no bytes (unsatisfiable: 416), and `bytes=9-3` is no
    valid range (ignored: the whole file); they were a 206 whose Content-Range ended
    before it began, and a 416."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.bin").write_bytes(BODY)
    with HttpServer(ws) as server:
        url = server.base + "/files/a.bin"
        none = httpx.get(url, headers={"range": "bytes=-0"})
        assert none.status_code == 416 and none.headers["content-range"] == \
            f"bytes */{len(BODY)}"
        backwards = httpx.get(url, headers={"range": "bytes=9-3"})
        assert backwards.status_code == 200 and backwards.content == BODY
        tail = httpx.get(url, headers={"range": "bytes=-3"})
        assert tail.status_code == 206 and tail.content == BODY[-3:]
