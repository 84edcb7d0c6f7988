"""The rest of a request body of known length, read from the socket straight into the
handler's own buffer (recv_into), never through h11's buffer nor asyncio's reads
(docs/protocol.md, Bytes in and out: PUT /files at the disk's speed).

h11 stays the judge of the framing: it parsed the head and said the body is
`Content-Length` bytes (its ContentLengthReader); only then does the connection
(rpc/wire/http_conn.py) stop reading the socket itself and hand the bytes h11 had yet
to see to this reader, exactly that many and not one more, so a request sent after the
body waits in the socket for h11. Once they are all read, the connection tells h11 they
were (the reader's count), and h11 ends the request as if it had read them: keep-alive
and the next request work as before.

Why: h11 copies every byte of a body three times (into its buffer, and twice taking it
out) into buffers allocated afresh, and asyncio reads 256 KiB at a time into new bytes;
for a 1 GiB PUT that cost more than the SHA-256 it pays for. Here the kernel copies each
byte once, into buffers the handler reuses.

The bounds hold: each read counts as the body moving (the connection's stall timer,
--http-idle-timeout), a client that goes away or resets is a ConnectionError for the
handler and the connection is closed, and a refusal (408 for a stall) fails a read that
waits."""

from __future__ import annotations

import asyncio
import os
import socket
from typing import Callable

import h11


def detach(conn: h11.Connection, fd: int, pause: Callable[[], None],
           heard: Callable[[], None], ended: Callable[[], None],
           lost: Callable[[], None]) -> RawBody | None:
    """The rest of the body `conn` is reading, to be read from the socket `fd`: only when
    h11 frames it by Content-Length (its ContentLengthReader, counting `_remaining`) and
    holds none of it unparsed; None otherwise (chunked: h11 reads it all). `pause` stops
    the connection's own reading first; once the last byte is read, h11's count is set
    to nothing left and `ended` lets h11 end the request."""
    reader = getattr(conn, "_reader", None)
    remaining = getattr(reader, "_remaining", None)
    if type(reader).__name__ != "ContentLengthReader" or not isinstance(remaining, int) \
            or remaining <= 0 or conn.their_state is not h11.SEND_BODY \
            or conn.trailing_data[0]:
        return None
    pause()

    def done() -> None:
        if getattr(conn, "_reader", None) is reader:
            reader._remaining = 0  # type: ignore[union-attr]  # h11's own count
            ended()
    return RawBody(fd, remaining, heard, done, lost)


class RawBody:
    """`remaining` bytes of a body, read from the socket `fd` (the connection's; a second
    descriptor of it is taken, as asyncio allows no reader on a transport's own).
    `heard` is called on every read that brought bytes, `done` once the last was read,
    `lost` when the client went away midway."""

    def __init__(self, fd: int, remaining: int, heard: Callable[[], None],
                 done: Callable[[], None], lost: Callable[[], None]) -> None:
        self._sock = socket.socket(fileno=os.dup(fd))
        self._sock.setblocking(False)
        self.remaining = remaining
        self._heard, self._done, self._lost = heard, done, lost
        self._waiter: asyncio.Future[None] | None = None
        self._failed = False

    async def recv_into(self, view: memoryview) -> int:
        """Read into `view` what has arrived, waiting for a first byte: how many (0 once
        the body is read whole). ConnectionError when the client went away or the
        connection was refused meanwhile."""
        if self.remaining == 0:
            return 0
        view = view[:self.remaining]
        while True:
            if self._failed:
                raise ConnectionError("the request's body was cut off")
            try:
                got = self._sock.recv_into(view)
            except BlockingIOError:
                await self._readable()
                continue
            except OSError as exc:
                self._gone()
                raise ConnectionError("the request's body was cut off") from exc
            if got == 0:
                self._gone()
                raise ConnectionError("the client closed before the body's end")
            self.remaining -= got
            self._heard()
            if self.remaining == 0:
                self._close()
                self._done()
            return got

    def fail(self) -> None:
        """The connection is refused or gone: a read waiting now, or to come, fails."""
        self._failed = True
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)
        self._close()

    async def _readable(self) -> None:
        loop = asyncio.get_running_loop()
        self._waiter = waiter = loop.create_future()
        loop.add_reader(self._sock.fileno(), lambda: waiter.done() or waiter.set_result(None))
        try:
            await waiter
        finally:
            self._waiter = None
            self._unwatch()

    def _unwatch(self) -> None:
        if self._sock.fileno() >= 0:
            asyncio.get_running_loop().remove_reader(self._sock.fileno())

    def _gone(self) -> None:
        self._failed = True
        self._close()
        self._lost()

    def _close(self) -> None:
        """The second descriptor closed, its reader removed first (never a number the
        kernel may give again while the loop still watches it)."""
        self._unwatch()
        self._sock.close()
