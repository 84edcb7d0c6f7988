"""An archive chunk's bytes gathered as they are made, and gzipped beside the making
(docs/protocol.md, Bytes in and out: `GET /archive`).

`tar -czf` runs gzip in a second process while tar reads the tree; this is the same
parallelism inside one worker. Every PIECE of tar bytes becomes a gzip member of its own,
compressed in a thread while the worker's main thread walks, reads and builds headers
(zlib releases the GIL while it deflates, so the two share the machine's cores as tar and
gzip do). Members concatenated are one gzip stream (RFC 1952 2.2), as archive.export's
chunks already were. The level is gzip's default, 6: the ratio against `tar -czf` is
then one of equal work.
"""

from __future__ import annotations

import zlib
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache

PIECE = 1 << 20  # tar bytes per gzip member: its deflate is ~30 ms, short at a chunk's end
LEVEL = 6  # gzip's default
_GZIP = 31  # wbits: a gzip header and trailer around the deflate stream


@cache
def _threads() -> ThreadPoolExecutor:
    """The worker's deflating threads, made at its first compressed export (after the
    fork, so the threads live in the worker that uses them)."""
    return ThreadPoolExecutor(2, thread_name_prefix="deflate")


def _member(data: bytes) -> bytes:
    packer = zlib.compressobj(LEVEL, zlib.DEFLATED, _GZIP)
    return packer.compress(data) + packer.flush()


class Chunk:
    """Tar bytes added in order; `size` is how many so far; `done()` gives them, gzipped
    when `gzip` (each PIECE deflated in a thread as soon as it is full)."""

    def __init__(self, gzip: bool) -> None:
        self.size = 0
        self._gzip = gzip
        self._piece = bytearray()
        self._members: list[Future[bytes]] = []

    def add(self, data: bytes) -> None:
        self._piece += data
        self.size += len(data)
        if self._gzip and len(self._piece) >= PIECE:
            self._members.append(_threads().submit(_member, bytes(self._piece)))
            self._piece.clear()

    def done(self) -> bytes:
        if not self._gzip:
            return bytes(self._piece)
        if self._piece or not self._members:
            self._members.append(_threads().submit(_member, bytes(self._piece)))
        return b"".join(member.result() for member in self._members)
