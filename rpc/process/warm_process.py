"""The warm tree's process (tools/warm/): asked by the workers over a Unix socket in a
private directory, confined as they are (Landlock; with --index-cache its domain adds the
records' directory); the server only starts, restarts and ends it.

It starts after the first question, so a server that never lists or searches never pays
for it. The server binds the socket (after any --user drop, before the workers fork: they
learn its path from their context) and answers every connection by closing it, which a
worker reads as "walk the disk yourself"; the first one also starts the warm process, as
soon as no job runs (the call that asked never shares the CPU with its start). That one
binds a socket of its own once its imports are done and renames it over the server's:
from then on the workers reach it, and no question ever waits for its start. It runs at a
lower priority (nice 10): building the tree must not slow today's calls much.

One killed by a signal is started again (after RESTART_GAP seconds from its last start);
meanwhile its socket refuses connections, so the workers walk the disk. One that exits on
its own stays off: it said why in the log.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import shutil
import socket
import tempfile
from typing import Any, Callable

from chorus_tools.rpc.process.worker import become_child, name_process
from chorus_tools.tools.confine.workers import worker_ruleset
from chorus_tools.tools.context import ToolContext

log = logging.getLogger("chorus.warm")
_mp = multiprocessing.get_context("fork")
RESTART_GAP = 1.0
IDLE_POLL = 0.01  # seconds between two looks at the pool before a start
IDLE_WAIT = 2.0


class WarmProcess:
    def __init__(self, ctx: ToolContext, budget: int,
                 inherited: Callable[[], tuple[int, ...]],
                 ruleset: Callable[[], int | None], idle: Callable[[], bool]) -> None:
        self._ctx = ctx
        self._budget = budget
        self._idle = idle  # no job runs: the moment to start
        self._inherited = inherited  # descriptors the process must close
        self._ruleset = ruleset  # the workers' Landlock domain: it enters it too
        self._dir: str | None = None
        self._door: socket.socket | None = None  # the server's socket (module doc)
        self._process: Any = None
        self._started = float("-inf")
        self._asked = float("-inf")  # when a start was first wanted
        self._pending: asyncio.Handle | None = None  # a start scheduled

    def bind(self) -> int:
        """Make the socket the workers will ask on (they must fork after this); its
        descriptor, which children must close."""
        self._dir = tempfile.mkdtemp(prefix="chorus-warm-")
        self._ctx.warm = os.path.join(self._dir, "socket")
        self._door = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._door.bind(self._ctx.warm)
        self._door.listen(64)
        self._door.setblocking(False)
        asyncio.get_running_loop().add_reader(self._door.fileno(), self._knock)
        return self._door.fileno()

    def state(self) -> str:
        """`warm` while the warm process runs, else `cold` (calls walk the disk)."""
        return "warm" if self._process is not None else "cold"

    def close(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
        self._stop()
        if self._door is not None:
            asyncio.get_running_loop().remove_reader(self._door.fileno())
            self._door.close()
            self._door = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def _knock(self) -> None:
        assert self._door is not None
        try:
            conn, _ = self._door.accept()
        except OSError:
            return
        conn.close()  # not warm yet: the worker walks the disk
        if self._process is None and self._pending is None:
            self._asked = asyncio.get_running_loop().time()
            self._pending = asyncio.get_running_loop().call_soon(self._start_when_idle)

    def _start_when_idle(self) -> None:
        """Start once no job runs, or after IDLE_WAIT seconds of a server never idle."""
        loop = asyncio.get_running_loop()
        if not self._idle() and loop.time() < self._asked + IDLE_WAIT:
            self._pending = loop.call_later(IDLE_POLL, self._start_when_idle)
            return
        self._pending = None
        self._start()

    def _start(self) -> None:
        loop = asyncio.get_running_loop()
        self._started = loop.time()
        # --index-cache: a domain of its own, the workers' and the records' directory
        own = (worker_ruleset(self._ctx, warm=True)
               if self._ctx.index_cache is not None and self._ruleset() is not None else None)
        self._process = _mp.Process(
            target=warm_main, daemon=True, name="chorus-warm",
            args=(self._ctx, self._budget, os.getpid(), self._inherited(),
                  self._ruleset() if own is None else own))
        self._process.start()
        if own is not None:
            os.close(own)
        loop.add_reader(self._process.sentinel, self._ended)

    def _stop(self) -> None:
        if self._process is None:
            return
        asyncio.get_running_loop().remove_reader(self._process.sentinel)
        self._process.kill()
        self._process.join(1.0)
        self._process = None

    def _ended(self) -> None:
        process = self._process
        self._stop()
        if process.exitcode is None or process.exitcode >= 0:
            log.warning("the warm process exited (code %s): every call walks the disk",
                        process.exitcode)
            return
        log.warning("the warm process was killed (signal %s): it starts again",
                    -process.exitcode)
        loop = asyncio.get_running_loop()
        wait = max(0.0, self._started + RESTART_GAP - loop.time())
        self._pending = loop.call_later(wait, self._again)

    def _again(self) -> None:
        self._pending = None
        self._asked = asyncio.get_running_loop().time()
        self._start_when_idle()


def warm_main(ctx: ToolContext, budget: int, parent_pid: int, close_fds: tuple[int, ...],
              ruleset: int | None) -> None:
    """The warm process: confined like a worker, then serving until the server ends.
    What Landlock would refuse comes first: its inotify instance (inotify_simple finds
    libc through a temporary file) with the watch limit's /proc/sys file, its memory's
    /proc file and its socket (outside the workspace). numpy and the index load here only."""
    name_process("chorus-warm")
    from chorus_tools.tools.warm.answers import Memory
    from chorus_tools.tools.warm.events import Events
    from chorus_tools.tools.warm.service import serve
    assert ctx.warm is not None
    os.nice(10)
    events, memory = Events(), Memory()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    staged = f"{ctx.warm}.{os.getpid()}"
    listener.bind(staged)
    listener.listen(64)
    os.rename(staged, ctx.warm)  # the workers reach this one from now on
    if not become_child(parent_pid, close_fds, ruleset):
        return
    serve(ctx, listener, budget, events, memory)
