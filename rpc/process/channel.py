"""Messages between the dispatcher and a worker over plain pipes: outcomes as a 4-byte
length, then a pickle; jobs as the bare pickle (`pieces`, `write_some`, `receive`). The
dispatcher reads and writes without blocking and takes every complete message a read
brought (one read(2) usually brings a whole reply); the worker reads blocking, through a
buffer. Multiprocessing's Connection costs two reads per message and a pickler object per
send, which showed as a third of the dispatcher's time under load."""

from __future__ import annotations

import itertools
import os
import pickle
import struct
from collections import deque
from typing import Any, BinaryIO

_HEADER = struct.Struct("!I")
_IOV_MAX = os.sysconf("SC_IOV_MAX")  # the most pieces one writev takes


def frame(obj: Any) -> bytes:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


def pieces(obj: Any) -> deque[memoryview]:
    """`obj` as a bare pickle (no length before it: pickle delimits itself), in the pieces
    pickle wrote, for `write_some`; read back by `receive`. pickle hands a payload of 64 KiB
    or more (an 8 MiB upload part's data) as a view of the object itself, so the
    dispatcher never copies it into a pickle first (docs/benchmarks.md, upload_parts)."""
    out: deque[memoryview] = deque()
    pickle.Pickler(_Pieces(out), protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return out


def write_some(fd: int, pending: deque[memoryview]) -> bool:
    """As much of `pending` as `fd` takes now, each piece written leaving it: True once
    all is written. On a non-blocking pipe the dispatcher goes on with other work while a
    worker takes an 8 MiB job (it used to wait there, stdin unread)."""
    while pending:
        try:
            written = os.writev(fd, list(itertools.islice(pending, _IOV_MAX)))
        except BlockingIOError:
            return False
        while written and written >= len(pending[0]):
            written -= len(pending.popleft())
        if written:
            pending[0] = pending[0][written:]
    return True


class _Pieces:
    """What pickle writes to: each piece kept as it came (pickle never reuses one)."""

    def __init__(self, out: deque[memoryview]) -> None:
        self._out = out

    def write(self, data: bytes | memoryview) -> int:
        self._out.append(memoryview(data))
        return len(data)


def receive(stream: BinaryIO) -> Any:
    """The next message `pieces` made, from a blocking buffered stream; EOFError when it
    ends, even mid-message."""
    try:
        return pickle.load(stream)
    except pickle.UnpicklingError as exc:  # cut short: the dispatcher is gone
        raise EOFError(f"the channel closed mid-message ({exc})") from None


def write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def read_frame(stream: BinaryIO) -> Any:
    """The next message from a blocking buffered stream; EOFError when it ends."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError("the channel closed")
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the channel closed mid-message")
    return pickle.loads(data)


class Undecodable:
    """Stands in the place of a message that could not be unpickled (a bug: the error
    says which); the frame is consumed, so the messages after it still arrive."""

    def __init__(self, error: Exception) -> None:
        self.error = error


class FrameReader:
    """Incremental: feed what a non-blocking read returned, get the complete messages."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[Any]:
        """Every message `data` completes, in order (Undecodable for a bad one)."""
        self._buf += data
        out = []
        at = 0
        while len(self._buf) - at >= _HEADER.size:
            (size,) = _HEADER.unpack_from(self._buf, at)
            end = at + _HEADER.size + size
            if len(self._buf) < end:
                break
            try:
                out.append(pickle.loads(self._buf[at + _HEADER.size:end]))
            except Exception as exc:  # whatever unpickling raises: that frame only
                out.append(Undecodable(exc))
            at = end
        del self._buf[:at]
        return out
