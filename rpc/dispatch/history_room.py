"""Writing into the history without ever losing a change's old content to a full disk
(docs/protocol.md, History: a full history).

Before a change, the worker reserved room on the history's disk in its spool
(tools/mutate/reserve.py): blocks for the old content it holds inline, for the log lines
and a little slack. After the change the dispatcher writes the content into a pack and
the lines into the log; if the disk is full by then (other files grew), it releases the
reservation (`Room.release`, a hole punched in the spool) and tries again, and spooled
content is moved a chunk at a time, each chunk freed from the spool as it is written.
The reservation is released in any case once the call is kept.

Also here: log lines name paths that are not UTF-8 (a file name's undecodable bytes
arrive as lone surrogates, which JSON cannot hold) by their bytes in hex.
"""

from __future__ import annotations

import asyncio
import ctypes
import errno
import os
from dataclasses import dataclass
from typing import Any

_KEEP_SIZE, _PUNCH_HOLE = 0x01, 0x02
_libc = ctypes.CDLL(None, use_errno=True)
_libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
_COPY_CHUNK = 1 << 30
_MOVE_CHUNK = 1 << 20
FULL = (errno.ENOSPC, errno.EDQUOT)


@dataclass(frozen=True)
class Lost:
    """A change made whose old content the history could not keep."""

    path: str
    errno: str


def errno_name(exc: OSError) -> str:
    return errno.errorcode.get(exc.errno or 0, str(exc.errno))


def fallocate(fd: int, mode: int, offset: int, length: int) -> None:
    if length > 0 and _libc.fallocate(fd, mode, offset, length) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def punch(fd: int, offset: int, length: int) -> None:
    """Free the blocks of a range (the file keeps its size); a file system without
    holes keeps them until the spool is closed."""
    try:
        fallocate(fd, _KEEP_SIZE | _PUNCH_HOLE, offset, length)
    except OSError as exc:
        if exc.errno != errno.EOPNOTSUPP:
            raise


class Room:
    """A call's reserved ranges in the workers' spools, released once."""

    def __init__(self, spools: tuple[int, ...], reserved: list[tuple[int, int, int]]) -> None:
        self._spools = spools
        self._reserved = list(reserved)

    def release(self) -> bool:
        """Free the reservation; False if there was none left to free."""
        freed, self._reserved = self._reserved, []
        for index, offset, length in freed:
            punch(self._spools[index], offset, length)
        return bool(freed)

    def free_spooled(self, item: dict[str, Any]) -> None:
        """Free the spool's blocks of an item's streamed content (copied, or not needed)."""
        if item.get("spool") is not None:
            index, offset = item["spool"]
            punch(self._spools[index], offset, item["bytes"])

    def retry(self, attempt: Any) -> Any:
        """`attempt()`, tried again once the reservation is freed if the disk is full."""
        try:
            return attempt()
        except OSError as exc:
            if exc.errno not in FULL or not self.release():
                raise
        return attempt()

    def spool(self, index: int) -> int:
        return self._spools[index]


def append_line(log: int, offset: int, data: bytes, room: Room | None) -> None:
    """Write `data` at the end of the log (`offset`, under the caller's lock): its blocks
    are allocated first (past the end, the size unchanged), so a full disk fails before
    a byte is written and no torn line is left."""
    def allocate() -> None:
        try:
            fallocate(log, _KEEP_SIZE, offset, len(data))
        except OSError as exc:
            if exc.errno != errno.EOPNOTSUPP:
                raise
    (room.retry(allocate) if room is not None else allocate())
    try:
        _write_at(log, data, offset)
    except OSError:
        os.ftruncate(log, offset)  # never leave part of a line
        raise


async def copy_in(item: dict[str, Any], fd: int, at: int, room: Room) -> None:
    """Write an item's content (inline, or streamed in a spool) at `at` in a pack."""
    if item["spool"] is None:
        data = item["data"]
        room.retry(lambda: _write_at(fd, data, at))
        return
    index, offset = item["spool"]
    source, size = room.spool(index), item["bytes"]
    for after_release in (False, True):  # a full disk: again once the reservation is freed
        if after_release and not room.release():
            break
        try:
            await asyncio.to_thread(_copy, source, offset, fd, at, size)
            return
        except OSError as exc:
            if exc.errno not in FULL:
                raise
    await asyncio.to_thread(_move, source, offset, fd, at, size)


def _copy(source: int, offset: int, fd: int, at: int, size: int) -> None:
    """In the kernel, off the event loop."""
    done = 0
    while done < size:
        n = os.copy_file_range(source, fd, min(_COPY_CHUNK, size - done), offset + done,
                               at + done)
        if n == 0:
            raise OSError(errno.EIO, "the spool ended early")
        done += n


def _move(source: int, offset: int, fd: int, at: int, size: int) -> None:
    """A chunk at a time, each freed from the spool before it is written to the pack:
    the content needs no more room than it already takes."""
    done = 0
    while done < size:
        length = min(_MOVE_CHUNK, size - done)
        chunk = os.pread(source, length, offset + done)
        punch(source, offset + done, length)  # only its own bytes: never a neighbour's
        _write_at(fd, chunk, at + done)
        done += length


def _write_at(fd: int, data: bytes, at: int) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, at)
        view, at = view[written:], at + written


def path_field(key: str, path: str) -> dict[str, str]:
    """A log line's path: as text, or (not UTF-8) its bytes in hex under `key` + 'x'."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return {key + "x": os.fsencode(path).hex()}
    return {key: path}


def logged_path(line: dict[str, Any], key: str) -> Any:
    if key + "x" in line:
        return os.fsdecode(bytes.fromhex(line[key + "x"]))
    return line.get(key)
