"""Streamable HTTP (docs/protocol.md, HTTP): MCP at `/mcp`, plain JSON-RPC at `/rpc`, on
the server's one dispatcher code, pool and sandbox. HTTP itself is h11's (http_conn.py).

- Every request is checked from its head before its body is read: the bearer token
  (constant-time compare) when one is set, else 401 and nothing runs; an `Origin` that is
  not a loopback origin nor the bound address is 403, and so is, on a loopback bind, a
  `Host` that is not a loopback name (DNS rebinding); unknown paths 404.
- POST /mcp: one message (or a batch). A request: its response as `application/json`,
  or, when it asked for progress and the client accepts `text/event-stream`, an SSE stream
  carrying the progress and then the response; nothing to answer (notifications only, or a
  request cancelled by notifications/cancelled): 202 once handled; a client's responses
  alone: 202 at once, nothing runs. `initialize` opens a
  session, named by the `Mcp-Session-Id` response header, that the client sends back; an
  unknown or ended one is 404. Past MAX_SESSIONS, the least recently used session ends.
  A message without a session header is served by the sessionless client (stateless
  requests, and /rpc). A request of MCP 2026-07-28 is checked against its headers first
  (http_revision.py: 400 with the request's id) and has no session (a session header is
  ignored); its -32601 is 404.
- GET /mcp (or /rpc): the session's notification stream (http_session.py), the
  sessionless client's without a session header. One at a time.
- DELETE /mcp: the session ends (its watches stop, its stream closes).
- POST /rpc: a JSON-RPC message or batch → its reply as JSON (204 for notifications only).
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import secrets
import socket
from typing import Any, Awaitable, Callable
from urllib.parse import urlsplit

import orjson

from chorus_tools.rpc.dispatch.dispatcher import Dispatcher
from chorus_tools.rpc.mcp.revision import SUPPORTED
from chorus_tools.rpc.ops import probes
from chorus_tools.rpc.ops.drain import Drain
from chorus_tools.rpc.ops.metrics import Metrics
from chorus_tools.rpc.process.watch_service import OwnWatches, Watches
from chorus_tools.rpc.wire.envelope import dumps, error_response
from chorus_tools.rpc.wire.errors import INVALID_REQUEST, protocol_error
from chorus_tools.rpc.wire import http_archive as archive
from chorus_tools.rpc.wire import http_files as files
from chorus_tools.rpc.wire import http_revision as revision
from chorus_tools.rpc.wire.http_options import HttpOptions, is_loopback
from chorus_tools.rpc.wire.http_conn import Connection
from chorus_tools.rpc.wire.http_limits import Listener, connection_cap
from chorus_tools.rpc.wire.http_message import Head, Reply, Response, plain
from chorus_tools.rpc.wire.http_session import Session, sse

SESSION = "mcp-session-id"
JSON = [("content-type", "application/json")]
MAX_SESSIONS = 1000
SSE = [("content-type", "text/event-stream"), ("cache-control", "no-store")]


def _error(status: int, message: str) -> Reply:
    """A refusal a JSON-RPC client can read: an error response with id null."""
    return Reply(status, dumps(error_response(None, protocol_error(INVALID_REQUEST,
                                                                   message))), list(JSON))


class HttpFront:
    """The listening socket, its connections, and the sessions."""

    def __init__(self, options: HttpOptions, dispatcher: Callable[..., Dispatcher],
                 watches: Watches, drain: Drain | None = None,
                 metrics: Metrics | None = None) -> None:
        self._options = options
        self._drain = drain or Drain()  # the server's: /readyz and 503 while draining
        self._metrics = metrics
        self._dispatcher = dispatcher  # a new Dispatcher(watches=...) on the shared pool
        self._watches = watches
        self._sessions: dict[str, Session] = {}
        self._sessionless = self._session(None)
        self._listener: Listener | None = None
        self._connections: set[Connection] = set()
        self._handlers: set[asyncio.Task] = set()
        self._closing = False
        self._loopback_bind = is_loopback(options.host)
        self.address = ""

    def _session(self, session_id: str | None) -> Session:
        own = OwnWatches(self._watches)
        return Session(session_id, self._dispatcher(watches=own), own)

    @property
    def tasks(self) -> set[asyncio.Task]:
        """Every request running on any session, and the handlers waiting on them."""
        sessions = [self._sessionless, *self._sessions.values()]
        return {t for s in sessions for t in s.dispatcher.tasks} | {
            t for t in self._handlers}

    def start(self, sock: socket.socket) -> str:
        """Serve on `sock`, already bound and listening (http_options.listen), at most
        --http-max-connections at once (fewer under a low descriptor limit)."""
        self._listener = Listener(sock, connection_cap(self._options.max_connections),
                                  self._open_connection, self._evict,
                                  lambda: len(self._connections),
                                  lambda conn: probes.answer_at_accept(conn, self.refuse,
                                                                       self._drain))
        self._listener.start()
        host, port = sock.getsockname()[:2]
        self.address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        return self.address

    async def _open_connection(self, sock: socket.socket) -> None:
        await asyncio.get_running_loop().connect_accepted_socket(self._connection, sock)

    def _connection(self) -> Connection:
        conn = Connection(self, self._options, self._handlers, lambda: self._closing,
                          self._connections.discard)
        self._connections.add(conn)
        return conn

    def _evict(self) -> bool:
        """Close the connection waiting longest for a request, if one waits (at the cap)."""
        waiting = [c for c in self._connections if c.idle_since is not None]
        if not waiting:
            return False
        min(waiting, key=lambda c: c.idle_since or 0.0).evict()  # counted until closed
        return True

    def connection_fds(self) -> tuple[int, ...]:
        """The open connections' sockets, and those accepted whose connection is being
        made: a process forked now must not keep them."""
        pending = self._listener.pending if self._listener is not None else set()
        return (*(c.fd for c in self._connections if c.fd >= 0),
                *(s.fileno() for s in pending if s.fileno() >= 0))

    @property
    def open_connections(self) -> int:
        return len(self._connections)

    def end_streams(self) -> None:
        """Drain, first step: the sessions' notification streams end (an open GET would
        hold the drain to its timeout); requests in flight run on, probes are answered."""
        for session in [self._sessionless, *self._sessions.values()]:
            session.end()

    def stop_listening(self) -> None:
        """Shutdown, first step: no new connection or request; sessions end."""
        self._closing = True
        if self._listener is not None:
            self._listener.close()
        for session in [self._sessionless, *self._sessions.values()]:
            session.end()
        for conn in list(self._connections):
            conn.shutdown()

    # the checks made on a request's head, before its body is read
    def refuse(self, head: Head) -> Reply | None:
        if self._closing:
            return probes.refusal(self._drain, head.path)
        route = head.path in probes.ROUTES
        if self._drain.draining and not route:
            return probes.refusal(self._drain, head.path)
        token = self._options.token
        if token is not None and head.path not in probes.PROBES and not (
                head.path == probes.METRICS_PATH and self._options.metrics_public):
            given = head.headers.get("authorization", "").encode("latin-1")
            if not hmac.compare_digest(given, b"Bearer " + token):
                return plain(401, "Unauthorized: send Authorization: Bearer <token> (the "
                              "content of --http-token-file).",
                              [("www-authenticate", 'Bearer realm="chorus-tools"')])
        origin = head.headers.get("origin")
        if origin is not None and not self._origin_allowed(origin):
            return plain(403, f"Forbidden: Origin {origin!r} is not this server's.")
        host = head.headers.get("host", "")
        if self._loopback_bind and not _loopback_host(host):
            return plain(403, f"Forbidden: Host {host!r} is not this machine's loopback.")
        if route:
            return None if head.method in ("GET", "HEAD") else plain(
                405, "Method not allowed.", [("allow", "GET, HEAD")])
        if head.path.startswith((files.PREFIX, archive.PREFIX)):
            allowed = ("GET", "HEAD", "PUT") if head.path.startswith(files.PREFIX) else (
                "GET", "PUT")  # an archive's length is known only once it is made
            if head.method not in allowed:
                return plain(405, "Method not allowed.", [("allow", ", ".join(allowed))])
            return None
        if head.path not in ("/mcp", "/rpc"):
            return plain(404, "Not found: the endpoints are /mcp (MCP), /rpc (JSON-RPC) "
                          "/files/{path} and /archive/{dir}.")
        if head.method not in ("POST", "GET", "DELETE"):
            return plain(405, "Method not allowed.", [("allow", "GET, POST, DELETE")])
        return None

    def _origin_allowed(self, origin: str) -> bool:
        """A browser's Origin must be a loopback one, or the address the server is bound
        to: a page of another site is refused, even one whose name resolves to us (DNS
        rebinding: its Host header names that site too, so neither can be trusted)."""
        try:
            parts = urlsplit(origin)
            host = parts.hostname or ""
        except ValueError:
            return False
        if parts.scheme not in ("http", "https"):
            return False
        return is_loopback(host) or host == self._options.host.lower()

    def streams(self, head: Head) -> bool:
        return head.method == "PUT" and head.path.startswith((files.PREFIX, archive.PREFIX))

    def handle(self, head: Head, out: Response) -> Awaitable[None] | None:
        if head.path == probes.METRICS_PATH and self._metrics is not None:
            return self._scrape(out)
        if head.path in probes.ROUTES:
            out.whole(probes.answer(head.path, self._drain, self._metrics))
            return None
        if head.path.startswith(files.PREFIX):
            route = files.put if head.method == "PUT" else files.get
            return route(self._sessionless.dispatcher, head, out)
        if head.path.startswith(archive.PREFIX):
            route = archive.put if head.method == "PUT" else archive.get
            return route(self._sessionless.dispatcher, head, out)
        version = head.headers.get(revision.HEADER_VERSION)
        message, modern = None, False
        if head.path == "/mcp" and head.method == "POST":
            message = _loads(head.body) if revision.may_be_modern(head.headers,
                                                                  head.body) else None
            if refused := revision.refusal(head.headers, message):
                out.whole(Reply(400, dumps(refused), list(JSON)))
                return None
            modern = revision.is_modern(head.headers, message)
        elif head.path == "/mcp" and version is not None and version not in SUPPORTED:
            out.whole(_error(400, f"Bad Request: unsupported MCP-Protocol-Version "
                              f"{version!r}; this server speaks {', '.join(SUPPORTED)}."))
            return None
        # a 2026-07-28 request has no session: one named is ignored, as that revision says
        session_id = head.headers.get(SESSION) if head.path == "/mcp" and not modern else None
        session = self._sessionless
        if session_id is not None:
            found = self._sessions.pop(session_id, None)
            if found is None:
                out.whole(_error(404, "Not Found: no session has this Mcp-Session-Id (it "
                                 "ended, or the server restarted); initialize again."))
                return None
            session = self._sessions[session_id] = found  # now the most recently used
        if head.method == "GET":
            return self._listen(head, session, out)
        if head.method == "DELETE":
            self._delete(head, session, out)
        else:
            self._post(head, session, out, message, modern)
        return None

    async def _scrape(self, out: Response) -> None:
        assert self._metrics is not None
        await self._metrics.settled()  # the workspace's usage counted for this read
        out.whole(probes.answer(probes.METRICS_PATH, self._drain, self._metrics))

    async def _listen(self, head: Head, session: Session, out: Response) -> None:
        if "text/event-stream" not in head.headers.get("accept", ""):
            out.whole(plain(406, "Not Acceptable: the stream is text/event-stream."))
        elif session.stream is not None and session.stream.open:
            out.whole(plain(409, "Conflict: this session's stream is already open."))
        else:
            await session.listen(out, list(SSE))

    def _open_session(self) -> Session:
        """A new session; past MAX_SESSIONS the least recently used one ends (clients that
        never send DELETE would otherwise hold their sessions for the server's life)."""
        while len(self._sessions) >= MAX_SESSIONS:
            self._sessions.pop(next(iter(self._sessions))).end()
        session = self._session(secrets.token_urlsafe(24))
        self._sessions[str(session.id)] = session
        return session

    def _close_session(self, session: Session) -> None:
        """DELETE, or an initialize refused: the session ends and is forgotten."""
        if self._sessions.get(str(session.id)) is session:
            del self._sessions[str(session.id)]
        session.end()

    def _delete(self, head: Head, session: Session, out: Response) -> None:
        if head.path != "/mcp" or session.id is None:
            out.whole(plain(405 if head.path != "/mcp" else 400,
                             "DELETE ends an MCP session: send its Mcp-Session-Id."))
            return
        self._close_session(session)
        out.whole(Reply(200))

    def _post(self, head: Head, session: Session, out: Response, message: Any,
              modern: bool) -> None:
        """Hand the message to the session's dispatcher; its reply is written as it comes
        (no task of our own per request). Only a message that may be of MCP 2026-07-28,
        open a session, ask for progress or be a client's responses is parsed here
        (`message`, else None); the dispatcher parses every one it is handed."""
        body, mcp = head.body, head.path == "/mcp"
        if message is None and mcp and (any(key in body for key in _PARSED_FOR) or
                                        b'"method"' not in body):  # no request in it
            message = _loads(body)
        if mcp and _responses_only(message):  # a client's answers: nothing to run or say
            out.whole(Reply(202, b"", [(SESSION, session.id)] if session.id else []))
            return
        opened = mcp and session.id is None and not modern and _is_initialize(message)
        if opened:
            session = self._open_session()
        headers = [(SESSION, session.id)] if mcp and session.id is not None else []
        streamed = mcp and _wants_progress(message) and \
            "text/event-stream" in head.headers.get("accept", "")
        answered: list[Any] = []

        def reply(sent: Any) -> None:
            if isinstance(sent, dict) and "method" in sent:  # a notification
                if streamed and not answered and out.open:
                    out.chunk(sse(sent))
                else:
                    session.notify(sent)
            elif not answered:
                answered.append(sent)
                if streamed:
                    out.chunk(sse(sent))
                    out.end()
                else:
                    if opened and not _initialized(message, sent):
                        headers.clear()  # a refused initialize opens no session
                        self._close_session(session)
                    out.whole(Reply(revision.status(sent) if modern else 200, dumps(sent),
                                    [*JSON, *headers]))

        def done(_: asyncio.Task) -> None:
            """Nothing to answer (notifications only, or cancelled by
            notifications/cancelled): 202 on /mcp as MCP wants, 204 on /rpc."""
            if not answered:
                if out.started:
                    out.end()
                else:
                    out.whole(Reply(202 if mcp else 204, b"", headers))

        if streamed:
            out.stream(200, [*SSE, *headers])
        session.dispatcher.submit(body, reply).add_done_callback(done)


def _loads(body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return None  # the dispatcher answers it: -32700


@functools.lru_cache(maxsize=256)  # asked per request, of the few Host values clients send
def _loopback_host(host: str) -> bool:
    """Whether a Host header names this machine's loopback (its port aside)."""
    try:
        return is_loopback(urlsplit("//" + host).hostname or "")
    except ValueError:
        return False


# what makes a POST to /mcp worth parsing before the dispatcher does: it may open a
# session or ask for progress (or, naming no method, be a client's responses: 202)
_PARSED_FOR = (b'"initialize"', b'"progressToken"')


def _responses_only(message: Any) -> bool:
    """Whether `message` holds JSON-RPC responses and nothing else."""
    items = message if isinstance(message, list) else [message]
    return bool(items) and all(
        isinstance(m, dict) and "method" not in m and "id" in m
        and ("result" in m or "error" in m) for m in items)


def _requests(message: Any) -> list[dict[str, Any]]:
    items = message if isinstance(message, list) else [message]
    return [m for m in items if isinstance(m, dict) and "method" in m and "id" in m]


def _is_initialize(message: Any) -> bool:
    return any(m.get("method") == "initialize" for m in _requests(message))


def _initialized(message: Any, sent: Any) -> bool:
    """Whether the answer `sent` to `message` holds a result for its initialize (an
    initialize refused, e.g. for params that are no object, opens no session)."""
    ids = {repr(m.get("id")) for m in _requests(message) if m.get("method") == "initialize"}
    answers = sent if isinstance(sent, list) else [sent]
    return any(isinstance(a, dict) and "result" in a and repr(a.get("id")) in ids
               for a in answers)


def _wants_progress(message: Any) -> bool:
    for m in _requests(message):
        params = m.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        if isinstance(meta, dict) and "progressToken" in meta:
            return True
    return False
