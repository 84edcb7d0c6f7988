"""A request and its answer as the endpoint (rpc/wire/http.py) sees them: the head, a whole
reply, and the Response a handler answers through (one reply, or a stream of chunks),
apart from the connection that carries them (rpc/wire/http_conn.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Awaitable, Callable, Protocol

import h11

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
        self._conn.send(status_line(reply.status, [*reply.headers,
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
        self._conn.send(status_line(status, headers))


class Carrier(Protocol):
    """What a Response needs of its connection."""

    lost: bool

    def send(self, *events: h11.Event) -> None: ...

    def finished(self) -> None: ...


def status_line(status: int, headers: Headers) -> h11.Response:
    return h11.Response(status_code=status, headers=headers,
                        reason=HTTPStatus(status).phrase)


def plain(status: int, text: str, headers: Headers | None = None) -> Reply:
    """A reply of one line of text, for a person or an agent to read."""
    return Reply(status, text.encode() + b"\n",
                 [("content-type", "text/plain; charset=utf-8"), *(headers or [])])
