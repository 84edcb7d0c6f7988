"""Regression: while the server drained, an HTTP request was answered 503 with a line of
text, so a JSON-RPC client over HTTP could not read the shutting_down error the drain
promises (docs/protocol.md, Running many: Drain), nor a /files client its error data.
Now /rpc and /mcp get the JSON-RPC error response (id null: refused before the body is
read), /files and /archive the error's data, each with Retry-After; the probes still
answer."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from e2e_support import _children, _open_files, slow_workspace, wait_for
from http_server import HttpServer

TOKEN = "tok-drain-bodies"


@pytest.mark.long  # waits out a drain: ~4 s
def test_requests_during_the_drain_get_shutting_down_in_their_endpoints_form(
        tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    slow_workspace(root)
    server = HttpServer(root, "--workers", "1", "--shutdown-timeout", "2.5", "--log-level",
                        "info", token=TOKEN, tmp=tmp_path)
    auth = {"authorization": f"Bearer {TOKEN}"}
    try:
        end = time.monotonic() + 15
        while httpx.get(server.base + "/readyz", timeout=15).status_code != 200:
            assert time.monotonic() < end
            time.sleep(0.02)
        answers: list[Any] = []
        endless = threading.Thread(target=lambda: answers.append(httpx.post(
            server.base + "/rpc", headers=auth, timeout=60, json={
                "jsonrpc": "2.0", "id": "endless", "method": "file.read",
                "params": {"path": "endless.txt", "limit": 1}})))
        endless.start()
        wait_for(lambda: any(str(root / "endless.txt") in _open_files(pid)
                             for pid in _children(server.proc.pid)))  # it is running
        server.proc.send_signal(signal.SIGTERM)
        end = time.monotonic() + 15
        while b"draining" not in server.stderr:
            assert time.monotonic() < end, server.stderr
            time.sleep(0.01)
        for endpoint in ("/rpc", "/mcp"):
            reply = httpx.post(server.base + endpoint, headers=auth, timeout=15, json={
                "jsonrpc": "2.0", "id": 2, "method": "file.read",
                "params": {"path": "a.txt"}})
            assert reply.status_code == 503 and int(reply.headers["retry-after"]) >= 1
            body = reply.json()
            assert body["id"] is None and body["error"]["code"] == -32027, body
            assert body["error"]["data"]["error"] == "shutting_down"
        for reply in (httpx.put(server.base + "/files/new.txt", content=b"x", headers=auth,
                                timeout=15),
                      httpx.get(server.base + "/files/a.txt", headers=auth, timeout=15)):
            assert reply.status_code == 503 and int(reply.headers["retry-after"]) >= 1
            assert reply.json()["error"] == "shutting_down", reply.text
        assert httpx.get(server.base + "/healthz", timeout=15).status_code == 200
        assert not (root / "new.txt").exists()
        assert server.proc.wait(30) == 0
        endless.join(30)
        assert answers[0].json()["error"]["data"]["error"] == "timeout"
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
