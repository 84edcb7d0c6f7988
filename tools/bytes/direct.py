"""Writes past the page cache (O_DIRECT), for the big bytes of an upload: a `PUT /files`
body (rpc/wire/http_upload.py) and an 8 MiB `file.upload_part` (tools/bytes/spool.py).

A write to the cache copies the bytes into it, and the commit's fsync then waits for all
of them at once; a direct write has the disk take them from the buffer as it is written
(docs/benchmarks.md, put_files and upload_parts). O_DIRECT asks for ALIGN-aligned offsets,
lengths and buffers, so only a buffer's aligned head goes direct, its tail through the
cache. A file system that refuses O_DIRECT (EINVAL when it is set or at the write) gets
the bytes through the cache: the right bytes land either way, direct is only faster.
"""

from __future__ import annotations

import errno
import fcntl
import mmap
import os

ALIGN = 4096  # what O_DIRECT asks of offsets, lengths and buffers (a block, a page)


def set_direct(fd: int, on: bool) -> bool:
    """O_DIRECT set on the descriptor, or cleared: whether it is now set."""
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    try:
        fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_DIRECT if on else flags & ~os.O_DIRECT)
    except OSError:
        return False
    return on


def write_direct(fd: int, view: memoryview, offset: int) -> int:
    """`view` (aligned, at an aligned offset) written at `offset` on a descriptor with
    O_DIRECT: how much (less only when the file system refused it: EINVAL, the rest is
    the cache's)."""
    sent = 0
    try:
        while sent < len(view):
            sent += os.pwrite(fd, view[sent:], offset + sent)
    except OSError as exc:
        if exc.errno != errno.EINVAL:
            raise
    return sent


def pwrite_all(fd: int, view: memoryview, offset: int) -> None:
    """All of `view` at `offset`, however many writes that takes."""
    while view:
        written = os.pwrite(fd, view, offset)
        view, offset = view[written:], offset + written


class Staging:
    """One page-aligned buffer, reused, that a part is copied into to be written direct:
    bytes that came through a pipe sit wherever the allocator put them, and O_DIRECT takes
    only aligned buffers. The copy is one memcpy into pages already mapped, where a write
    to the cache copied the part into pages it had to find first."""

    def __init__(self) -> None:
        self._buffer: mmap.mmap | None = None

    def write(self, fd: int, data: bytes | memoryview, offset: int) -> None:
        """`data` at `offset`: its aligned head direct when `offset` is aligned and the
        file system takes it, the rest (or all of it) through the cache."""
        view = memoryview(data)
        head = len(view) - len(view) % ALIGN if offset % ALIGN == 0 else 0
        if head and set_direct(fd, True):
            try:
                staged = self._staged(view[:head])
                sent = write_direct(fd, staged, offset)
            finally:
                set_direct(fd, False)
            view, offset = view[sent:], offset + sent
        pwrite_all(fd, view, offset)

    def _staged(self, view: memoryview) -> memoryview:
        if self._buffer is None or len(self._buffer) < len(view):
            if self._buffer is not None:
                self._buffer.close()
            self._buffer = mmap.mmap(-1, len(view))
        staged = memoryview(self._buffer)[:len(view)]
        staged[:] = view
        return staged
