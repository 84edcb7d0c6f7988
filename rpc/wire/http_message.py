"""A request and its answer as the endpoint (rpc/wire/http.py) sees them: the head, a whole
reply, and the Response a handler answers through (one reply, or a stream of chunks),
apart from the connection that carries them (rpc/wire/http_conn.py)."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Awaitable, Callable, Protocol

import h11

from chorus_tools.rpc.wire.http_raw import RawBody

Headers = list[tuple[str, str]]


@dataclass
class Head:
    """A request's line and headers (names lower-cased; a repeated header's last value).
    A request the endpoint takes as a stream (`Endpoint.streams`) has no `body`: its
    handler runs as soon as the head is read and reads `stream`."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes = b""
    query: str = ""
    stream: BodyStream | None = None


class BodyStream:
    """A request body handed over as it arrives, in bounded memory: the connection
    `feed`s what h11 parses and stops reading the socket while more than `high` bytes
    wait; `read` takes them and lets it read on. `read` answers b"" at the body's end and
    raises ConnectionError when the client went away (or the connection was refused).
    `fill` reads into the caller's buffer instead: past the bytes held, from the socket
    itself when `detach` hands the rest of a body of known length (rpc/wire/http_raw.py)."""

    def __init__(self, pause: Callable[[], None], resume: Callable[[], None],
                 high: int, detach: Callable[[], RawBody | None] | None = None) -> None:
        self._pause, self._resume, self._high = pause, resume, high
        self._detach = detach
        self._raw: RawBody | None = None
        self._chunks: deque[bytes] = deque()
        self._held = 0
        self._ended = False
        self._failed = False
        self._ready = asyncio.Event()

    def feed(self, data: bytes) -> None:
        self._chunks.append(data)
        self._held += len(data)
        self._ready.set()
        if self._held > self._high:
            self._pause()

    def end(self) -> None:
        self._ended = True
        self._ready.set()

    def fail(self) -> None:
        self._failed = True
        self._ready.set()
        if self._raw is not None:
            self._raw.fail()

    async def fill(self, view: memoryview) -> int:
        """Fill `view` with the body's next bytes: how many (fewer only at the body's end,
        0 once it is read whole). The bytes already held are copied in first; the rest
        of a body of known length then comes from the socket straight into `view`."""
        got = 0
        while got < len(view):
            if self._chunks:
                chunk = self._chunks.popleft()
                size = min(len(chunk), len(view) - got)
                view[got:got + size] = chunk[:size]
                if size < len(chunk):
                    self._chunks.appendleft(chunk[size:])
                self._held -= size
                got += size
                continue
            if self._failed:
                raise ConnectionError("the request's body was cut off")
            if self._raw is None and not self._ended and (detach := self._detach):
                self._detach = None
                self._raw = detach()
            if self._raw is not None:
                more = await self._raw.recv_into(view[got:])
                if not more:
                    break
                got += more
            elif self._ended:
                break
            else:
                if self._held <= self._high:
                    self._resume()
                self._ready.clear()
                await self._ready.wait()
        return got

    async def read(self, size: int) -> bytes:
        """The next `size` bytes (fewer only at the body's end: b"" once it is read
        whole), joined once when they are all there; the bytes held past them stay as they
        came. `size` must not pass `high`, or the socket would pause before they came."""
        return b"".join(await self.take(size))

    async def take(self, size: int) -> list[bytes]:
        """`read`'s bytes as the pieces they came in, not joined (a writer that takes a
        list, os.pwritev, spares the copy); [] at the body's end."""
        while self._held < size and not self._ended and not self._failed:
            self._ready.clear()
            await self._ready.wait()
        if self._failed:
            raise ConnectionError("the request's body was cut off")
        taken: list[bytes] = []
        want = size  # only the chunks it takes: never a copy of all held
        while self._chunks and want:
            chunk = self._chunks.popleft()
            if len(chunk) > want:
                chunk, rest = chunk[:want], chunk[want:]
                self._chunks.appendleft(rest)
            taken.append(chunk)
            want -= len(chunk)
        self._held -= size - want
        if self._held <= self._high:
            self._resume()
        return taken


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

    def streams(self, head: Head) -> bool:
        """Whether this request's body is read as a stream by its handler (started at
        once) rather than whole before it runs."""
        ...

    def handle(self, head: Head, out: Response) -> Awaitable[None] | None:
        """Answer a request whose body was read whole, through `out`: at once, from
        callbacks later, or by the awaitable returned (a stream), which runs as a task."""
        ...


class Response:
    """How a handler answers: one whole reply, or a stream of chunks (server-sent events)
    that ends with `end()` or with the connection."""

    def __init__(self, conn: Carrier) -> None:
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
        # a 304 names no length: it would have to be the full body's (RFC 9110, 8.6)
        length = [] if reply.status == 304 else [("content-length", str(len(reply.body)))]
        self._conn.send(status_line(reply.status, [*reply.headers, *length]),
                        h11.Data(data=reply.body), h11.EndOfMessage())
        self._conn.finished()

    def stream(self, status: int, headers: Headers) -> None:
        self._start(status, headers)

    def chunk(self, data: bytes) -> None:
        if self.open:
            self._conn.send(h11.Data(data=data))

    async def sendfile(self, fd: int, offset: int, count: int) -> int:
        """`count` bytes of the open file `fd` from `offset`, sent by the kernel: how many
        went; OSError when the client went away (the stream is then over: `abort` it)."""
        return await self._conn.sendfile(fd, offset, count)

    async def drained(self) -> None:
        """Until the connection's send buffer is below its high-water mark: a handler
        streaming a large body waits here, so memory never follows the body's size."""
        await self._conn.writable()

    def abort(self) -> None:
        """End a stream that cannot be finished: the connection closes, so the client
        sees a body shorter than its Content-Length and knows it is not whole."""
        if not self.ended:
            self.ended = True
            self._conn.cut()

    def end(self) -> None:
        if self.started and not self.ended:
            self.ended = True
            self._conn.send(h11.EndOfMessage())
            self._conn.finished()

    def _start(self, status: int, headers: Headers) -> None:
        assert not self.started
        self.started = True
        self._conn.send(status_line(status, headers))


class Carrier(Protocol):
    """What a Response needs of its connection."""

    lost: bool

    def send(self, *events: h11.Event) -> None: ...

    def finished(self) -> None: ...

    async def writable(self) -> None: ...

    def cut(self) -> None: ...

    async def sendfile(self, fd: int, offset: int, count: int) -> int: ...


def status_line(status: int, headers: Headers) -> h11.Response:
    return h11.Response(status_code=status, headers=headers,
                        reason=HTTPStatus(status).phrase)


def plain(status: int, text: str, headers: Headers | None = None) -> Reply:
    """A reply of one line of text, for a person or an agent to read."""
    return Reply(status, text.encode() + b"\n",
                 [("content-type", "text/plain; charset=utf-8"), *(headers or [])])
