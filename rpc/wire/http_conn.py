"""One HTTP/1.1 connection: h11 parses and frames (no HTTP is parsed by hand here), this
module only moves bytes between h11 and an asyncio transport, one request at a time.

A request is shown to the endpoint twice: its head first (`Endpoint.refuse`: a wrong
token, a bad Origin, an unknown path, a declared length over the limit are answered
before a byte of the body is read, and the connection is closed so the body is never
read), then whole (`Endpoint.handle`) once its body, counted as it arrives, is complete.
A body that grows past the limit is answered 413 at that byte and the connection closed:
nothing bigger than the limit is ever held. One request is handled at a time; what a
client sends ahead (pipelining) waits in h11's buffer, and reading pauses when that holds
more than a body and a head.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Awaitable, Callable, Protocol

import h11

log = logging.getLogger("chorus.http")
HEAD_BYTES = 1 << 16  # what a pipelining client may send beyond one body before we pause
DRAIN_SECONDS = 1.0  # how long the rest of a refused request is dropped before closing
Headers = list[tuple[str, str]]


@dataclass
class Head:
    """A request's line and headers (names lower-cased; a repeated header's last value)."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes = b""


@dataclass
class Reply:
    """A whole response: a status, headers and a body."""

    status: int
    body: bytes = b""
    headers: Headers = field(default_factory=list)


class Endpoint(Protocol):
    def refuse(self, head: Head) -> Reply | None:
        """The answer to a request that must not run, from its head alone."""
        ...

    def handle(self, head: Head, out: Response) -> Awaitable[None] | None:
        """Answer a request whose body was read whole, through `out`: at once, from
        callbacks later, or by the awaitable returned (a stream), which runs as a task."""
        ...


