"""--http as a raw client sees it (docs/protocol.md, HTTP): the token, the Origin check and
the body limit refuse before anything runs; sessions are kept apart; /rpc takes batches;
DELETE ends a session; a watch streams on the session's GET stream; stdio is served beside
HTTP when stdin is a pipe; SIGTERM finishes in-flight work and exits 0."""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from http_server import HttpServer, initialize
from rpc_client import REPO, wait_gone
from e2e_support import E2EServer, wait_for

WRITE = {"jsonrpc": "2.0", "id": 1, "method": "file.write",
         "params": {"path": "made.txt", "content": "x"}}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    return root


def test_without_the_token_or_with_a_wrong_one_is_401_and_nothing_runs(
        ws: Path, tmp_path: Path) -> None:
    with HttpServer(ws, "--workers", "1", token="right-token", tmp=tmp_path) as server:
        for auth in (None, "Bearer wrong-token", "Bearer right-tokenX", "right-token",
                     "Basic cmlnaHQtdG9rZW4="):
            headers = {"content-type": "application/json"}
            if auth is not None:
                headers["authorization"] = auth
            for path in ("/rpc", "/mcp"):
                reply = httpx.post(server.base + path, json=WRITE, headers=headers)
                assert reply.status_code == 401, (auth, path, reply.text)
                assert reply.headers["www-authenticate"].startswith("Bearer")
        assert not (ws / "made.txt").exists()
        assert server.post("/rpc", WRITE).json()["result"]["created"] is True


def test_off_loopback_needs_a_token_file(ws: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "chorus_tools", "--workspace", str(ws),
                           "--http", "0.0.0.0:0"], capture_output=True, text=True,
                          cwd=REPO, timeout=30, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert "--http-token-file" in done.stderr and done.stderr.count("\n") == 1


def test_a_foreign_origin_or_host_is_403_and_loopback_origins_are_served(ws: Path) -> None:
    with HttpServer(ws, "--workers", "1") as server:
        port = urlsplit(server.base).port
        for origin in ("http://evil.example", f"http://evil.example:{port}", "null",
                       "file://", "http://127.0.0.1.evil.example"):
            reply = server.post("/rpc", WRITE, origin=origin)
            assert reply.status_code == 403, origin
            assert server.post("/mcp", WRITE, origin=origin).status_code == 403
        rebound = server.post("/rpc", WRITE, host=f"evil.example:{port}")
        assert rebound.status_code == 403  # a page of evil.example resolving to us
        assert not (ws / "made.txt").exists()
        for origin in (f"http://127.0.0.1:{port}", "http://localhost:6274", "http://[::1]"):
            reply = server.post("/rpc", {**WRITE, "method": "file.info",
                                         "params": {"path": "a.txt"}}, origin=origin)
            assert reply.status_code == 200 and reply.json()["result"]["size"] == 6


def _raw(server: HttpServer, head: bytes, body: bytes = b"") -> tuple[socket.socket, bytes]:
    url = urlsplit(server.base)
    sock = socket.create_connection((url.hostname, url.port), timeout=15)
    sock.sendall(head + body)
    return sock, sock.recv(65536)


def test_an_oversized_body_is_413_before_it_is_sent(ws: Path) -> None:
    """A declared length over --max-message-bytes is refused from the head alone: the
    client has sent none of its 1 GiB body when the 413 comes."""
    with HttpServer(ws, "--workers", "1", "--max-message-bytes", "4096") as server:
        sock, answer = _raw(server, b"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                            b"Content-Type: application/json\r\n"
                            b"Content-Length: 1073741824\r\n\r\n", b"[" * 100)
        assert answer.startswith(b"HTTP/1.1 413 "), answer
        sock.close()


