"""The operator's routes over real HTTP (docs/protocol.md, Running many): /healthz and
/readyz without the token and without a word about the workspace, /metrics behind the
token (or --metrics-public) with series a flood of made-up methods cannot grow, /readyz
503 while a SIGTERM drains the server and every other request 503 with Retry-After; and
the JSON request log, which never carries file content nor the token."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from e2e_support import ENDLESS_SIZE, SLOW_SIZE, E2EServer, sparse_text
from http_server import HttpServer, initialize

TOKEN = "tok-3b1f-never-logged"
CANARY = "CANARY-7f3a-content"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text(f"alpha\n{CANARY}-line\nbeta\n")
    sparse_text(root / "slow.txt", SLOW_SIZE)
    return root


def get(server: HttpServer, path: str, token: str | None = None) -> httpx.Response:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    return httpx.get(server.base + path, headers=headers, timeout=30)


def ready(server: HttpServer, guard: float = 15.0) -> httpx.Response:
    """/readyz once it says ready (it says starting until the pool is up)."""
    end = time.monotonic() + guard
    while (reply := get(server, "/readyz")).status_code != 200:
        assert reply.json() == {"status": "starting"} and time.monotonic() < end
        time.sleep(0.02)
    return reply


def test_probes_need_no_token_and_metrics_does(ws: Path, tmp_path: Path) -> None:
    with HttpServer(ws, "--workers", "1", token=TOKEN, tmp=tmp_path) as server:
        health = get(server, "/healthz")
        assert health.status_code == 200 and health.json() == {"status": "ok"}
        assert ready(server).json() == {"status": "ready"}
        assert httpx.post(server.base + "/healthz", timeout=30).status_code == 405
        assert get(server, "/metrics").status_code == 401
        assert get(server, "/metrics", "wrong").status_code == 401
        assert server.post("/rpc", {"jsonrpc": "2.0", "id": 1, "method": "file.read",
                                    "params": {"path": "a.txt"}}).status_code == 200
        scraped = get(server, "/metrics", TOKEN)
        assert scraped.status_code == 200
        assert scraped.headers["content-type"].startswith("text/plain")
        text = scraped.text
        for family in ("chorus_requests_total", "chorus_request_seconds_bucket",
                       "chorus_requests_in_flight", "chorus_worker_restarts_total",
                       "chorus_bytes_read_total", "chorus_bytes_written_total",
                       "chorus_history_bytes", "chorus_workspace_bytes",
                       "chorus_workspace_files", "chorus_quota_bytes", "chorus_quota_files",
                       "chorus_http_connections", "chorus_warm_state"):
            assert re.search(rf"^{family}[{{ ]", text, re.M), family
        assert 'chorus_requests_total{method="file.read",outcome="ok"} 1.0' in text
        assert str(ws) not in text and CANARY not in text


def test_metrics_public_serves_them_without_the_token(ws: Path, tmp_path: Path) -> None:
    with HttpServer(ws, "--workers", "1", "--metrics-public", token=TOKEN,
                    tmp=tmp_path) as server:
        assert get(server, "/metrics").status_code == 200
        assert server.post("/rpc", {"jsonrpc": "2.0", "id": 1, "method": "rpc.discover"},
                           authorization="Bearer wrong").status_code == 401


def series(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("chorus_requests_total{")]


def test_a_flood_of_unknown_methods_and_bad_params_cannot_grow_the_series(ws: Path) -> None:
    with HttpServer(ws, "--workers", "1") as server:
        flood = [{"jsonrpc": "2.0", "id": i, "method": f"made.up.{i}"} for i in range(300)]
        flood += [{"jsonrpc": "2.0", "id": 1000 + i, "method": "file.read",
                   "params": {"path": "a.txt", f"bogus{i}": i}} for i in range(300)]
        flood += [{"jsonrpc": "2.0", "id": 2000 + i, "method": f"x{i}", "params": [i]}
                  for i in range(100)]
        assert server.post("/rpc", flood).status_code == 200
        lines = series(get(server, "/metrics").text)
        assert 'chorus_requests_total{method="unknown",outcome="method_not_found"} 400.0' \
            in lines
        assert 'chorus_requests_total{method="file.read",outcome="invalid_params"} 300.0' \
            in lines
        assert len(lines) == 2, lines
        figures = server.post("/rpc", {"jsonrpc": "2.0", "id": 1, "method": "rpc.metrics"})
        counted = {(s["method"], s["outcome"]): s["value"]
                   for s in figures.json()["result"]["chorus_requests_total"]}
        assert counted == {("unknown", "method_not_found"): 400,
                           ("file.read", "invalid_params"): 300}



def test_garbage_and_invalid_requests_are_counted_and_logged_as_unknown(ws: Path) -> None:
    """A line that is no JSON, or JSON that is no request, was answered and never counted:
    a client sending garbage left chorus_requests_total and the request log silent."""
    with E2EServer(ws, "--workers", "1", "--log-format", "json", "--log-requests") as server:
        server.send_raw(b"not json\n")
        server.send_raw(b'{"jsonrpc":"2.0","id":7}\n')
        assert {server.recv()["id"], server.recv()["id"]} == {None, 7}
        counted = {(s["method"], s["outcome"]): s["value"]
                   for s in server.result("rpc.metrics", {})["chorus_requests_total"]}
        assert counted[("unknown", "parse_error")] == 1
        assert counted[("unknown", "invalid_request")] == 1
        assert server.close() == 0
    time.sleep(0.1)
    lines = [json.loads(line) for line in server.stderr.splitlines() if line.strip()]
    assert [(e["method"], e["outcome"]) for e in lines if e["event"] == "request"][:2] == [
        ("unknown", "parse_error"), ("unknown", "invalid_request")]


def test_regression_a_message_the_transport_refuses_is_counted_and_logged_too(
        ws: Path) -> None:
    """A message past --max-message-bytes, or an LSP frame without a valid
    Content-Length, was answered (-32600, -32700) but, refused before the dispatcher saw
    it, never counted nor logged, unlike a line that is no JSON."""
    with E2EServer(ws, "--workers", "1", "--max-message-bytes", "1K", "--log-format",
                   "json", "--log-requests") as server:
        server.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"file.read","params":{"path":"'
                        + b"a" * 2048 + b'"}}\n')
        assert server.recv()["error"]["data"]["error"] == "invalid_request"
        server.send_raw(b"Content-Length: many\r\n\r\n")
        assert server.recv_raw()
        counted = {(s["method"], s["outcome"]): s["value"]
                   for s in server.result("rpc.metrics", {})["chorus_requests_total"]}
        assert counted[("unknown", "invalid_request")] == 1
        assert counted[("unknown", "parse_error")] == 1
        assert server.close() == 0
    time.sleep(0.1)
    lines = [json.loads(line) for line in server.stderr.splitlines() if line.strip()]
    assert [(e["method"], e["outcome"]) for e in lines if e["event"] == "request"][:2] == [
        ("unknown", "invalid_request"), ("unknown", "parse_error")]


def test_a_flood_of_made_up_mcp_tools_and_methods_cannot_grow_the_series(ws: Path) -> None:
    """The same over /mcp: made-up tool names in tools/call (the name is an argument, never
    a label), made-up MCP methods and notifications, and bad arguments to a real tool."""
    with HttpServer(ws, "--workers", "1") as server:
        flood: list[dict[str, Any]] = [
            {"jsonrpc": "2.0", "id": i, "method": "tools/call",
             "params": {"name": f"made_up_{i}", "arguments": {}}} for i in range(200)]
        flood += [{"jsonrpc": "2.0", "id": 1000 + i, "method": f"resources/made_up_{i}"}
                  for i in range(100)]
        flood += [{"jsonrpc": "2.0", "method": f"notifications/made_up_{i}"}
                  for i in range(100)]
        flood += [{"jsonrpc": "2.0", "id": 2000 + i, "method": "tools/call", "params": {
            "name": "file_read", "arguments": {"path": "a.txt", f"bogus_{i}": i}}}
            for i in range(100)]
        assert server.post("/mcp", flood).status_code == 200
        text = get(server, "/metrics").text
        assert "made_up" not in text and "bogus" not in text
        labels = {re.sub(r" [0-9.e+]+$", "", line) for line in series(text)}
        assert labels <= {'chorus_requests_total{method="tools/call",outcome="ok"}',
                          'chorus_requests_total{method="tools/call",outcome="invalid_params"}',
                          'chorus_requests_total{method="unknown",outcome="method_not_found"}',
                          'chorus_requests_total{method="unknown",outcome="ok"}'}, labels
        histograms = [line for line in text.splitlines()
                      if line.startswith("chorus_request_seconds_count{")]
        assert len(histograms) <= 2, histograms

def _worker_has_open(pid: int, target: str, guard: float = 15.0, workers: int = 1) -> None:
    """Until `workers` of the server's children hold `target` open."""
    end = time.monotonic() + guard
    while time.monotonic() < end:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        holding = 0
        for child in children:
            try:
                fds = os.listdir(f"/proc/{child}/fd")
                holding += any(_link(child, fd) == target for fd in fds)
            except OSError:
                continue
        if holding >= workers:
            return
        time.sleep(0.005)
    raise TimeoutError(f"fewer than {workers} worker(s) opened {target}")


