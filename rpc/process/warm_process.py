"""The warm tree's process (tools/warm/): forked beside the workers at start, confined as
they are (Landlock), asked by them over a Unix socket in a private directory; the server
only starts it, restarts it and ends it.

The socket is bound here, after any --user drop (so the workers, of the same user, may
connect), before the workers are forked (they learn its path from their context). While
no warm process runs, nobody holds the listening socket, so a worker's connect is refused
at once and it walks the disk. One killed by a signal is started again (after RESTART_GAP
seconds from its last start); one that exits on its own stays off: it said why in the log.
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

from chorus_tools.rpc.process.worker import become_child
from chorus_tools.tools.context import ToolContext

log = logging.getLogger("chorus.warm")
_mp = multiprocessing.get_context("fork")
RESTART_GAP = 1.0


class WarmProcess:
    def __init__(self, ctx: ToolContext, budget: int,
                 inherited: Callable[[], tuple[int, ...]],
                 ruleset: Callable[[], int | None]) -> None:
        self._ctx = ctx
        self._budget = budget
        self._inherited = inherited  # descriptors the process must close
        self._ruleset = ruleset  # the workers' Landlock domain: it enters it too
        self._dir: str | None = None
        self._listener: socket.socket | None = None
        self._process: Any = None
        self._started = float("-inf")
        self._restart: asyncio.TimerHandle | None = None

    def bind(self) -> None:
        """Make the socket the workers will ask on; they must be forked after this."""
        self._dir = tempfile.mkdtemp(prefix="chorus-warm-")
        self._ctx.warm = os.path.join(self._dir, "socket")

    def start(self) -> None:
        assert self._ctx.warm is not None, "bind() first"
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if os.path.lexists(self._ctx.warm):
            os.unlink(self._ctx.warm)
        self._listener.bind(self._ctx.warm)
        self._listener.listen(64)
        loop = asyncio.get_running_loop()
        self._started = loop.time()
        self._process = _mp.Process(
            target=warm_main, daemon=True, name="chorus-warm",
            args=(self._ctx, self._listener, self._budget, os.getpid(), self._inherited(),
                  self._ruleset()))
        self._process.start()
        self._listener.close()  # the warm process holds it alone (see the module doc)
        self._listener = None
        loop.add_reader(self._process.sentinel, self._ended)

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def close(self) -> None:
        if self._restart is not None:
            self._restart.cancel()
        self._stop()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

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
        self._restart = loop.call_later(wait, self._again)

    def _again(self) -> None:
        self._restart = None
        self.start()


def warm_main(ctx: ToolContext, listener: socket.socket, budget: int, parent_pid: int,
              close_fds: tuple[int, ...], ruleset: int | None) -> None:
    """The warm process: confined like a worker, then serving until the server ends.
    What Landlock would refuse comes first: its inotify instance (inotify_simple finds
    libc through a temporary file) and its memory's /proc file. numpy and the index load
    here only."""
    from chorus_tools.tools.warm.answers import Memory
    from chorus_tools.tools.warm.events import Events
    from chorus_tools.tools.warm.service import serve
    events, memory = Events(), Memory()
    if not become_child(parent_pid, close_fds, ruleset):
        return
    serve(ctx, listener, budget, events, memory)