def test_an_oversized_chunked_body_is_413_at_the_limit(ws: Path) -> None:
    """A chunked body is counted as it arrives: past the limit the answer is 413 while the
    client is still sending (the server held at most the limit)."""
    with HttpServer(ws, "--workers", "1", "--max-message-bytes", "4096") as server:
        url = urlsplit(server.base)
        sock = socket.create_connection((url.hostname, url.port), timeout=15)
        sock.sendall(b"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"%x\r\n%s\r\n" % (1024, b" " * 1024)
        sent = 0
        sock.settimeout(0.05)
        answer = b""
        while sent < 64 and not answer:
            sock.sendall(chunk)
            sent += 1
            try:
                answer = sock.recv(65536)
            except TimeoutError:
                pass
        sock.settimeout(15)
        answer = answer or sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 413 "), answer
        assert sent < 64
        sock.close()
        under = server.post("/rpc", {**WRITE, "method": "file.info",
                                     "params": {"path": "a.txt"}})
        assert under.status_code == 200


def test_rpc_batches_and_notifications(ws: Path) -> None:
    with HttpServer(ws, "--workers", "2") as server:
        batch = [{"jsonrpc": "2.0", "id": 1, "method": "file.read",
                  "params": {"path": "a.txt"}},
                 {"jsonrpc": "2.0", "method": "file.info", "params": {"path": "a.txt"}},
                 {"jsonrpc": "2.0", "id": "two", "method": "file.info",
                  "params": {"path": "a.txt"}}]
        reply = server.post("/rpc", batch)
        assert reply.status_code == 200
        assert reply.headers["content-type"] == "application/json"
        answers = {a["id"]: a for a in reply.json()}
        assert set(answers) == {1, "two"}
        assert answers[1]["result"]["content"] == "     1\talpha"
        only_notes = server.post("/rpc", [batch[1], batch[1]])
        assert only_notes.status_code == 204 and only_notes.content == b""
        three = server.post("/rpc", [1, 2, 3]).json()
        assert [a["error"]["code"] for a in three] == [-32600] * 3
        empty = server.post("/rpc", []).json()
        assert empty["error"]["code"] == -32600
        bad = httpx.post(server.rpc, content=b"{not json", headers=server.headers())
        assert bad.json()["error"]["code"] == -32700


def test_sessions_are_kept_apart(ws: Path) -> None:
    """Two MCP sessions of the claude set: each has its own initialize, but the reads are
    the workspace's (what one read, the other may edit); an ended session is 404; DELETE
    of an unknown one 404."""
    with HttpServer(ws, "--workers", "2", "--tools", "claude") as server:
        first, second = initialize(server), initialize(server, "2025-06-18")
        assert first != second

        def call(session: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            reply = server.post("/mcp", {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                                         "params": {"name": name, "arguments": arguments}},
                                mcp_session_id=session)
            assert reply.status_code == 200, reply.text
            return reply.json()["result"]

        edit = {"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}
        refused = call(second, "Edit", edit)
        assert refused["isError"] and refused["structuredContent"]["error"] == "not_read"
        assert call(first, "Read", {"file_path": "a.txt"})["isError"] is False
        assert call(second, "Edit", edit)["isError"] is False
        again = server.post("/mcp", {"jsonrpc": "2.0", "id": 9, "method": "initialize",
                                     "params": {"protocolVersion": "2025-11-25",
                                                "capabilities": {}}},
                            mcp_session_id=first).json()
        assert again["error"]["code"] == -32600
        ended = httpx.delete(server.mcp, headers=server.headers(mcp_session_id=first))
        assert ended.status_code == 200
        gone = server.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"},
                           mcp_session_id=first)
        assert gone.status_code == 404
        assert httpx.delete(server.mcp, headers=server.headers(
            mcp_session_id=first)).status_code == 404
        assert call(second, "Read", {"file_path": "a.txt"})["isError"] is False
    assert (ws / "a.txt").read_text() == "beta\n"


def test_an_unsupported_protocol_version_header_is_400(ws: Path) -> None:
    with HttpServer(ws, "--workers", "1") as server:
        reply = server.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"},
                            mcp_protocol_version="1900-01-01")
        assert reply.status_code == 400 and "2025-11-25" in reply.json()["error"]["message"]


def _events(server: HttpServer, session: str, into: queue.Queue) -> None:
    with httpx.stream("GET", server.mcp, headers=server.headers(mcp_session_id=session),
                      timeout=60) as stream:
        into.put(stream.status_code)
        for line in stream.iter_lines():
            if line.startswith("data: "):
                into.put(json.loads(line[6:]))


def test_a_watch_streams_on_the_sessions_get_stream(ws: Path) -> None:
    with HttpServer(ws, "--workers", "1") as server:
        session = initialize(server)
        events: queue.Queue = queue.Queue()
        threading.Thread(target=_events, args=(server, session, events), daemon=True).start()
        assert events.get(timeout=15) == 200
        second = httpx.get(server.mcp, headers=server.headers(mcp_session_id=session))
        assert second.status_code == 409
        made = server.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "workspace.watch",
                                    "params": {"path": "."}}, mcp_session_id=session)
        watch_id = made.json()["result"]["watch_id"]
        other = initialize(server)
        stolen = server.post("/mcp", {"jsonrpc": "2.0", "id": 2, "method": "workspace.unwatch",
                                      "params": {"watch_id": watch_id}}, mcp_session_id=other)
        assert stolen.json()["error"]["data"]["error"] == "invalid_params"
        (ws / "new.txt").write_text("new\n")
        note = events.get(timeout=15)
        assert note["method"] == "workspace/didChange" and note["params"]["watch_id"] == watch_id
        assert any(c["path"] == "new.txt" for c in note["params"]["changes"])


def test_stdio_is_served_beside_http_when_stdin_is_a_pipe(ws: Path) -> None:
    server = E2EServer(ws, "--workers", "1", "--http", "127.0.0.1:0")
    try:
        assert server.result("file.info", {"path": "a.txt"})["size"] == 6
        deadline = time.monotonic() + 15
        while b"serving HTTP on" not in server.stderr and time.monotonic() < deadline:
            time.sleep(0.05)
        base = server.stderr.split(b"serving HTTP on ")[1].split(b"/mcp")[0].decode()
        reply = httpx.post(base + "/rpc", json={**WRITE, "method": "file.info",
                                                "params": {"path": "a.txt"}})
        assert reply.json()["result"]["size"] == 6
        server.proc.stdin.close()  # the end of stdin stops the server, as without --http
        assert server.proc.wait(30) == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()