def _link(pid: str, fd: str) -> str:
    try:
        return os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        return ""


def test_readyz_is_503_while_draining_and_requests_get_retry_after(ws: Path,
                                                                    tmp_path: Path) -> None:
    server = HttpServer(ws, "--workers", "1", "--log-level", "info", "--log-format", "json",
                        "--log-requests", token=TOKEN, tmp=tmp_path)
    try:
        ready(server)
        answers: list[Any] = []
        slow = threading.Thread(target=lambda: answers.append(server.post("/rpc", {
            "jsonrpc": "2.0", "id": "slow", "method": "file.read",
            "params": {"path": "slow.txt", "limit": 1}})))
        slow.start()
        _worker_has_open(server.proc.pid, str(ws / "slow.txt"))
        server.proc.send_signal(signal.SIGTERM)
        end = time.monotonic() + 15
        while b"draining" not in server.stderr:
            assert time.monotonic() < end, server.stderr
            time.sleep(0.01)
        probe = get(server, "/readyz")
        assert probe.status_code == 503 and probe.json() == {"status": "draining"}
        assert int(probe.headers["retry-after"]) >= 1
        assert get(server, "/healthz").status_code == 200
        refused = server.post("/rpc", {"jsonrpc": "2.0", "id": 2, "method": "file.read",
                                       "params": {"path": "a.txt"}})
        assert refused.status_code == 503 and int(refused.headers["retry-after"]) >= 1
        slow.join(60)
        assert answers[0].status_code == 200
        assert answers[0].json()["result"]["total_lines"] == 501
        assert server.proc.wait(30) == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
    time.sleep(0.1)  # the stderr thread reads the last lines
    assert TOKEN.encode() not in server.stderr
    logged = [json.loads(line) for line in server.stderr.splitlines()
              if line.startswith(b"{")]
    slow_line = [e for e in logged if e.get("id") == "slow"]
    assert slow_line and slow_line[0]["method"] == "file.read" \
        and slow_line[0]["path"] == "slow.txt" and slow_line[0]["outcome"] == "ok"


