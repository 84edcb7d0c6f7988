"""Whole warm code replies answered again without a worker (docs/protocol.md, "Code by
structure": a warm code.symbols or code.references is kept until the tree changes).

A worker's reply that the warm process made whole is Encoded with the tree's stamp
(tools/encoded.py). The server keeps it by the job that asked (its target, arguments and
paths); when the same job comes again it asks the warm process for the tree's stamp now
(after the same barrier any question gets: every change made before the call is seen)
and, when it is the reply's, answers with it. The call then costs one small round trip
to the warm process instead of two hops through a worker carrying the whole reply (most
of a repeated 160 KB answer's time). It stays confined: the server reads no workspace
file, it holds a reply a worker made, and only the warm process, which watches the tree,
says it still holds. Any failure (no warm process, not current, gone, slow) is a miss:
the job runs in a worker as before.
"""

from __future__ import annotations

import asyncio
import pickle
import socket
import struct
from collections import OrderedDict
from typing import Any, Hashable

import orjson

from chorus_tools.tools.encoded import Encoded
from chorus_tools.tools.task import Task
from chorus_tools.tools.warm.client import PATIENCE

ENTRIES = 40  # replies kept at most
IDLE = 4  # connections kept open for the next question
_HEADER = struct.Struct("!i")  # multiprocessing's Connection frames (tools/warm/service.py)
_PAYLOAD = pickle.dumps(("stamp", {}), protocol=pickle.HIGHEST_PROTOCOL)
_QUESTION = _HEADER.pack(len(_PAYLOAD)) + _PAYLOAD


class WarmReplies:
    """The whole replies kept, by job, and the warm process's stamp asked for on a hit."""

    def __init__(self, path: str, limit: int) -> None:
        self._path = path  # the warm process's socket (rpc/process/warm_process.py)
        self._limit = limit  # bytes of replies kept, least recently used out
        self._items: OrderedDict[Hashable, Encoded] = OrderedDict()
        self._bytes = 0
        self._idle: list[socket.socket] = []
        self._open: set[socket.socket] = set()  # idle or asking: a fork must close them

    def put(self, task: Task, reply: Encoded) -> None:
        """Keep a worker's whole reply to `task` (one without a stamp is not kept)."""
        key = _key(task)
        if key is None or reply.stamp is None or len(reply.json) > self._limit:
            return
        self._drop(key)
        self._items[key] = reply
        self._bytes += len(reply.json)
        while self._bytes > self._limit or len(self._items) > ENTRIES:
            self._drop(next(iter(self._items)))

    async def get(self, task: Task) -> Encoded | None:
        """The reply kept for `task` if the tree is still as it was made from, else None."""
        if not self._items or task.mutating:
            return None
        key = _key(task)
        kept = None if key is None else self._items.get(key)
        if kept is None:
            return None
        stamp = await self._stamp()
        if stamp != kept.stamp:
            if stamp is not None:  # the tree changed since: it never comes back
                self._drop(key)
            return None
        self._items.move_to_end(key)
        return kept

    def fds(self) -> tuple[int, ...]:
        """The connections' descriptors (a question may be under way on one), which a
        forked child must close."""
        return tuple(sock.fileno() for sock in self._open)

    def close(self) -> None:
        for sock in self._open:
            sock.close()
        self._open.clear()
        self._idle.clear()
        self._items.clear()
        self._bytes = 0

    async def _stamp(self) -> Any:
        """The warm process's stamp now, or None (off, not current, gone, or slow)."""
        sock = self._idle.pop() if self._idle else None
        try:
            if sock is None:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
                self._open.add(sock)
                sock.setblocking(False)
                await asyncio.wait_for(asyncio.get_running_loop().sock_connect(
                    sock, self._path), PATIENCE)
            stamp = await asyncio.wait_for(_ask(sock), PATIENCE)
        except (OSError, EOFError, asyncio.TimeoutError, pickle.UnpicklingError):
            if sock is not None:
                self._hang_up(sock)
            return None
        if len(self._idle) < IDLE:
            self._idle.append(sock)
        else:
            self._hang_up(sock)
        return stamp

    def _hang_up(self, sock: socket.socket) -> None:
        self._open.discard(sock)
        sock.close()

    def _drop(self, key: Hashable) -> None:
        gone = self._items.pop(key, None)
        if gone is not None:
            self._bytes -= len(gone.json)


def _key(task: Task) -> Hashable | None:
    """What makes a job the same question: its function, arguments and paths."""
    try:
        return task.target, orjson.dumps(task.kwargs, option=orjson.OPT_SORT_KEYS), \
            tuple(sorted(task.paths.items()))
    except TypeError:  # an argument JSON cannot carry: never the same question
        return None


async def _ask(sock: socket.socket) -> Any:
    loop = asyncio.get_running_loop()
    await loop.sock_sendall(sock, _QUESTION)
    (size,) = _HEADER.unpack(await _exactly(loop, sock, _HEADER.size))
    if size < 0:  # a longer frame than a stamp ever needs
        raise EOFError("an unexpected reply")
    return pickle.loads(await _exactly(loop, sock, size))


async def _exactly(loop: asyncio.AbstractEventLoop, sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        more = await loop.sock_recv(sock, size - len(data))
        if not more:
            raise EOFError("the warm process closed the connection")
        data += more
    return data
