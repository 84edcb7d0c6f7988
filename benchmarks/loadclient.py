"""A load client for newline-delimited JSON-RPC servers on stdio (ours, the floor, MCP).

It measures what an orchestrator feels: sequential latency (one request at a time, p50 and
p99) and pipelined throughput (a fixed number of requests in flight), and it checks the
protocol while doing so: every id comes back exactly once, and every answer is a success.
"""

from __future__ import annotations

import os
import select
import statistics
import subprocess
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence, Self

import orjson

Call = tuple[str, dict[str, Any]]
Check = Callable[[dict[str, Any]], str | None]  # a response -> None, or what is wrong


class ProtocolError(RuntimeError):
    """The server broke the contract the benchmark relies on (lost, doubled or failed ids)."""


def is_success(response: dict[str, Any]) -> str | None:
    if "result" in response:
        return None
    return f"error response: {orjson.dumps(response.get('error'))[:300].decode()}"


@dataclass
class Latency:
    p50: float
    p99: float
    samples: int


@dataclass
class Throughput:
    per_second: float
    requests: int
    in_flight: int
    seconds: float


class Measured(Protocol):
    """What a scenario drives: StdioServer here, httpload.HttpServer over --http."""

    @property
    def pid(self) -> int: ...

    def request(self, method: str, params: dict[str, Any],
                check: Check = ...) -> dict: ...

    def latency(self, calls: Callable[[int], Call], count: int,
                check: Check = ...) -> Latency: ...

    def throughput(self, calls: Callable[[int], Call], count: int, in_flight: int = ...,
                   check: Check = ...) -> Throughput: ...


def one_at_a_time(server: Measured, calls: Callable[[int], Call], count: int,
                  check: Check) -> Latency:
    """`count` requests one at a time, over stdio or HTTP alike; calls(i) gives the i-th
    (method, params)."""
    samples = []
    for i in range(count):
        method, params = calls(i)
        start = time.perf_counter()
        server.request(method, params, check)
        samples.append(time.perf_counter() - start)
    return Latency(statistics.median(samples), percentile(samples, 0.99), count)


def wait_or_kill(proc: subprocess.Popen[bytes], timeout: float) -> int:
    """The server's exit code once it has stopped by itself, or after SIGKILL past `timeout`."""
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _line(message: dict[str, Any]) -> list[bytes]:
    """A request's line as pieces to write one after the other. A base64 `data` param
    given as bytes (ASCII, so a valid JSON string as it is) goes in as its own piece: an
    orchestrator sending an 11 MB part need not copy it into a str, through the JSON
    encoder and into the line (2.6 s of the client's CPU for 1 GiB in 8 MiB parts, 0.6 s
    written so; docs/benchmarks.md, upload_parts)."""
    params = message.get("params")
    if not isinstance(params, dict) or not isinstance(params.get("data"), bytes):
        return [orjson.dumps(message) + b"\n"]
    data = params["data"]
    head = orjson.dumps({**message, "params": {**params, "data": ""}})
    cut = head.rindex(b'"data":""') + len(b'"data":"')
    return [head[:cut], data, head[cut:] + b"\n"]