def test_json_request_logs_carry_codes_never_content(ws: Path) -> None:
    with E2EServer(ws, "--workers", "1", "--log-format", "json", "--log-requests") as server:
        missed = server.call("file.patch", {"path": "a.txt", "patches": [
            {"find": f"{CANARY}-lime", "replace": "x"}]})
        assert missed["error"]["data"]["error"] == "find_not_found"
        assert CANARY in json.dumps(missed)  # the hint quotes the file: the log must not
        assert "result" in server.call("file.read", {"path": "a.txt"})
        assert "result" in server.call("file.write", {"path": "b.txt",
                                                      "content": f"{CANARY}-written"})
        assert server.close() == 0
    time.sleep(0.1)
    assert CANARY.encode() not in server.stderr
    lines = [json.loads(line) for line in server.stderr.splitlines() if line.strip()]
    requests = [e for e in lines if e["event"] == "request"]
    assert [(e["method"], e["outcome"]) for e in requests] == [
        ("file.patch", "find_not_found"), ("file.read", "ok"), ("file.write", "ok")]
    for entry in requests:
        assert {"time", "level", "event", "id", "method", "path", "outcome", "ms"} <= set(
            entry) and entry["level"] == "info"



def test_a_request_line_names_the_path_of_a_move_a_dialect_tool_and_a_tool_call(
        ws: Path) -> None:
    """Only a `path` param was logged: file.move (`source`), Read (`file_path`) and every
    MCP tools/call went without the path they name."""
    with E2EServer(ws, "--workers", "1", "--tools", "native,claude", "--log-format", "json",
                   "--log-requests") as server:
        assert "result" in server.call("file.move", {"source": "a.txt",
                                                     "destination": "moved.txt"})
        assert "result" in server.call("Read", {"file_path": "moved.txt"})
        assert "result" in server.call("tools/call", {"name": "file_info",
                                                      "arguments": {"path": "moved.txt"}})
        assert server.close() == 0
    time.sleep(0.1)
    lines = [json.loads(line) for line in server.stderr.splitlines() if line.strip()]
    assert [(e["method"], e.get("path")) for e in lines if e["event"] == "request"] == [
        ("file.move", "a.txt"), ("Read", "moved.txt"), ("tools/call", "moved.txt")]