def _cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime + stime, in clock ticks
    return total / os.sysconf("SC_CLK_TCK")


@pytest.mark.long  # seconds of the default suite; CI runs it in -m long
def test_sigterm_finishes_in_flight_requests_and_leaves_no_process(ws: Path) -> None:
    """A search that runs for seconds (a catastrophic pattern, python engine) is in flight
    (its worker burns CPU) when SIGTERM comes: it is answered, then the server exits 0
    and no worker survives."""
    (ws / "slow.txt").write_text("a" * 40 + "!\n")
    with HttpServer(ws, "--workers", "1", "--search-engine", "python",
                    "--search-file-timeout", "3") as server:
        children = [int(p) for p in Path(f"/proc/{server.proc.pid}/task/{server.proc.pid}"
                                         "/children").read_text().split()]
        body = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "file.search",
                           "params": {"pattern": r"^(\w|\w\w)+$", "path": "slow.txt"}}).encode()
        url = urlsplit(server.base)
        sock = socket.create_connection((url.hostname, url.port), timeout=30)
        before = _cpu_seconds(children)
        sock.sendall(b"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        wait_for(lambda: _cpu_seconds(children) > before + 0.3)
        assert server.stop() == 0
        answer = sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 200 "), answer
        assert b'"id":5' in answer
        wait_gone(children)


def _tcp_sockets(pid: int) -> list[str]:
    """The TCP sockets `pid` holds (asyncio's own socketpair, which every child of the
    event loop's process inherits, is not TCP)."""
    tcp = {line.split()[9] for name in ("tcp", "tcp6")
           for line in Path(f"/proc/{pid}/net/{name}").read_text().splitlines()[1:]}
    found = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:[") and target[8:-1] in tcp:
            found.append(target)
    return found


def _children(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def test_no_child_process_holds_a_socket_of_the_server(ws: Path) -> None:
    """The listening socket and open connections stay the dispatcher's: a worker forked
    at start, a worker respawned after a SIGKILL and the watcher started by a watch while
    a connection is open hold none (a copy would keep a closed connection open)."""
    with HttpServer(ws, "--workers", "1") as server:
        with httpx.Client(headers=server.headers()) as client:  # one keep-alive connection
            assert client.post(server.rpc, json={**WRITE, "method": "file.info", "params": {
                "path": "a.txt"}}).status_code == 200
            first = _children(server.proc.pid)
            os.kill(first[0], 9)
            wait_for(lambda: bool(set(_children(server.proc.pid)) - set(first)))
            made = client.post(server.rpc, json={**WRITE, "method": "workspace.watch",
                                                 "params": {"path": "."}})
            assert "watch_id" in made.json()["result"]
            children = _children(server.proc.pid)
            assert len(children) >= 2  # the respawned worker and the watcher
            assert len(_tcp_sockets(server.proc.pid)) >= 2  # listening, and the client's
            for child in children:
                assert _tcp_sockets(child) == [], (child, _tcp_sockets(child))


def _free_privileged_port() -> int:
    for port in range(1023, 900, -1):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    pytest.skip("no free port below 1024")


def test_a_port_below_1024_is_bound_before_user_drops_root(ws: Path) -> None:
    """The socket is bound at start, with the records, before --user: a server that
    serves as nobody still listens on a privileged port."""
    if os.geteuid() != 0:
        pytest.skip("binding a port below 1024 needs root; this run is not root")
    port = _free_privileged_port()
    os.chmod(ws, 0o777)
    with HttpServer(ws, "--workers", "1", "--user", "nobody",
                    address=f"127.0.0.1:{port}") as server:
        assert server.base == f"http://127.0.0.1:{port}"
        reply = server.post("/rpc", {**WRITE, "params": {"path": "by-nobody.txt",
                                                          "content": "x"}})
        assert reply.json()["result"]["created"] is True
    assert (ws / "by-nobody.txt").stat().st_uid != 0


def test_server_discover_and_a_stateless_call_need_no_initialize_over_http(ws: Path) -> None:
    """MCP 2026-07-28 over HTTP as over stdio: a client that never initializes discovers the
    server, then calls a tool with its version and capabilities in `_meta` and the headers
    that mirror the body (which the older versions' session rules must not refuse)."""
    meta = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}}}
    with HttpServer(ws, "--workers", "1") as server:
        found = server.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                                     "params": meta}, mcp_protocol_version="2026-07-28",
                            mcp_method="server/discover")
        assert found.status_code == 200, found.text
        assert found.json()["result"]["supportedVersions"][0] == "2026-07-28"
        call = server.post("/mcp", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            **meta, "name": "file_read", "arguments": {"path": "a.txt"}}},
            mcp_protocol_version="2026-07-28", mcp_method="tools/call", mcp_name="file_read")
        assert call.status_code == 200, call.text
        result = call.json()["result"]
        assert result["resultType"] == "complete" and result["isError"] is False
        assert result["structuredContent"]["content"] == "     1\talpha"
        assert "mcp-session-id" not in call.headers
