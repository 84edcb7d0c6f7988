"""How many HTTP connections are open at once, and the descriptors kept back for the
workspace's own work (docs/protocol.md, HTTP: limits).

Every connection holds a descriptor in the server process, which also needs descriptors
for its own work (the history, records, pipes to respawned workers): sockets must never
take those. So the connections accepted at once are bounded by `--http-max-connections`,
lowered at start to what the descriptor limit (RLIMIT_NOFILE) leaves once the descriptors
already open and a reserve (a quarter of the limit, at least RESERVE_MIN) are set aside.

Connections are accepted here, not by asyncio's create_server, to choose who goes at the
bound: the connection idle longest (between requests, or still sending a head) is closed
for the newcomer, so idle sockets never lock new clients out; when every connection has a
request in progress, the newcomer is answered 503 and closed. A liveness or readiness probe
whose head has come with its connection is answered before that bound (rpc/ops/probes.py):
a server full of busy connections is still alive. A failed accept (the process
or the system out of descriptors) pauses accepting for a moment instead of failing again
at once. Each of these is logged once, then counted, not logged per socket.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import resource
import socket
import time
from typing import Any, Callable, Coroutine

import h11

log = logging.getLogger("chorus.http")
RESERVE_MIN = 64  # descriptors kept for the workspace's work, at the least
RESERVE_SHARE = 4  # ... and at least this share (1/4) of the descriptor limit
ACCEPT_BATCH = 64  # connections accepted in one turn of the event loop
ACCEPT_RETRY = 0.5  # seconds without accepting after the process ran out of descriptors
REPORT_EVERY = 60.0  # seconds between two log lines about one kind of refusal
OUT_OF_RESOURCES = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


def connection_cap(wanted: int) -> int:
    """`wanted` (--http-max-connections), lowered so that the connections, the descriptors
    open now and the reserve fit under the soft RLIMIT_NOFILE."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    reserve = max(RESERVE_MIN, soft // RESERVE_SHARE)
    room = soft - len(os.listdir("/proc/self/fd")) - reserve
    if room < wanted:
        log.warning("the descriptor limit (%d) leaves room for %d HTTP connections at once "
                    "(--http-max-connections %d); raise it with ulimit -n for more",
                    soft, max(room, 1), wanted)
    return max(1, min(wanted, room))


class Throttled:
    """A warning logged the first time, then counted and repeated, with the count, at most
    every REPORT_EVERY seconds: a flood of sockets makes one line, not one per socket."""

    def __init__(self) -> None:
        self._last = -REPORT_EVERY
        self._unsaid = 0

    def warn(self, message: str) -> None:
        now = time.monotonic()
        if now - self._last < REPORT_EVERY:
            self._unsaid += 1
            return
        more = f" ({self._unsaid} more times since the last report)" if self._unsaid else ""
        log.warning("%s%s", message, more)
        self._last, self._unsaid = now, 0


class Listener:
    """Accepts connections on a listening socket, at most `cap` open at once."""

    def __init__(self, sock: socket.socket, cap: int,
                 open_connection: Callable[[socket.socket], Coroutine[Any, Any, None]],
                 evict: Callable[[], bool], count: Callable[[], int],
                 early: Callable[[socket.socket], bool] = lambda conn: False) -> None:
        self._sock = sock
        self._early = early  # answers a probe at once, before the cap (rpc/ops/probes.py)
        self.cap = cap
        self._open = open_connection  # the transport and protocol made for an accepted one
        self._evict = evict  # closes the connection idle longest; False when none is idle
        self._count = count  # connections open
        self.pending: set[socket.socket] = set()  # accepted, their transport not made yet
        self._full = Throttled()
        self._starved = Throttled()
        self._loop = asyncio.get_running_loop()
        self._closed = False

    def start(self) -> None:
        self._sock.setblocking(False)
        self._loop.add_reader(self._sock.fileno(), self._ready)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._loop.remove_reader(self._sock.fileno())
            self._sock.close()

    def _ready(self) -> None:
        for _ in range(ACCEPT_BATCH):
            try:
                conn, _ = self._sock.accept()
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                return
            except OSError as exc:
                if exc.errno not in OUT_OF_RESOURCES:
                    raise
                self._pause(exc)
                return
            conn.setblocking(False)
            if self._early(conn):
                continue
            if self._count() + len(self.pending) < self.cap:
                self._admit(conn)
            elif self._evict():
                self._admit(conn)
                return  # the next accept after the evicted one's descriptor is closed
            else:
                self._full.warn(f"{self.cap} HTTP connections are open, each with a request "
                                "in progress: refusing new ones with 503 "
                                "(--http-max-connections)")
                _refuse(conn)

    def _admit(self, conn: socket.socket) -> None:
        self.pending.add(conn)
        task = self._loop.create_task(self._open(conn))
        task.add_done_callback(lambda done: self._opened(conn, done))

    def _opened(self, conn: socket.socket, done: asyncio.Task) -> None:
        self.pending.discard(conn)
        if not done.cancelled() and done.exception() is not None:
            conn.close()
            log.warning("an accepted HTTP connection could not be set up: %s",
                        done.exception())

    def _pause(self, exc: OSError) -> None:
        """Out of descriptors: accept again in a moment (the waiting connections stay in
        the listening socket's backlog meanwhile)."""
        self._starved.warn(f"cannot accept HTTP connections: {exc.strerror}; retrying "
                           f"every {ACCEPT_RETRY} s")
        self._loop.remove_reader(self._sock.fileno())
        self._loop.call_later(ACCEPT_RETRY, self._resume)

    def _resume(self) -> None:
        if not self._closed:
            self._loop.add_reader(self._sock.fileno(), self._ready)


def _refuse(conn: socket.socket) -> None:
    """503 on a connection never handed to the transport, then closed; what the client
    already sent is read first, so its kernel does not answer our close with a reset."""
    server = h11.Connection(h11.SERVER)
    body = b"Service unavailable: too many connections; retry in a moment.\n"
    data = b"".join(server.send(event) or b"" for event in (
        h11.Response(status_code=503, reason=b"Service Unavailable", headers=[
            ("content-type", "text/plain; charset=utf-8"), ("retry-after", "1"),
            ("connection", "close"), ("content-length", str(len(body)))]),
        h11.Data(data=body), h11.EndOfMessage()))
    try:
        while conn.recv(1 << 16):
            pass
    except OSError:
        pass  # nothing more to read now (or the client left)
    try:
        conn.send(data)
        conn.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    conn.close()