@pytest.mark.parametrize("log_format", ["json", "text"])
def test_no_log_line_carries_content_over_mcp_at_debug(ws: Path, log_format: str) -> None:
    """A find that misses over MCP (its hint quotes the file in the tool's error text) and
    a write of new text, with every logger at debug: stderr never holds either text."""
    with HttpServer(ws, "--workers", "1", "--log-level", "debug", "--log-format", log_format,
                    "--log-requests") as server:
        session = initialize(server)
        missed = server.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                      "params": {"name": "file_patch", "arguments": {
                                          "path": "a.txt", "patches": [
                                              {"find": f"{CANARY}-lime", "replace": "x"}]}}},
                             mcp_session_id=session).json()
        assert missed["result"]["isError"] and CANARY in json.dumps(missed)
        wrote = server.post("/mcp", {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                     "params": {"name": "file_write", "arguments": {
                                         "path": "b.txt", "content": f"{CANARY}-new"}}},
                            mcp_session_id=session).json()
        assert not wrote["result"].get("isError"), wrote
    time.sleep(0.1)  # the stderr thread reads the last lines
    assert b"tools/call" in server.stderr  # the requests were logged
    assert CANARY.encode() not in server.stderr

def test_rpc_metrics_over_stdio_counts_restarts_bytes_and_history(ws: Path,
                                                                   tmp_path: Path) -> None:
    with E2EServer(ws, "--workers", "1", "--history", str(tmp_path / "history")) as server:
        assert "result" in server.call("file.info", {"path": "."})  # the pool is up, and
        [worker] = server.workers(1)  # the one-shot start-up sweep beside it is gone
        os.kill(worker, signal.SIGKILL)
        end = time.monotonic() + 15
        while server.worker_pids() in ([], [worker]):
            assert time.monotonic() < end, "no worker replaced the killed one"
            time.sleep(0.01)
        assert "result" in server.call("file.write", {"path": "a.txt", "content": "é" * 10})
        assert "result" in server.call("file.read", {"path": "a.txt"})
        figures = server.result("rpc.metrics", {})
        assert figures["chorus_worker_restarts_total"] == 1
        assert figures["chorus_bytes_written_total"] == 20
        assert figures["chorus_bytes_read_total"] == len("     1\t".encode()) + 20
        assert figures["chorus_history_bytes"] > 0  # a.txt's first content, kept
        # no quota: counted from the warm tree (or a walk while it is built) for the read
        assert figures["chorus_workspace_bytes"] == SLOW_SIZE + 20
        assert server.close() == 0