class Response:
    """How a handler answers: one whole reply, or a stream of chunks (server-sent events)
    that ends with `end()` or with the connection."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self.started = False
        self.ended = False
        self.on_lost: Callable[[], None] | None = None  # the client went away mid-stream

    @property
    def open(self) -> bool:
        return self.started and not self.ended and not self._conn.lost

    def whole(self, reply: Reply) -> None:
        """The reply in one write (head, body and end: one send on the socket)."""
        assert not self.started
        self.started = self.ended = True
        self._conn.send(_head(reply.status, [*reply.headers,
                                             ("content-length", str(len(reply.body)))]),
                        h11.Data(data=reply.body), h11.EndOfMessage())
        self._conn.finished()

    def stream(self, status: int, headers: Headers) -> None:
        self._start(status, headers)

    def chunk(self, data: bytes) -> None:
        if self.open:
            self._conn.send(h11.Data(data=data))

    def end(self) -> None:
        if self.started and not self.ended:
            self.ended = True
            self._conn.send(h11.EndOfMessage())
            self._conn.finished()

    def _start(self, status: int, headers: Headers) -> None:
        assert not self.started
        self.started = True
        self._conn.send(_head(status, headers))


class Connection(asyncio.Protocol):
    def __init__(self, endpoint: Endpoint, max_body: int, tasks: set[asyncio.Task],
                 closing: Callable[[], bool], gone: Callable[[Connection], None]) -> None:
        self._endpoint = endpoint
        self._max_body = max_body
        self._tasks = tasks  # the server's: shutdown waits for every running handler
        self._closing = closing  # the server is shutting down: no new request
        self._gone = gone
        self._h11 = h11.Connection(h11.SERVER)
        self._transport: asyncio.Transport | None = None
        self._head: Head | None = None
        self._body: list[bytes] = []
        self._size = 0
        self._busy = False
        self._draining = False
        self.lost = False
        self.fd = -1
        self.response: Response | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        self.fd = transport.get_extra_info("socket").fileno()

    def data_received(self, data: bytes) -> None:
        if self._draining:
            return  # the rest of a refused request: dropped unread
        self._h11.receive_data(data)
        self._advance()
        if self._busy and len(self._h11.trailing_data[0]) > self._max_body + HEAD_BYTES \
                and self._transport is not None:
            self._transport.pause_reading()  # a client sending ahead: stop taking more

    def eof_received(self) -> bool:
        self._h11.receive_data(b"")
        self._advance()
        return True  # a half-closed client may still read an answer in flight

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self._gone(self)
        if self.response is not None and not self.response.ended and self.response.on_lost:
            self.response.on_lost()

    def send(self, *events: h11.Event) -> None:
        if self.lost or self._transport is None:
            return
        try:
            data = b"".join(self._h11.send(event) or b"" for event in events)
        except h11.LocalProtocolError:
            log.exception("cannot send %r", events)
            self._close()
            return
        if data:
            self._transport.write(data)

    def finished(self) -> None:
        """Our response is complete: the next request, or the end of the connection."""
        self._busy = False
        self.response = None
        if self._h11.our_state is h11.MUST_CLOSE or self._closing():
            self._close()
        elif self._h11.their_state is h11.DONE and self._h11.our_state is h11.DONE:
            self._h11.start_next_cycle()
            self._head, self._body, self._size = None, [], 0
            if self._transport is not None and not self._transport.is_reading():
                self._transport.resume_reading()
            self._advance()

    def _advance(self) -> None:
        while not self._busy and not self.lost:
            try:
                event = self._h11.next_event()
            except h11.RemoteProtocolError as exc:
                self._refuse(Reply(exc.error_status_hint, b"Bad request: malformed HTTP.\n"))
                return
            if event is h11.NEED_DATA or event is h11.PAUSED:
                return
            if isinstance(event, h11.Request):
                self._on_head(event)
            elif isinstance(event, h11.Data):
                self._on_data(event.data)
            elif isinstance(event, h11.EndOfMessage):
                self._run()
            elif isinstance(event, h11.ConnectionClosed):
                self._close()
                return

    def _on_head(self, event: h11.Request) -> None:
        target = event.target.decode("latin-1")
        self._head = head = Head(event.method.decode("ascii", "replace").upper(),
                                 target.split("?", 1)[0],
                                 {k.decode("latin-1"): v.decode("latin-1")
                                  for k, v in event.headers})
        refusal = self._endpoint.refuse(head)
        length = head.headers.get("content-length", "")
        if refusal is None and length.isdigit() and int(length) > self._max_body:
            refusal = _too_large(self._max_body)
        if refusal is not None:
            self._refuse(refusal)

    def _on_data(self, data: bytes) -> None:
        self._size += len(data)
        if self._size > self._max_body:
            self._refuse(_too_large(self._max_body))
        else:
            self._body.append(data)

    def _run(self) -> None:
        head = self._head
        assert head is not None
        head.body, self._body = b"".join(self._body), []
        self._busy = True
        self.response = response = Response(self)
        try:
            pending = self._endpoint.handle(head, response)
        except Exception:
            self._failed(head, response)
            return
        if pending is not None:
            task = asyncio.get_running_loop().create_task(self._await(head, response, pending))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _await(self, head: Head, response: Response, pending: Awaitable[None]) -> None:
        try:
            await pending
        except Exception:
            self._failed(head, response)
        finally:
            response.end()

    def _failed(self, head: Head, response: Response) -> None:
        log.exception("handling %s %s", head.method, head.path)
        if not response.started:
            response.whole(Reply(500, b"Internal server error.\n"))
        response.end()

    def _refuse(self, reply: Reply) -> None:
        """Answer now and end the connection: the rest of the request is never parsed.
        Our side is shut first and what the client still sends is dropped for a moment,
        so its kernel does not reset the connection before it reads the answer."""
        self._busy = self._draining = True
        reply.headers.append(("connection", "close"))
        if self._h11.our_state is h11.SEND_RESPONSE:
            self._send_now(reply)
        if self._transport is not None and not self._transport.is_closing():
            if self._transport.can_write_eof():
                self._transport.write_eof()
            asyncio.get_running_loop().call_later(DRAIN_SECONDS, self._close)

    def _send_now(self, reply: Reply) -> None:
        self.send(_head(reply.status, [*reply.headers,
                                       ("content-length", str(len(reply.body)))]),
                  h11.Data(data=reply.body), h11.EndOfMessage())

    def _close(self) -> None:
        self._busy = True
        if self._transport is not None and not self._transport.is_closing():
            self._transport.close()

    def shutdown(self) -> None:
        """The server stops: an idle connection is closed now, a busy one after its reply."""
        if not self._busy:
            self._close()


def _head(status: int, headers: Headers) -> h11.Response:
    return h11.Response(status_code=status, headers=headers,
                        reason=HTTPStatus(status).phrase)


def _too_large(limit: int) -> Reply:
    return Reply(413, f"Payload too large: the body is over --max-message-bytes "
                      f"({limit} bytes).\n".encode())
