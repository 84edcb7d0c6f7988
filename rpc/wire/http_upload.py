"""A request body streamed into an upload (docs/protocol.md, Bytes in and out): the body of
`PUT /files` and `PUT /archive`, written in order into the spool whose descriptor
`file.upload_stream` hands (tools/bytes/handoff.py), hashed on the way, then committed.

The bytes cross this process once, at the speed of the slowest of three things done at
once: reading the socket (the event loop), SHA-256 (one thread) and writing the spool
(another thread). hashlib and pwrite let go of the GIL, so on two CPUs the three overlap;
a bare server doing them one after the other is the floor the benchmarks hold us to.

- A body of known length (Content-Length) is read from the socket straight into DEPTH
  buffers of PIECE bytes, reused (rpc/wire/http_raw.py: h11 framed it, then steps aside);
  a full buffer goes to the hash and the write while the next fills, and is filled again
  once both are done with it. Memory: DEPTH × PIECE, whatever the body's size. The
  buffers are page-aligned, so a body of a PIECE or more is written past the page cache
  (O_DIRECT): the disk takes each piece from the buffer as it is written, where a write
  to the cache would copy it once more (a third of the server's CPU for 1 GiB) and leave
  the whole body for the commit's fsync. Only the last piece's tail, not a multiple of
  ALIGN, goes through the cache; a file system that refuses O_DIRECT gets every piece
  through the cache instead.
- A piece written through the cache is started on its way to the disk at once
  (`_write_out`), so the commit's fsync waits for the last pieces only.
- A chunked body is taken as h11 parses it, CHUNK bytes at a time, the spool given STEP
  more room whenever it fills (the quota refuses only bytes that were sent).
- The body's digest goes with the last `file.upload_stream` (`written_sha256`), so the
  commit never reads the spool again.
An upload not committed is aborted: nothing lands, no spool stays.
"""

from __future__ import annotations

import asyncio
import ctypes
import fcntl
import hashlib
import mmap
import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Sequence

from chorus_tools.rpc.dispatch.dispatcher import Dispatcher
from chorus_tools.rpc.process.descriptors import Handed
from chorus_tools.rpc.wire.errors import wire_error
from chorus_tools.rpc.wire.http_calls import Failed, call, internal
from chorus_tools.rpc.wire.http_message import BodyStream, Head, Response
from chorus_tools.tools.bytes.direct import ALIGN, set_direct, write_direct
from chorus_tools.tools.bytes.handoff import UPLOAD_STREAM
from chorus_tools.tools.errors import from_os_error

PIECE = 4 << 20  # one read of a body of known length, then one hash and one write
DEPTH = 4  # pieces in flight: read ahead while the oldest are hashed and written
CHUNK = 1 << 20  # one take of a chunked body
STEP = 16 << 20  # the room a body of unknown length is given at a time
_IOV_MAX = os.sysconf("SC_IOV_MAX")  # the most pieces one pwritev takes
_LIBC = ctypes.CDLL(None, use_errno=True)
_SYNC_FILE_RANGE_WRITE = 2  # linux/fs.h: start writing dirty pages out, wait for nothing


async def upload_body(dispatcher: Dispatcher, head: Head, out: Response,
                      begin: tuple[str, dict[str, Any]], finish: str) -> dict[str, Any] | None:
    """A streamed body into an upload (`begin`, the body, then `finish`), or None once a
    failure was answered (nothing is said to a client that went away, or was answered
    408)."""
    stream = head.stream
    assert stream is not None
    upload = None
    try:
        upload = (await call(dispatcher, *begin))["upload_id"]
        await _receive(dispatcher, upload, stream, body_length(head),
                       begin[1].get("path", ""))
        done = await call(dispatcher, finish, {"upload_id": upload})
        upload = None
        return done
    except Failed as failed:
        if upload is not None:  # gone before the client hears: nothing of it stays
            await abort_upload(dispatcher, upload)  # (docs/protocol.md, Quotas)
            upload = None
        out.whole(failed.reply())
        return None
    except ConnectionError:
        return None
    finally:
        if upload is not None:
            await abort_upload(dispatcher, upload)


def body_length(head: Head) -> int | None:
    """The body's declared length (h11 holds the body to it), or None (chunked)."""
    if "transfer-encoding" in head.headers:
        return None
    length = head.headers.get("content-length", "0")
    return int(length) if length.isdigit() else None


class _Sink:
    """The body's pieces, in order, hashed in one thread and written at their offset in
    another, while the caller reads the next; at most DEPTH pieces in flight."""

    def __init__(self, fd: int, shown: str) -> None:
        self.fd, self._shown = fd, shown
        self.offset = 0
        self.digest = hashlib.sha256()
        self._hasher = ThreadPoolExecutor(1, "put-sha256")  # one: the digest goes in order
        self._writer = ThreadPoolExecutor(1, "put-write")  # one: O_DIRECT is set in order
        self._flight: deque[asyncio.Future[Any]] = deque()
        self._direct = False

    def go_direct(self) -> None:
        """Write the pieces to come past the page cache, if the file system lets us: each
        must then be one ALIGN-aligned buffer at an ALIGN-aligned offset but the last."""
        self._direct = set_direct(self.fd, True)

    def put(self, pieces: Sequence[bytes | memoryview]) -> None:
        """Hash and write `pieces` (they must stay as they are until `room` says so)."""
        loop = asyncio.get_running_loop()
        self._flight.append(asyncio.gather(
            loop.run_in_executor(self._hasher, _hash, self.digest, pieces),
            loop.run_in_executor(self._writer, _write, self.fd, pieces, self.offset,
                                 self._shown, self._direct)))
        self.offset += sum(map(len, pieces))

    async def room(self) -> None:
        """Until fewer than DEPTH pieces are in flight: the oldest one's buffer is free."""
        while len(self._flight) >= DEPTH:
            await self._flight.popleft()

    async def settle(self) -> None:
        """Until every piece is hashed and written; the first failure, once all are."""
        flight, self._flight = list(self._flight), deque()
        for failure in await asyncio.gather(*flight, return_exceptions=True):
            if isinstance(failure, BaseException):
                raise failure

    def close(self) -> None:
        self._hasher.shutdown(wait=False)
        self._writer.shutdown(wait=False)