def _raw(server: HttpServer, data: bytes) -> bytes:
    """Send `data` on a new connection at once; everything the server answers until it
    closes (or 10 s of silence)."""
    host, port = server.base.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
            if answer.count(b"HTTP/1.1 ") >= data.count(b"GET ") and \
                    answer.endswith((b"}", b"\n")):
                break  # every answer is in (a kept-alive connection stays open)
    return answer


def test_probes_are_answered_with_every_connection_busy_and_checks_kept(ws: Path) -> None:
    """With --http-max-connections 2 and both running a long read, a new connection is
    refused 503, but a probe is still answered (and its connection closed); its Host is
    checked as any request's; two probes sent at once on one connection both answer.
    The reads last until --request-timeout: reads of slow.txt (0.3 s) once ended before
    the second began under CI's load, and the test waited in vain for both at once."""
    sparse_text(ws / "endless.txt", ENDLESS_SIZE)
    with HttpServer(ws, "--workers", "2", "--http-max-connections", "2",
                    "--request-timeout", "5") as server:
        ready(server)
        slow = [threading.Thread(target=lambda: server.post("/rpc", {
            "jsonrpc": "2.0", "id": "slow", "method": "file.read",
            "params": {"path": "endless.txt", "limit": 1}})) for _ in range(2)]
        for thread in slow:
            thread.start()
        # both connections busy before a newcomer comes: an idle one would be evicted
        # for it (rpc/wire/http_limits.py), and its thread's request reset
        _worker_has_open(server.proc.pid, str(ws / "endless.txt"), workers=2)
        end = time.monotonic() + 15
        while b"503" not in _raw(server, b"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                         b"Content-Length: 0\r\n\r\n"):
            assert time.monotonic() < end, "the two slow reads never filled the server"
        probe = _at_cap(server, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert probe.startswith(b"HTTP/1.1 200 ") and probe.endswith(b'{"status":"ok"}')
        assert b"connection: close" in probe.lower()
        readyz = _at_cap(server, b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert readyz.startswith(b"HTTP/1.1 200 ") and b'"ready"' in readyz
        evil = _at_cap(server, b"GET /healthz HTTP/1.1\r\nHost: evil.example\r\n\r\n")
        assert evil.startswith(b"HTTP/1.1 403 ")
        for thread in slow:
            thread.join(60)
        two = _raw(server, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 2)
        assert two.count(b"HTTP/1.1 200 ") == 2, two


def _at_cap(server: HttpServer, probe: bytes) -> bytes:
    """A probe's answer from a server whose connections are all busy: answered when its
    head came with the connection; the server may accept it first, and then refuses it
    503 as any newcomer, so a prober tries again (bounded)."""
    for _ in range(50):
        answer = _raw(server, probe)
        if not answer.startswith(b"HTTP/1.1 503 "):
            return answer
    raise AssertionError(f"50 probes refused: {answer!r}")


def test_json_logs_are_json_on_every_line_the_address_too(tmp_path: Path) -> None:
    """Under --log-format json the line naming the HTTP address was plain text, the one
    line a JSON log reader could not parse; it is an object like the others, and the
    launcher's pattern (tests/http_server.py) still finds the address in its event."""
    (tmp_path / "ws").mkdir()
    with HttpServer(tmp_path / "ws", "--log-format", "json") as server:
        assert httpx.get(server.base + "/healthz").status_code == 200
    lines = [json.loads(line) for line in server.stderr.splitlines() if line.strip()]
    said = [e for e in lines if e["logger"] == "chorus.address"]
    assert len(said) == 1 and said[0]["level"] == "info"
    assert said[0]["event"] == (f"serving HTTP on {server.base}/mcp (MCP) and "
                                f"{server.base}/rpc (JSON-RPC)")
