"""A load client for our server over --http: the same measures as loadclient.StdioServer
(latency one at a time, throughput with a fixed number in flight) and the same checks
(every id once, every answer a success), each request a POST of one JSON-RPC message.

In flight means open connections with one request each (HTTP/1.1 keep-alive, as an HTTP
client pool does). Single-threaded, one selector, for the reason
StdioServer is: the client shares the machine's cores with the server it measures."""

from __future__ import annotations

import re
import selectors
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence, Self

import orjson

from benchmarks.loadclient import (Call, Check, Latency, ProtocolError, Throughput,
                                   is_success, one_at_a_time, wait_or_kill)

SERVING = re.compile(rb"serving HTTP on http://([^/\s]+):(\d+)/mcp")


class _Connection:
    """One keep-alive connection. Requests are written from a template and replies cut by
    their Content-Length (the server always sends one for JSON): the least client work,
    as StdioServer does; the server under test parses with h11."""

    def __init__(self, address: tuple[str, int], path: str) -> None:
        self.sock = socket.create_connection(address)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._head = (b"POST %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json"
                      b"\r\nAccept: application/json, text/event-stream\r\n"
                      b"Content-Length: " % (path.encode(), address[0].encode(), address[1]))
        self._buffer = b""

    def send(self, message: dict[str, Any]) -> None:
        body = orjson.dumps(message)
        self.sock.sendall(self._head + b"%d\r\n\r\n" % len(body) + body)

    def receive(self) -> list[dict[str, Any]]:
        """The replies the socket completes."""
        data = self.sock.recv(1 << 20)
        if not data:
            raise ProtocolError("the server closed a connection")
        self._buffer += data
        replies = []
        while (end := self._buffer.find(b"\r\n\r\n")) >= 0:
            head = self._buffer[:end].lower()
            if not head.startswith(b"http/1.1 200 "):
                raise ProtocolError(f"HTTP reply {head[:40]!r}")
            length = int(head.split(b"content-length: ")[1].split(b"\r\n")[0])
            if len(self._buffer) < end + 4 + length:
                break
            replies.append(orjson.loads(self._buffer[end + 4:end + 4 + length]))
            self._buffer = self._buffer[end + 4 + length:]
        return replies


class HttpServer:
    """Our server started with --http 127.0.0.1:0 and stdin from /dev/null (HTTP only),
    spoken to at `path` (/rpc, or /mcp without a session)."""

    def __init__(self, argv: Sequence[str], cwd: Path | None = None,
                 stderr: Path | None = None, path: str = "/rpc") -> None:
        self.proc = subprocess.Popen([*argv, "--http", "127.0.0.1:0"], cwd=cwd,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        self._log = open(stderr, "ab") if stderr else None
        self._path = path
        self.address = self._address()
        threading.Thread(target=self._drain, daemon=True).start()
        self._pool: list[_Connection] = []
        self._next_id = 0

    @classmethod
    def attach(cls, address: tuple[str, int], path: str = "/rpc") -> HttpServer:
        """A client of a server already running at `address` (started by another
        process): its load methods, no process of its own."""
        client = cls.__new__(cls)
        client.address, client._path, client._pool, client._next_id = address, path, [], 0
        client._log = None
        return client

    def _address(self) -> tuple[str, int]:
        assert self.proc.stderr is not None  # piped above
        for line in self.proc.stderr:
            if self._log is not None:
                self._log.write(line)
            if match := SERVING.search(line):
                return match.group(1).decode(), int(match.group(2))
        raise ProtocolError("the server printed no HTTP address")

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            if self._log is not None:
                self._log.write(line)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _connections(self, count: int) -> list[_Connection]:
        while len(self._pool) < count:
            self._pool.append(_Connection(self.address, self._path))
        return self._pool[:count]

    def request(self, method: str, params: dict[str, Any], check: Check = is_success) -> dict:
        self._next_id += 1
        conn = self._connections(1)[0]
        conn.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        while not (replies := conn.receive()):
            pass
        problem = check(replies[0])
        if replies[0].get("id") != self._next_id or problem:
            raise ProtocolError(f"{method}: {problem or replies[0].get('id')}")
        return replies[0]

    def latency(self, calls: Callable[[int], Call], count: int,
                check: Check = is_success) -> Latency:
        return one_at_a_time(self, calls, count, check)

    def throughput(self, calls: Callable[[int], Call], count: int, in_flight: int = 64,
                   check: Check = is_success) -> Throughput:
        """`count` requests, one in flight on each of `in_flight` connections."""
        first = self._next_id + 1
        self._next_id += count
        sent, seen = 0, set()
        selector = selectors.DefaultSelector()

        def send(conn: _Connection) -> None:
            nonlocal sent
            method, params = calls(sent)
            conn.send({"jsonrpc": "2.0", "id": first + sent, "method": method,
                       "params": params})
            sent += 1

        start = time.perf_counter()
        for conn in self._connections(min(in_flight, count)):
            selector.register(conn.sock, selectors.EVENT_READ, conn)
            send(conn)
        while len(seen) < count:
            for key, _ in selector.select(timeout=120):
                conn = key.data
                for reply in conn.receive():
                    rid = reply.get("id")
                    if rid in seen or not isinstance(rid, int) or not first <= rid < first + sent:
                        raise ProtocolError(f"unexpected or repeated id {rid!r}")
                    if problem := check(reply):
                        raise ProtocolError(f"id {rid}: {problem}")
                    seen.add(rid)
                    if sent < count:
                        send(conn)
        elapsed = time.perf_counter() - start
        selector.close()
        return Throughput(count / elapsed, count, in_flight, elapsed)

    def close(self, timeout: float = 15.0) -> int | None:
        """SIGTERM, as a service manager would; kill only if it does not exit."""
        for conn in self._pool:
            conn.sock.close()
        self.proc.terminate()
        code = wait_or_kill(self.proc, timeout)
        if self._log is not None:
            self._log.close()
        return code

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
