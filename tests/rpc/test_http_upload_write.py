"""How a PUT's pieces reach the spool (rpc/wire/http_upload.py `_write`): past the page
cache (O_DIRECT) from page-aligned buffers, the last piece's unaligned tail through the
cache, and a piece the file system refuses to take directly (EINVAL: here a buffer that
is not aligned, for real) through the cache too; the bytes land right in every case."""

from __future__ import annotations

import fcntl
import mmap
import os
from pathlib import Path

from chorus_tools.rpc.wire.http_upload import _write
from chorus_tools.tools.bytes.direct import ALIGN, set_direct


def _direct(fd: int) -> bool:
    return bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_DIRECT)


def _aligned(data: bytes) -> memoryview:
    buffer = mmap.mmap(-1, len(data))
    buffer[:] = data
    return memoryview(buffer)


def test_aligned_pieces_go_direct_and_the_tail_through_the_cache(tmp_path: Path) -> None:
    first, last = os.urandom(2 * ALIGN), os.urandom(3 * ALIGN + 100)
    fd = os.open(tmp_path / "data", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        assert set_direct(fd, True)  # ext4 and tmpfs take O_DIRECT on this machine
        _write(fd, [_aligned(first)], 0, "f", direct=True)
        assert _direct(fd)  # a whole aligned piece keeps it
        _write(fd, [_aligned(last)], len(first), "f", direct=True)
        assert not _direct(fd)  # the tail turned the descriptor back to the cache
    finally:
        os.close(fd)
    assert (tmp_path / "data").read_bytes() == first + last


def test_a_piece_refused_direct_goes_through_the_cache(tmp_path: Path) -> None:
    data = os.urandom(4 * ALIGN)
    skewed = memoryview(bytearray(len(data) + 1))[1:]  # one byte off any page: EINVAL
    skewed[:] = data
    later = os.urandom(ALIGN)
    fd = os.open(tmp_path / "data", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        assert set_direct(fd, True)
        _write(fd, [skewed], 0, "f", direct=True)
        assert not _direct(fd)
        _write(fd, [_aligned(later)], len(data), "f", direct=True)  # the cache from now on
    finally:
        os.close(fd)
    assert (tmp_path / "data").read_bytes() == data + later
