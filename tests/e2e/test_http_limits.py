"""The HTTP transport's bounds, attacked for real with raw sockets (docs/protocol.md, HTTP:
limits): a head's size (431) and time (408), idle connections, the number of connections,
and the descriptors kept for the workspace's own work under a real RLIMIT_NOFILE. Each
test is named after the fault it guards against; times are measured against generous
bounds, descriptors counted in /proc."""

from __future__ import annotations

import json
import os
import resource
import selectors
import socket
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from chorus_tools.rpc.wire.http_session import KEEP_ALIVE
from http_server import HttpEndpoint, HttpServer, beside, initialize
from rpc_client import RpcServer

SLACK = 15.0  # seconds allowed beyond a timeout, on a loaded machine
FILE_INFO = {"jsonrpc": "2.0", "id": 1, "method": "file.info", "params": {"path": "a.txt"}}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    return root


@pytest.fixture(autouse=True)
def enough_descriptors() -> None:
    """This process opens a few hundred sockets: its own soft limit must allow them."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < 2048:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(2048, hard), hard))


def _connect(http: HttpEndpoint) -> socket.socket:
    parts = urlsplit(http.base)
    return socket.create_connection((parts.hostname, parts.port), timeout=10)


def _served(http: HttpEndpoint) -> bool:
    reply = httpx.post(http.rpc, json=FILE_INFO, headers=http.headers(), timeout=30)
    return reply.status_code == 200 and reply.json()["result"]["size"] == 6


def _watch_until_closed(socks: dict[socket.socket, str], trickle: list[socket.socket],
                        within: float) -> tuple[dict[str, float], dict[str, bytes]]:
    """Read every socket until the server closes it (or `within` seconds pass), sending
    one more byte a second on each of `trickle`: when each closed, and what it got."""
    start = time.monotonic()
    closed: dict[str, float] = {}
    got = {name: b"" for name in socks.values()}
    live = set(socks)
    next_byte = start
    while live and time.monotonic() - start < within:
        if time.monotonic() >= next_byte:
            for sock in [s for s in trickle if s in live]:
                try:
                    sock.send(b"a")
                except OSError:
                    pass  # the server closed it: the read below says so
            next_byte += 1.0
        ready, _ = _ready(list(live), [], 0.2)
        for sock in ready:
            try:
                data = sock.recv(65536)
            except ConnectionResetError:
                data = b""
            if data:
                got[socks[sock]] += data
            else:
                closed[socks[sock]] = time.monotonic() - start
                live.discard(sock)
    for sock in socks:
        sock.close()
    return closed, got


@pytest.mark.long  # seconds of the default suite; CI runs it under -m long
def test_slowloris_and_silent_sockets_were_still_open_after_60_s(ws: Path) -> None:
    """20 sockets sending a head one byte a second and one silent socket are closed once
    --http-head-timeout has passed (the slow ones answered 408), and a kept-alive socket
    idle past --http-idle-timeout is closed too; the server serves on meanwhile."""
    with HttpServer(ws, "--workers", "1", "--http-head-timeout", "2",
                    "--http-idle-timeout", "3") as server:
        slow = [_connect(server) for _ in range(20)]
        for sock in slow:
            sock.sendall(b"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        silent = _connect(server)
        kept = _connect(server)
        body = json.dumps(FILE_INFO).encode()
        kept.sendall(b"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                     b"application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        names = {sock: f"slow{i}" for i, sock in enumerate(slow)}
        names.update({silent: "silent", kept: "kept"})
        closed, got = _watch_until_closed(names, slow, within=2 + 3 + SLACK * 2)
        assert _served(server)
    assert set(closed) == set(names.values()), f"still open: {set(names.values()) - set(closed)}"
    for i in range(20):
        assert closed[f"slow{i}"] < 2 + SLACK, closed
        assert got[f"slow{i}"].startswith(b"HTTP/1.1 408 "), got[f"slow{i}"][:80]
    assert closed["silent"] < 2 + SLACK and got["silent"] == b""
    assert got["kept"].startswith(b"HTTP/1.1 200 ")  # answered, then idle until closed
    assert closed["kept"] < 3 + SLACK


def _status_after_sending(http: HttpEndpoint, data: bytes) -> bytes:
    """Send `data` as far as the server takes it; the status line it answers."""
    sock = _connect(http)
    sock.setblocking(False)
    sent, answer, deadline = 0, b"", time.monotonic() + 30
    while time.monotonic() < deadline and b"\r\n" not in answer:
        readable, writable = _ready([sock], [sock] if sent < len(data) else [], 0.5)
        try:
            if writable:
                sent += sock.send(data[sent:sent + 65536])
            if readable:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                answer += chunk
        except (BrokenPipeError, ConnectionResetError):
            break
    sock.close()
    return answer.split(b"\r\n", 1)[0]


@pytest.mark.parametrize("size", [1_000_000, 100_000])
def test_a_1mb_request_head_closes_the_connection_without_a_status_line(
        ws: Path, size: int) -> None:
    """A head over --http-max-head-bytes (default 64 KiB) is answered 431, whether it
    arrives over many reads (1 MB) or, complete, in one (100 kB)."""
    head = (b"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * size +
            b"\r\nContent-Length: 2\r\n\r\n{}")
    with HttpServer(ws, "--workers", "1") as server:
        assert _status_after_sending(server, head).startswith(b"HTTP/1.1 431 ")
        assert _served(server)


def _descriptors(pid: int) -> list[str]:
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            found.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            pass
    return found


def _limit_descriptors() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


@pytest.mark.long  # seconds of the default suite; CI runs it under -m long
def test_300_idle_sockets_under_256_descriptors_lock_out_new_requests_and_stdio_writes(
        ws: Path) -> None:
    """The server runs under a real RLIMIT_NOFILE of 256 with stdio and HTTP; 300 idle
    unauthenticated sockets connect and stay (a head timeout far away, so only the
    connection bound can help): a new HTTP request is still served, a stdio client's
    file.write still succeeds, the server keeps descriptors free, and stderr holds at
    most a line about it, no traceback."""
    with RpcServer(ws, "--workers", "2", "--allow-root", "--http", "127.0.0.1:0",
                   "--http-head-timeout", "300", "--http-idle-timeout", "300",
                   preexec_fn=_limit_descriptors) as srv:
        http = beside(srv)
        idle = [_connect(http) for _ in range(300)]
        time.sleep(1.0)  # the server accepts them
        for round_ in range(3):
            assert _served(http)
            written = srv.result("file.write", {"path": f"w{round_}.txt", "content": "ok"})
            assert written["created"] is True
            idle += [_connect(http) for _ in range(100)]  # more keep coming
            time.sleep(0.5)
        held = _descriptors(srv.proc.pid)
        sockets = [d for d in held if d.startswith("socket:")]
        assert len(held) <= 256 - 48, (len(held), len(sockets))  # the reserve stays free
        for sock in idle:
            sock.close()
        stderr = srv.stderr.decode(errors="replace")
    assert "Traceback" not in stderr and "Too many open files" not in stderr, stderr[-3000:]
    assert len(stderr.splitlines()) <= 4, stderr[-3000:]
    assert all((ws / f"w{i}.txt").read_text() == "ok" for i in range(3))


def _stream(http: HttpEndpoint, session: str, opened: threading.Event,
            stop: threading.Event) -> None:
    with httpx.stream("GET", http.mcp, headers=http.headers(mcp_session_id=session),
                      timeout=60) as stream:
        assert stream.status_code == 200
        opened.set()
        stop.wait(60)


def test_at_the_connection_bound_with_every_connection_busy_a_newcomer_is_503(
        ws: Path) -> None:
    """--http-max-connections 3, all three holding a session's event stream (a request in
    progress, never closed for a newcomer): new connections are answered 503, logged once;
    once a stream ends, requests are served again: the server sees the client close (not
    only when a keep-alive write fails, which held the slot 30 s: the regression)."""
    with HttpServer(ws, "--workers", "1", "--http-max-connections", "3") as server:
        stop = threading.Event()
        streams = []
        for _ in range(3):
            opened = threading.Event()
            thread = threading.Thread(target=_stream, args=(
                server, initialize(server), opened, stop), daemon=True)
            thread.start()
            assert opened.wait(30)
            streams.append(thread)
        refused = [httpx.post(server.rpc, json=FILE_INFO, headers=server.headers(),
                              timeout=30) for _ in range(5)]
        assert [r.status_code for r in refused] == [503] * 5
        assert refused[0].headers["retry-after"] == "1"
        stop.set()
        for thread in streams:
            thread.join(30)
        deadline = time.monotonic() + KEEP_ALIVE / 2  # before any keep-alive is written
        while not _served(server) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _served(server)
    assert server.stderr.count(b"refusing new ones with 503") == 1, server.stderr


def _ready(read: list[socket.socket], write: list[socket.socket],
           timeout: float) -> tuple[list[socket.socket], list[socket.socket]]:
    """select(2)'s answer from the selectors module (epoll): select() refuses a descriptor
    numbered past 1023, which a pytest worker may hold late in a run."""
    with selectors.DefaultSelector() as selector:
        for sock in {*read, *write}:
            selector.register(sock, (selectors.EVENT_READ if sock in read else 0)
                              | (selectors.EVENT_WRITE if sock in write else 0), sock)
        events = selector.select(timeout)
    return ([key.data for key, mask in events if mask & selectors.EVENT_READ],
            [key.data for key, mask in events if mask & selectors.EVENT_WRITE])
