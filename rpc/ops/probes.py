"""The operator's HTTP routes (docs/protocol.md, Running many): `/healthz`, `/readyz`,
`/metrics`, answered by the HTTP transport (rpc/wire/http.py) from its head alone.

The probes need no token and say nothing about the workspace. They still pass the
transport's Host and Origin checks: a kubelet probes the pod's address, which is not a
loopback bind (where the Host check applies), so keeping the checks costs a fleet nothing
and keeps a browser page from probing a loopback server. A probe whose head is there when
its connection is accepted is answered at once and its connection closed (as a kubelet
closes it); one that comes later, or on a kept-alive connection, is answered as any
request, from its head, before anything else of that connection."""

from __future__ import annotations

import socket
from typing import Callable

import h11
import orjson

from chorus_tools.rpc.ops.drain import READY, Drain
from chorus_tools.rpc.ops.metrics import Metrics
from chorus_tools.rpc.wire.envelope import error_response
from chorus_tools.rpc.wire.errors import wire_error
from chorus_tools.rpc.wire.http_message import Head, Reply, plain, status_line

HEALTH, READY_PATH, METRICS_PATH = "/healthz", "/readyz", "/metrics"
PROBES = (HEALTH, READY_PATH)
ROUTES = (*PROBES, METRICS_PATH)
JSON = [("content-type", "application/json"), ("cache-control", "no-store")]
RPC_PATHS = ("/rpc", "/mcp")
BYTES_PREFIXES = ("/files/", "/archive/")  # rpc/wire/http_files.py, http_archive.py


def retry_after(drain: Drain) -> list[tuple[str, str]]:
    return [("retry-after", str(max(1, int(drain.retry_after))))]


def refusal(drain: Drain, path: str = "") -> Reply:
    """What any other request gets while the server drains: 503 with Retry-After, and in
    the body the shutting_down error as that endpoint's clients read its errors: a
    JSON-RPC error response on /rpc and /mcp (id null: the refusal comes before the body
    is read), the error's data on /files and /archive (as their other failures), a line
    of text elsewhere."""
    error = wire_error(drain.refusal())
    if path in RPC_PATHS:
        return Reply(503, orjson.dumps(error_response(None, error)),
                     [*JSON, *retry_after(drain)])
    if path.startswith(BYTES_PREFIXES):
        return Reply(503, orjson.dumps(error["data"]), [*JSON, *retry_after(drain)])
    return plain(503, "Service unavailable: the server is shutting down; retry on another "
                      "one or after it restarts.", retry_after(drain))


def answer(path: str, drain: Drain, metrics: Metrics | None) -> Reply:
    """The reply of a GET of one operator route (`path` in ROUTES)."""
    if path == HEALTH:  # the loop answered: that is all liveness asks
        return Reply(200, orjson.dumps({"status": "ok"}), list(JSON))
    if path == READY_PATH:
        if drain.state == READY:
            return Reply(200, orjson.dumps({"status": "ready"}), list(JSON))
        extra = retry_after(drain) if drain.draining else []
        return Reply(503, orjson.dumps({"status": drain.state}), [*JSON, *extra])
    if metrics is None:
        return plain(404, "Not found: metrics are off.")
    body, content_type = metrics.exposition()
    return Reply(200, body, [("content-type", content_type)])


PEEK = 1024  # the least --http-max-head-bytes: a probe's head is a few hundred bytes,
# and one larger than this takes the usual way (and its limit)


def answer_at_accept(sock: socket.socket, refuse: Callable[[Head], Reply | None],
                     drain: Drain) -> bool:
    """Answer a probe in the turn of the loop that accepted its connection, when its whole
    head is already there (a kubelet sends it as it connects): the usual way takes three
    more turns (the connection's task, its transport, its first read), each queued behind
    the other connections' work, and that queue was the probe's p99 under load
    (docs/benchmarks.md). The same checks apply (`refuse`: Host, Origin, shutdown); the
    answer says `connection: close` and the connection ends with it. Returns whether the
    connection was answered (and closed); False leaves it, unread, to the usual way."""
    try:
        data = sock.recv(PEEK, socket.MSG_PEEK)
    except OSError:
        return False
    path = data[4:data.find(b" ", 4)] if data.startswith(b"GET /") else b""
    if path.decode("latin-1") not in PROBES or not data.endswith(b"\r\n\r\n"):
        return False  # not a probe, or not whole yet, or something sent after it
    parser = h11.Connection(h11.SERVER)
    parser.receive_data(data)
    try:
        request, end = parser.next_event(), parser.next_event()
    except h11.RemoteProtocolError:
        return False
    if not isinstance(request, h11.Request) or not isinstance(end, h11.EndOfMessage) \
            or parser.trailing_data[0]:
        return False  # a body, a request after it, or a head h11 reads otherwise
    head = Head("GET", path.decode("latin-1"), {k.decode("latin-1"): v.decode("latin-1")
                                                for k, v in request.headers})
    reply = refuse(head) or answer(head.path, drain, None)
    reply.headers.append(("connection", "close"))
    wire = b"".join(parser.send(event) or b"" for event in (
        status_line(reply.status, [*reply.headers, ("content-length", str(len(reply.body)))]),
        h11.Data(data=reply.body), h11.EndOfMessage()))
    try:
        sock.recv(len(data))  # taken: what the peek saw
        sock.send(wire)  # a few hundred bytes into an empty socket buffer: whole
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # the prober left: nothing to answer
    sock.close()
    return True
