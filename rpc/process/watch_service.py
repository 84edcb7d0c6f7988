"""workspace.watch's plumbing: watch ids, the watcher process, and the notifications.

The watcher (tools/watch/watcher.py) runs in a process of its own, forked beside the worker pool
at the first watch and killed with the server, so no job ever waits behind it. Messages
travel as the pool's do (channel.frame): to it `("add", id, spec)` and `("remove", id)`;
from it `("ready", id)` once a watch is live and `("changes", id, changes)` per batch.
Here they become `workspace/didChange` notifications, written through the same reply
channel (and so the framing) as the request that made the watch.

If the watcher process is killed (by a signal: the OOM killer, a kill -9), it is started
again and every watch is added anew, so watches still end only with the server. What
changed while no watcher ran is not known: once a watch that was live is live again it
gets one `workspace/didChange` with no changes and `resync: true`, the cue to look at the
tree afresh; a watch that was still starting just starts in the new one (its request
waits for it). A watcher that cannot take a command (it died and its end of file is not
read yet) is killed for sure, and the same happens. One killed again within RESTART_GAP
seconds of its start waits out the rest of that gap first. A watcher that exits on an
error it logged (the kernel's inotify watch limit) ends its watches instead, and a watch
still starting gets permission_denied: a new one would meet the same error.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import multiprocessing
import os
import threading
from typing import Any, Callable

from chorus_tools.rpc.process.channel import FrameReader, frame, read_frame, write_all
from chorus_tools.rpc.process.worker import become_child, name_process
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError

log = logging.getLogger("chorus.watch")
_mp = multiprocessing.get_context("fork")
DID_CHANGE = "workspace/didChange"
Send = Callable[[str, dict[str, Any]], None]  # (method, params) on the watch call's channel
RESTART_GAP = 1.0


class Watches:
    def __init__(self, ctx: ToolContext, inherited: Callable[[], tuple[int, ...]],
                 ruleset: Callable[[], int | None]) -> None:
        self._ctx = ctx
        self._inherited = inherited  # descriptors the watcher process must close
        self._ruleset = ruleset  # the workers' Landlock domain: the watcher enters it too
        self._ids = itertools.count(1)
        self._senders: dict[str, Send] = {}
        self._specs: dict[str, dict[str, Any]] = {}
        self._ready: dict[str, asyncio.Future] = {}
        self._resync: set[str] = set()  # re-added after a restart, not yet live again
        self._started = float("-inf")
        self._restart: asyncio.TimerHandle | None = None
        self._process: Any = None
        self._to = self._from = -1
        self._reader = FrameReader()
        self._closed = False  # the server is ending: no watcher starts again

    async def add(self, spec: dict[str, Any], send: Send) -> str:
        """Register a watch whose changes go to `send`; returns its id once it is live."""
        if self._closed:
            raise _ending()
        if self._process is None:
            self._start()
        watch_id = f"w{next(self._ids)}"
        ready = self._ready[watch_id] = asyncio.get_running_loop().create_future()
        self._senders[watch_id] = send
        self._specs[watch_id] = spec
        try:
            self._hand_over(watch_id)
            await ready
        except BaseException:
            self.remove(watch_id)
            raise
        return watch_id

    def remove(self, watch_id: str) -> bool:
        """Stop a watch; False when no such watch exists. No notification of it follows."""
        if self._senders.pop(watch_id, None) is None:
            return False
        self._specs.pop(watch_id, None)
        self._ready.pop(watch_id, None)
        self._resync.discard(watch_id)
        try:
            write_all(self._to, frame(("remove", watch_id)))
        except OSError:
            pass  # the watcher is gone: nothing to stop
        return True

    def close(self) -> None:
        """Watches end with the server: a watch still starting is refused, and none starts
        after (a watcher forked past this point outlived the server: its exit waited on it
        for ever)."""
        self._closed = True
        if self._restart is not None:
            self._restart.cancel()
        self._stop_process()
        for ready in self._ready.values():
            if not ready.done():
                ready.set_exception(_ending())
        self._ready.clear()
        self._senders.clear()
        self._specs.clear()

    def _stop_process(self) -> None:
        if self._process is None:
            return
        asyncio.get_running_loop().remove_reader(self._from)
        self._process.kill()
        self._process.join(1.0)
        for fd in (self._to, self._from):
            os.close(fd)
        self._process = None
        self._to = self._from = -1  # a write now fails (EBADF), never lands in a reused fd

    def _start(self) -> None:
        self._started = asyncio.get_running_loop().time()
        commands_r, self._to = os.pipe()
        self._from, events_w = os.pipe()
        self._process = _mp.Process(
            target=watcher_process, daemon=True, name="chorus-watcher",
            args=(self._ctx, commands_r, events_w, os.getpid(),
                  self._inherited() + (self._to, self._from), self._ruleset()))
        self._process.start()
        os.close(commands_r)
        os.close(events_w)
        os.set_blocking(self._from, False)
        asyncio.get_running_loop().add_reader(self._from, self._on_readable)

    def _on_readable(self) -> None:
        try:
            data = os.read(self._from, 1 << 16)
        except BlockingIOError:
            return
        if not data:
            self._died()
            return
        for kind, watch_id, *rest in self._reader.feed(data):
            if kind == "ready":
                ready = self._ready.pop(watch_id, None)
                if ready is not None and not ready.done():
                    ready.set_result(None)
                if watch_id in self._resync and (send := self._senders.get(watch_id)):
                    self._resync.discard(watch_id)
                    send(DID_CHANGE, {"watch_id": watch_id, "changes": [], "resync": True})
            elif (send := self._senders.get(watch_id)) is not None:
                send(DID_CHANGE, {"watch_id": watch_id, "changes": rest[0]})

    def _hand_over(self, watch_id: str) -> bool:
        """Send a watch to the watcher; False when it cannot take it (dead, its end of file
        not read yet, or its command reader gone): then it is killed for sure, and its end
        of file brings `_died`, which adds every watch again to a new one."""
        try:
            write_all(self._to, frame(("add", watch_id, self._specs[watch_id])))
        except OSError:
            if self._process is not None:
                self._process.kill()
            return False
        return True

    def _died(self) -> None:
        process = self._process
        self._stop_process()
        if process.exitcode is None or process.exitcode >= 0:
            log.warning("the watcher process exited (code %s); its watches ended",
                        process.exitcode)
            for watch_id, ready in self._ready.items():
                if not ready.done():
                    ready.set_exception(ToolError(
                        "permission_denied", "The watcher process stopped on an error before "
                        "this watch started (the server's log says which, usually the "
                        "kernel's inotify watch limit, fs.inotify.max_user_watches). Raise "
                        "the limit or watch a smaller directory, then retry workspace.watch.",
                        path=self._specs[watch_id]["path"]))
            self._ready.clear()
            self._senders.clear()
            self._specs.clear()
            self._resync.clear()
            return
        every = list(self._specs)
        log.warning("the watcher process was killed (signal %s); %d watches resume in a new "
                    "one", -process.exitcode, len(every))
        if every:
            wait = max(0.0, self._started + RESTART_GAP - asyncio.get_running_loop().time())
            self._restart = asyncio.get_running_loop().call_later(wait, self._resume, every)

    def _resume(self, watches: list[str]) -> None:
        """Add the watches of a killed watcher to a new one (see the module doc); one
        workspace.watch may have started it meanwhile. Those that were live resync."""
        self._restart = None
        watches = [w for w in watches if w in self._specs]
        if watches and self._process is None:
            self._start()
        for watch_id in watches:
            if watch_id not in self._ready:
                self._resync.add(watch_id)
            if not self._hand_over(watch_id):
                return  # this one died already: its end of file brings us back here


def _ending() -> ToolError:
    return ToolError("shutting_down", "The server is shutting down, and watches end with it: "
                     "watch on the server that replaces it.")


class OwnWatches:
    """One HTTP session's share of the server's watches: it ends only the watches it
    made, and they all end with it."""

    def __init__(self, watches: Watches) -> None:
        self._watches = watches
        self._ids: set[str] = set()

    async def add(self, spec: dict[str, Any], send: Send) -> str:
        watch_id = await self._watches.add(spec, send)
        self._ids.add(watch_id)
        return watch_id

    def remove(self, watch_id: str) -> bool:
        if watch_id not in self._ids:
            return False
        self._ids.discard(watch_id)
        return self._watches.remove(watch_id)

    def close(self) -> None:
        for watch_id in self._ids:
            self._watches.remove(watch_id)
        self._ids.clear()


def watcher_process(ctx: ToolContext, commands_fd: int, events_fd: int, parent_pid: int,
                    close_fds: tuple[int, ...], ruleset: int | None) -> None:
    """The watcher's process: commands read on a thread, changes watched on the main one.
    watchfiles is imported here only (28 ms): a server that never watches never pays.
    It is confined like a worker (Landlock), since it too walks the workspace."""
    name_process("chorus-watcher")
    if not become_child(parent_pid, close_fds, ruleset):
        return
    from chorus_tools.tools.watch.watcher import Watcher
    watcher = Watcher(ctx)
    lock = threading.Lock()

    def send(message: tuple) -> None:
        with lock:
            write_all(events_fd, frame(message))

    def commands() -> None:
        stream = os.fdopen(commands_fd, "rb")
        while True:
            try:
                kind, watch_id, *spec = read_frame(stream)
            except (EOFError, OSError):
                watcher.stop()
                return
            if kind == "add":
                watcher.add(watch_id, spec[0])
                send(("ready", watch_id))
            else:
                watcher.remove(watch_id)

    threading.Thread(target=commands, daemon=True).start()
    watcher.run(lambda watch_id, changes: send(("changes", watch_id, changes)))