async def _receive(dispatcher: Dispatcher, upload: str, stream: BodyStream,
                   length: int | None, shown: str) -> None:
    """The body written into the upload's data, its SHA-256 said with the last
    `file.upload_stream`."""
    if length is None:
        spool, room = await _room_for(dispatcher, upload, 0)
    else:
        spool, room = await _stream_to(dispatcher, upload, length), length
    sink = _Sink(spool.fds[0], shown)
    try:
        if length is not None:
            await _fill_known(stream, sink, length)
        while length is None and (pieces := await stream.take(CHUNK)):
            size = sum(map(len, pieces))
            if sink.offset + size > room:  # only a body of unknown length grows
                await sink.settle()
                spool.close()
                spool, room = await _room_for(dispatcher, upload, sink.offset + size)
                sink.fd = spool.fds[0]
            await sink.room()
            sink.put(pieces)
        await sink.settle()
        spool.close()  # the room a body of unknown length did not use goes; the digest
        spool = await _stream_to(dispatcher, upload, sink.offset, sink.digest.hexdigest())
    finally:
        await asyncio.gather(sink.settle(), return_exceptions=True)  # never close the
        sink.close()  # descriptor under a write
        spool.close()


async def _fill_known(stream: BodyStream, sink: _Sink, length: int) -> None:
    """A body of known length, read PIECE bytes at a time into DEPTH reused buffers (as
    many as it needs: a small body, one), page-aligned (anonymous maps) for O_DIRECT."""
    buffers: list[memoryview] = []
    turn = 0
    if length >= PIECE:
        sink.go_direct()
    while sink.offset < length:
        await sink.room()
        if len(buffers) < DEPTH:
            buffers.append(memoryview(mmap.mmap(-1, min(PIECE, length - sink.offset))))
        view = buffers[turn % DEPTH][:min(PIECE, length - sink.offset)]
        if await stream.fill(view) < len(view):  # h11 holds a body to its length
            raise ConnectionError("the request's body ended before its length")
        sink.put([view])
        turn += 1


async def _room_for(dispatcher: Dispatcher, upload: str, needed: int) -> tuple[Handed, int]:
    """The spool with room for `needed` bytes and a STEP more, or for `needed` alone when
    the quota has no room for the step: a body is refused only for bytes it sent."""
    try:
        return await _stream_to(dispatcher, upload, needed + STEP), needed + STEP
    except Failed as failed:
        if failed.data.get("error") != "quota_exceeded":
            raise
    return await _stream_to(dispatcher, upload, needed), needed


async def _stream_to(dispatcher: Dispatcher, upload: str, size: int,
                     written_sha256: str | None = None) -> Handed:
    params: dict[str, Any] = {"upload_id": upload, "size": size}
    if written_sha256 is not None:
        params["written_sha256"] = written_sha256
    return await internal(dispatcher, UPLOAD_STREAM, params)


def _hash(digest: Any, pieces: Sequence[bytes | memoryview]) -> None:
    for piece in pieces:
        digest.update(piece)


def _write(fd: int, pieces: Sequence[bytes | memoryview], offset: int, shown: str,
           direct: bool = False) -> None:
    """The pieces one after the other at `offset`, in as few system calls as the kernel
    takes them (one, almost always), then on their way to the disk (`_write_out`).
    `direct`: one aligned piece, its aligned part written past the cache (a refusal, or
    the last piece's tail, turns the descriptor back to the cache for good)."""
    views = [memoryview(piece) for piece in pieces]
    try:
        if direct and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_DIRECT:
            sent = write_direct(fd, views[0][:len(views[0]) - len(views[0]) % ALIGN],
                                 offset)
            views[0], offset = views[0][sent:], offset + sent
            if not views[0]:
                return
            set_direct(fd, False)
    except OSError as exc:
        raise Failed(wire_error(from_os_error(exc, shown, "write_failed"))) from None
    start = offset
    try:
        while views:
            written = os.pwritev(fd, views[:_IOV_MAX], offset)
            offset += written
            while views and written >= len(views[0]):
                written -= len(views.pop(0))
            if views:
                views[0] = views[0][written:]
    except OSError as exc:
        raise Failed(wire_error(from_os_error(exc, shown, "write_failed"))) from None
    _write_out(fd, start, offset - start)


def _write_out(fd: int, offset: int, count: int) -> None:
    """Start writing these bytes to the disk now, waiting for nothing
    (sync_file_range(2), SYNC_FILE_RANGE_WRITE): the disk works while the rest of the
    body arrives, and the commit's fsync, which alone makes them durable, waits for the
    last pieces only rather than for the whole body at once. A kernel or file system
    without it (or a failure: the fsync will say) changes nothing but that head start."""
    sync_file_range = getattr(_LIBC, "sync_file_range", None)
    if sync_file_range is not None:
        sync_file_range(fd, ctypes.c_int64(offset), ctypes.c_int64(count),
                        ctypes.c_uint(_SYNC_FILE_RANGE_WRITE))


async def abort_upload(dispatcher: Dispatcher, upload: str) -> None:
    try:
        await call(dispatcher, "file.upload_abort", {"upload_id": upload})
    except Failed:
        pass  # already gone