class StdioServer:
    """A server process spoken to over stdin/stdout, one JSON message per line.

    Single-threaded on purpose: the client shares the machine's cores with the server it
    measures, so it does the least work it can per message (one write for a burst of
    requests, one read for whatever answers are ready)."""

    def __init__(self, argv: Sequence[str], cwd: Path | None = None,
                 stderr: Path | None = None, timeout: float = 120.0,
                 env: dict[str, str] | None = None) -> None:
        self.timeout = timeout
        self._err = open(stderr, "ab") if stderr else None
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(list(argv), cwd=cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, bufsize=0, env=env,
                                     stderr=subprocess.DEVNULL if self._err is None else self._err)
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None  # both piped above
        self._stdin = stdin
        self._in = stdin.fileno()
        self._out = stdout.fileno()
        self._partial = b""
        self._inbox: deque[dict[str, Any]] = deque()
        self._next_id = 0

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._in, view):]

    def _write_pieces(self, pieces: list[bytes]) -> None:
        """The pieces in order, in as few writes as the pipe takes (writev)."""
        views = [memoryview(p) for p in pieces if p]
        while views:
            done = os.writev(self._in, views)
            while views and done >= len(views[0]):
                done -= len(views.pop(0))
            if done:
                views[0] = views[0][done:]

    def send(self, message: dict[str, Any]) -> None:
        self._write(orjson.dumps(message) + b"\n")

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})})

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _take(self, line: bytes) -> None:
        if not line.strip():
            return
        message = orjson.loads(line)
        for item in message if isinstance(message, list) else [message]:
            if isinstance(item, dict) and "method" in item:
                if "id" in item:  # a server-to-client request we do not serve
                    self.send({"jsonrpc": "2.0", "id": item["id"],
                               "error": {"code": -32601, "message": "not supported"}})
                continue
            self._inbox.append(item)

    def _receive(self) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while not self._inbox:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self._out], [], [], remaining)[0]:
                raise ProtocolError(f"no response within {self.timeout} s")
            chunk = os.read(self._out, 1 << 20)
            if not chunk:
                raise ProtocolError(f"server exited (code {self.proc.poll()}) "
                                    "before answering")
            *lines, self._partial = (self._partial + chunk).split(b"\n")
            for line in lines:
                self._take(line)
        return self._inbox.popleft()

    def request(self, method: str, params: dict[str, Any], check: Check = is_success) -> dict:
        """One request, waiting for its answer; raises ProtocolError if it is not a success."""
        rid = self._new_id()
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        response = self._receive()
        if response.get("id") != rid:
            raise ProtocolError(f"expected id {rid}, got {response.get('id')!r}")
        problem = check(response)
        if problem:
            raise ProtocolError(f"{method}: {problem}")
        return response

    def latency(self, calls: Callable[[int], Call], count: int,
                check: Check = is_success) -> Latency:
        return one_at_a_time(self, calls, count, check)

    def throughput(self, calls: Callable[[int], Call], count: int, in_flight: int = 64,
                   check: Check = is_success) -> Throughput:
        """`count` requests with up to `in_flight` outstanding (topped up after every read);
        every id must come back exactly once, each a success."""
        first = self._next_id + 1
        self._next_id += count
        sent = 0
        seen: set[int] = set()
        start = time.perf_counter()
        while len(seen) < count:
            burst = min(count - sent, in_flight - (sent - len(seen)))
            if burst > 0:
                self._write_pieces([piece for k, (method, params) in enumerate(
                    calls(sent + k) for k in range(burst)) for piece in _line(
                        {"jsonrpc": "2.0", "id": first + sent + k, "method": method,
                         "params": params})])
                sent += burst
            response = self._receive()
            rid = response.get("id")
            if not isinstance(rid, int) or not first <= rid < first + sent:
                raise ProtocolError(f"response with an id never sent: {rid!r}")
            if rid in seen:
                raise ProtocolError(f"id {rid} answered twice")
            problem = check(response)
            if problem:
                raise ProtocolError(f"id {rid}: {problem}")
            seen.add(rid)
        elapsed = time.perf_counter() - start
        return Throughput(count / elapsed, count, in_flight, elapsed)

    def close(self, timeout: float = 15.0) -> int | None:
        """End of stdin, as an orchestrator would; kill only if it does not exit."""
        try:
            self._stdin.close()
        except OSError:
            pass
        code = wait_or_kill(self.proc, timeout)
        if self._err is not None:
            self._err.close()
        return code

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class McpSession(StdioServer):
    """The MCP face of a stdio server: the initialize handshake, then tools/call."""

    PROTOCOL_VERSION = "2025-06-18"

    def initialize(self) -> dict[str, Any]:
        response = self.request("initialize", {
            "protocolVersion": self.PROTOCOL_VERSION, "capabilities": {},
            "clientInfo": {"name": "chorus-tools-benchmarks", "version": "1"}})
        self.notify("notifications/initialized")
        return response["result"]

    @staticmethod
    def tool(name: str, arguments: dict[str, Any]) -> Call:
        return "tools/call", {"name": name, "arguments": arguments}

    @staticmethod
    def tool_ok(response: dict[str, Any]) -> str | None:
        """MCP reports tool failures inside a successful result, with isError."""
        problem = is_success(response)
        if problem is None and response["result"].get("isError"):
            content = response["result"].get("content") or [{}]
            return f"tool error: {str(content[0].get('text'))[:300]}"
        return problem

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.request(*self.tool(name, arguments), check=self.tool_ok)["result"]
