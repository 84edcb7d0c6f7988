"""The warm process's loop: questions from the workers, inotify's events, and the
background work of building the tree and the index, one thread, never blocking on one.

Workers connect to a Unix socket the server bound before they were forked (its path is
`ctx.warm`); each question is one pickled `(op, kwargs)` (multiprocessing's Connection
frames it) and gets one reply, None meaning "walk the disk yourself". Questions that
arrive together share one barrier. Only the server's own user may connect.
"""

from __future__ import annotations

import os
import selectors
import socket
import struct
import time
from multiprocessing.connection import Connection
from typing import Any

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.warm.answers import Memory, Warm
from chorus_tools.tools.warm.client import Pickled
from chorus_tools.tools.warm.events import Events

SLICE = 0.02  # seconds of background work between two looks at the sockets
BATCH = 0.01  # seconds inotify's events wait after the first of them, to be taken in
# together: a write makes four or five, and a burst of writes then wakes this loop once a
# batch instead of once an event. A question takes them in at once (its barrier).


def serve(ctx: ToolContext, listener: socket.socket, budget: int, events: Events,
          memory: Memory) -> None:
    warm = Warm(ctx, budget, events, memory)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, None)
    inbox = _Inbox(selector, warm)
    while True:
        waiting: list[tuple[Connection, Any]] = []
        for key, _ in selector.select(inbox.timeout(warm.wait())):
            if key.data is None:
                _accept(listener, selector)
            elif key.data is warm:
                inbox.hold()
            elif (question := _receive(key.data, selector)) is not None:
                waiting.append((key.data, question))
        inbox.take(now=bool(waiting))
        if not waiting:
            warm.work(SLICE)
            continue
        # a barrier for the questions about the tree now; a page of a selection is
        # answered from the snapshot its selection kept (tools/warm/answers.py)
        current = any(op != "page" for _, (op, _) in waiting) and warm.current()
        for conn, (op, kwargs) in waiting:
            reply = warm.answer(op, kwargs, current)
            try:
                if isinstance(reply, Pickled):  # kept pickled: tools/warm/client.py
                    conn.send_bytes(reply)
                else:
                    conn.send(reply)
            except OSError:
                _drop(conn, selector)


class _Inbox:
    """inotify's events, taken in BATCH after the first of a batch arrived."""

    def __init__(self, selector: selectors.BaseSelector, warm: Warm) -> None:
        self._selector, self._warm = selector, warm
        self._since: float | None = None
        selector.register(warm.events.fileno(), selectors.EVENT_READ, warm)

    def hold(self) -> None:
        self._since = time.monotonic()
        self._selector.unregister(self._warm.events.fileno())

    def timeout(self, wait: float | None) -> float | None:
        if self._since is None:
            return wait
        left = max(0.0, self._since + BATCH - time.monotonic())
        return left if wait is None else min(wait, left)

    def take(self, now: bool) -> None:
        if self._since is not None and (now or time.monotonic() >= self._since + BATCH):
            self._since = None
            self._warm.note()
            self._selector.register(self._warm.events.fileno(), selectors.EVENT_READ,
                                    self._warm)


def _accept(listener: socket.socket, selector: selectors.BaseSelector) -> None:
    try:
        sock, _ = listener.accept()
    except OSError:
        return
    _, uid, _ = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                    struct.calcsize("3i")))
    if uid != os.getuid():
        sock.close()
        return
    conn = Connection(sock.detach())
    selector.register(conn, selectors.EVENT_READ, conn)


def _receive(conn: Connection, selector: selectors.BaseSelector) -> Any:
    try:
        question = conn.recv()
    except (EOFError, OSError):
        _drop(conn, selector)
        return None
    return question if isinstance(question, tuple) and len(question) == 2 else None


def _drop(conn: Connection, selector: selectors.BaseSelector) -> None:
    try:
        selector.unregister(conn)
    except (KeyError, ValueError):
        pass
    conn.close()
