"""One HTTP/1.1 connection: h11 parses and frames (no HTTP is parsed by hand here), this
module only moves bytes between h11 and an asyncio transport, one request at a time, and
bounds the time a client may hold the connection without a request in progress.

A request is shown to the endpoint twice: its head first (`Endpoint.refuse`: a wrong
token, a bad Origin, an unknown path, a declared length over the limit are answered
before a byte of the body is read, and the connection is closed so the body is never
read), then whole (`Endpoint.handle`) once its body, counted as it arrives, is complete.
A body that grows past the limit is answered 413 at that byte and the connection closed:
nothing bigger than the limit is ever held. One request is handled at a time; what a
client sends ahead (pipelining) waits in h11's buffer, and reading pauses when that holds
more than a body and a head.

Bounds (docs/protocol.md, HTTP: limits): a head larger than --http-max-head-bytes is 431;
a new connection, or a request whose head has begun, has --http-head-timeout to finish the
head (a deadline that bytes trickling in do not move: slowloris), else 408 and closed (a
connection that sent nothing is closed without a word); a kept-alive connection idle for
--http-idle-timeout between requests, or a body that stalls that long, is closed. While a
request is being answered (a stream included) no timer runs.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from typing import Awaitable, Callable, cast

import h11

from chorus_tools.rpc.wire.http_message import (BodyStream, Endpoint, Head, Reply, Response,
                                                plain, status_line)
from chorus_tools.rpc.wire.http_options import HttpOptions
from chorus_tools.rpc.wire.http_raw import RawBody, detach

log = logging.getLogger("chorus.http")
STREAM_HIGH = 16 << 20  # a streamed body's bytes held before reading the socket pauses
DRAIN_SECONDS = 1.0  # how long the rest of a refused request is dropped before closing


class Phase(enum.Enum):
    IDLE = "between requests"  # kept alive, nothing of the next request yet
    HEAD = "receiving a head"  # or connected, nothing sent yet
    BODY = "receiving a body"
    BUSY = "answering"  # the endpoint has the request: no timer
    DONE = "closing"


class Connection(asyncio.Protocol):
    def __init__(self, endpoint: Endpoint, options: HttpOptions, tasks: set[asyncio.Task],
                 closing: Callable[[], bool], gone: Callable[[Connection], None]) -> None:
        self._endpoint = endpoint
        self._options = options
        self._max_body = options.max_message_bytes
        self._tasks = tasks  # the server's: shutdown waits for every running handler
        self._closing = closing  # the server is shutting down: no new request
        self._gone = gone
        self._h11 = h11.Connection(h11.SERVER,
                                   max_incomplete_event_size=options.max_head_bytes)
        self._transport: asyncio.Transport | None = None
        self._head: Head | None = None
        self._body: list[bytes] = []
        self._size = 0
        self._busy = False
        self._draining = False
        self._phase = Phase.HEAD
        self._heard = False  # a byte of the request now awaited has come
        self._timer: asyncio.TimerHandle | None = None
        self._last_data = 0.0
        self.idle_since: float | None = None  # since when it waits for a request (evictable)
        self.lost = False
        self.fd = -1
        self.response: Response | None = None
        self._stream: BodyStream | None = None  # the body a running handler reads
        self._writable = asyncio.Event()
        self._writable.set()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        self.fd = transport.get_extra_info("socket").fileno()
        self._enter(Phase.HEAD)

    def data_received(self, data: bytes) -> None:
        if self._draining:
            return  # the rest of a refused request: dropped unread
        self._last_data = asyncio.get_running_loop().time()
        if not self._heard:
            self._heard = True
            if self._phase is Phase.IDLE:
                self._enter(Phase.HEAD)  # the next request began: its head's deadline
        self._h11.receive_data(data)
        self._advance()
        if self._busy and len(self._h11.trailing_data[0]) > \
                self._max_body + self._options.max_head_bytes and self._transport is not None:
            self._transport.pause_reading()  # a client sending ahead: stop taking more

    def eof_received(self) -> bool:
        self._h11.receive_data(b"")
        self._advance()
        self._left()  # an event stream never ends by itself: a client that closed has left
        return True  # a half-closed client may still read an answer in flight

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self._writable.set()  # nothing more will drain: a waiting handler goes on, sends nothing
        self._cut_stream()
        self._enter(Phase.DONE)
        self._gone(self)
        self._left()

    def _left(self) -> None:
        """The client went away: a stream waiting on it (on_lost) ends now, not when a
        keep-alive write finally fails (two of them, 30 s, holding a connection slot)."""
        if self.response is not None and not self.response.ended and self.response.on_lost:
            self.response.on_lost()

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    async def writable(self) -> None:
        await self._writable.wait()

    def cut(self) -> None:
        """A response that cannot be finished: close after what was sent."""
        self._close()

    async def sendfile(self, fd: int, offset: int, count: int) -> int:
        """The body's next `count` bytes from the open file `fd` at `offset`, moved by the
        kernel (sendfile: never through this process's memory) once what was written
        before has gone; h11 counts them as sent. How many went (fewer only when the file
        ended first); OSError when the client went away."""
        if self.lost or self._transport is None:
            raise ConnectionResetError("the client went away")
        # h11 passes an object that is not bytes through, needing only its len()
        self._h11.send_with_data_passthrough(h11.Data(data=cast(bytes, _Span(count))))
        with open(fd, "rb", buffering=0, closefd=False) as file:
            return await asyncio.get_running_loop().sendfile(self._transport, file, offset,
                                                             count)

    def _cut_stream(self) -> None:
        if self._stream is not None:
            self._stream.fail()
            self._stream = None

    def evict(self) -> None:
        """Closed at once to make room for a new connection (http_limits.py): only one
        waiting for a request is chosen, so no answer is cut."""
        self._enter(Phase.DONE)
        if self._transport is not None:
            self._transport.abort()

    def _enter(self, phase: Phase) -> None:
        """Move to `phase` and arm its timer: the head's deadline, the idle one, or none."""
        self._phase = phase
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        loop = asyncio.get_running_loop()
        waiting = phase in (Phase.IDLE, Phase.HEAD)
        if not waiting:
            self.idle_since = None
        elif self.idle_since is None:
            self.idle_since = loop.time()
        seconds = {Phase.HEAD: self._options.head_timeout,
                   Phase.IDLE: self._options.idle_timeout,
                   Phase.BODY: self._options.idle_timeout}.get(phase)
        if seconds is not None:
            self._timer = loop.call_later(seconds, self._expired)

    def _expired(self) -> None:
        self._timer = None
        loop = asyncio.get_running_loop()
        if self._phase is Phase.BODY:
            stalled = loop.time() - self._last_data
            if stalled < self._options.idle_timeout:  # the body still moves: wait on
                self._timer = loop.call_later(self._options.idle_timeout - stalled,
                                              self._expired)
                return
            self._refuse(plain(408, "Request timeout: the body stalled for "
                                     "--http-idle-timeout seconds."))
        elif self._phase is Phase.HEAD and self._heard:
            self._refuse(plain(408, "Request timeout: the request head took longer than "
                                     "--http-head-timeout seconds."))
        else:
            self._close()  # a connection that never spoke, or one idle between requests

    def send(self, *events: h11.Event) -> None:
        if self.lost or self._transport is None:
            return
        if self._head is not None and self._head.method == "HEAD":
            # the answer to HEAD is its head alone (RFC 9110, 9.3.2): h11 refuses a body
            events = tuple(e for e in events if not isinstance(e, h11.Data))
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
        if self._h11.their_state is h11.SEND_BODY:  # answered before its body ended
            self._linger()
        elif self._h11.our_state is h11.MUST_CLOSE or self._closing() or \
                self._h11.their_state is not h11.DONE:
            self._close()
        elif self._h11.our_state is h11.DONE:
            self._h11.start_next_cycle()
            self._head, self._body, self._size = None, [], 0
            self._heard = bool(self._h11.trailing_data[0])  # sent ahead (pipelining)
            self._enter(Phase.HEAD if self._heard else Phase.IDLE)
            if self._transport is not None and not self._transport.is_reading():
                self._transport.resume_reading()
            self._advance()

    def _advance(self) -> None:
        while not self._busy and not self.lost:
            try:
                event = self._h11.next_event()
            except h11.RemoteProtocolError as exc:
                self._refuse(_head_too_large(self._options.max_head_bytes)
                             if exc.error_status_hint == 431 else
                             Reply(exc.error_status_hint, b"Bad request: malformed HTTP.\n"))
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
        self._enter(Phase.BODY)
        target = event.target.decode("latin-1")
        path, _, query = target.partition("?")
        self._head = head = Head(event.method.decode("ascii", "replace").upper(), path,
                                 {k.decode("latin-1"): v.decode("latin-1")
                                  for k, v in event.headers}, query=query)
        if _head_size(event) > self._options.max_head_bytes:  # arrived in one read
            self._refuse(_head_too_large(self._options.max_head_bytes))
            return
        refusal = self._endpoint.refuse(head)
        streams = refusal is None and self._endpoint.streams(head)
        length = head.headers.get("content-length", "")
        if refusal is None and not streams and length.isdigit() and \
                int(length) > self._max_body:  # a streamed body has its handler's bounds
            refusal = _too_large(self._max_body)
        if refusal is not None:
            self._refuse(refusal)
            return
        if self._h11.they_are_waiting_for_100_continue:  # curl -T waits a second for it
            self.send(h11.InformationalResponse(status_code=100, headers=[]))
        if streams:
            assert self._transport is not None
            self._stream = head.stream = BodyStream(self._transport.pause_reading,
                                                    self._resume_stream, STREAM_HIGH,
                                                    self._detach_body)
            self._start(head)

    def _detach_body(self) -> RawBody | None:
        """The rest of a streamed body of known length, for its handler to read from the
        socket itself (rpc/wire/http_raw.py); reading here stops until the response."""
        if self._transport is None or self._transport.is_closing() or self.lost \
                or self._draining:
            return None
        return detach(self._h11, self.fd, self._transport.pause_reading, self._heard_body,
                      self._advance, self._body_lost)

    def _body_lost(self) -> None:
        self._cut_stream()
        self._close()

    def _heard_body(self) -> None:
        self._last_data = asyncio.get_running_loop().time()

    def _resume_stream(self) -> None:
        """The handler took what a streamed body held: read on. The stall timer counts
        from now, since the client could not send while we did not read."""
        if self._transport is not None and not self._transport.is_reading() \
                and not self._busy:
            self._last_data = asyncio.get_running_loop().time()
            self._transport.resume_reading()

    def _on_data(self, data: bytes) -> None:
        if self._stream is not None:
            self._stream.feed(data)
            return
        self._size += len(data)
        if self._size > self._max_body:
            self._refuse(_too_large(self._max_body))
        else:
            self._body.append(data)

    def _run(self) -> None:
        """The request's end: a streamed body ends; any other request runs now, whole."""
        head = self._head
        assert head is not None
        self._busy = True
        self._enter(Phase.BUSY)
        if head.stream is not None:
            if self._stream is not None:
                self._stream.end()
                self._stream = None
            return
        head.body, self._body = b"".join(self._body), []
        self._start(head)

    def _start(self, head: Head) -> None:
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
        self._cut_stream()
        self._enter(Phase.DONE)
        reply.headers.append(("connection", "close"))
        if self._h11.our_state in (h11.IDLE, h11.SEND_RESPONSE):  # IDLE: no head was read
            self._send_now(reply)
        self._linger()

    def _linger(self) -> None:
        """End the connection after an answer given before the request's body was read
        whole: our side is shut, and what the client still sends is read and dropped for
        a moment (reading resumes if a streamed body paused it), so its kernel does not
        reset the connection before it reads the answer."""
        self._busy = self._draining = True
        self._cut_stream()
        self._enter(Phase.DONE)
        if self._transport is not None and not self._transport.is_closing():
            if not self._transport.is_reading():
                self._transport.resume_reading()
            if self._transport.can_write_eof():
                self._transport.write_eof()
            asyncio.get_running_loop().call_later(DRAIN_SECONDS, self._close)

    def _send_now(self, reply: Reply) -> None:
        self.send(status_line(reply.status, [*reply.headers,
                                       ("content-length", str(len(reply.body)))]),
                  h11.Data(data=reply.body), h11.EndOfMessage())

    def _close(self) -> None:
        self._busy = True
        self._enter(Phase.DONE)
        if self._transport is not None and not self._transport.is_closing():
            self._transport.close()

    def shutdown(self) -> None:
        """The server stops: an idle connection is closed now, a busy one after its reply."""
        if not self._busy:
            self._close()


class _Span:
    """What h11 is told a sendfile sent: only its length (h11's data passthrough)."""

    def __init__(self, length: int) -> None:
        self._length = length

    def __len__(self) -> int:
        return self._length


def _head_size(event: h11.Request) -> int:
    """A head's size as sent, near enough: its line and each header line."""
    return len(event.method) + len(event.target) + 12 + sum(
        len(name) + len(value) + 4 for name, value in event.headers)


def _head_too_large(limit: int) -> Reply:
    return plain(431, f"Request header fields too large: the request line and headers "
                       f"are over --http-max-head-bytes ({limit} bytes).")


def _too_large(limit: int) -> Reply:
    return Reply(413, f"Payload too large: the body is over --max-message-bytes "
                      f"({limit} bytes).\n".encode())
