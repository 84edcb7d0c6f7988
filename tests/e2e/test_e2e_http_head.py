"""Regression: every HEAD request over HTTP was answered with nothing (the connection
closed, an error and its traceback logged): h11 refuses a body in the answer to a HEAD,
and the server sent one. The probes and /metrics answer HEAD as GET without the body
(RFC 9110 9.3.2); other routes answer their status (405, 401) with no body, and the
connection stays usable."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest

from http_server import HttpServer

TOKEN = "tok-head-e2e"


@pytest.fixture
def server(tmp_path: Path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    with HttpServer(root, "--workers", "1", token=TOKEN, tmp=tmp_path) as srv:
        yield srv


def _raw(server: HttpServer, request: bytes) -> bytes:
    """One request on a fresh connection, read to its close (every reply here ends it
    or says its length: no body follows the head of a HEAD)."""
    host, port = server.base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=15) as sock:
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return data


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_head_of_a_probe_is_its_get_without_the_body(server: HttpServer, path: str) -> None:
    got = httpx.get(server.base + path, timeout=15)
    head = httpx.head(server.base + path, timeout=15)
    assert head.status_code == got.status_code == 200
    assert head.content == b""
    assert head.headers["content-type"] == "application/json"
    assert head.headers["content-length"] == str(len(got.content))


def test_head_of_metrics_needs_the_token_like_its_get(server: HttpServer) -> None:
    assert httpx.head(server.base + "/metrics", timeout=15).status_code == 401
    ok = httpx.head(server.base + "/metrics", timeout=15,
                    headers={"authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 200 and ok.content == b""
    assert ok.headers["content-type"].startswith("text/plain")


def test_head_elsewhere_is_answered_its_status_with_no_body(server: HttpServer) -> None:
    auth = f"Authorization: Bearer {TOKEN}\r\n".encode()
    host = server.base.removeprefix("http://").encode()
    for target, status in ((b"/files/a.txt", b"200"), (b"/archive/", b"405"),
                           (b"/rpc", b"405")):
        reply = _raw(server, b"HEAD " + target + b" HTTP/1.1\r\nHost: " + host + b"\r\n"
                     + auth + b"\r\n")
        assert reply.startswith(b"HTTP/1.1 " + status), reply
        assert reply.endswith(b"\r\n\r\n"), reply  # the head, and no body after it
    with httpx.Client(base_url=server.base, timeout=15,
                      headers={"authorization": f"Bearer {TOKEN}"}) as client:
        assert client.head("/rpc").status_code == 405  # kept alive past the 405's head?
        assert client.post("/rpc", json={"jsonrpc": "2.0", "id": 1, "method": "file.read",
                                         "params": {"path": "a.txt"}}).status_code == 200
    assert b"Traceback" not in server.stderr and b"cannot send" not in server.stderr
