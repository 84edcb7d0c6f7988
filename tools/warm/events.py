"""The warm tree's eyes: inotify on every directory, and a barrier that proves it caught up.

inotify_simple (raw inotify, read in order) rather than watchfiles: the tree needs every
event in the kernel's order, the queue's overflow reported, and a wake-up the moment its
own barrier event arrives; watchfiles hands out a debounced set of changes, which keeps
none of the three.

The barrier: one inotify instance queues all its events in the order they happened, and a
change's event is queued inside the system call that made it. So a change that completed
before a request arrived is queued before an event we cause on receiving it. That event is
an attribute change (fchmod) of a private memfd watched by the same instance: nothing is
written in the workspace, and no other process can cause it.
"""

from __future__ import annotations

import os
import time
from typing import NamedTuple

from inotify_simple import INotify, flags

DIR_MASK = (flags.CREATE | flags.DELETE | flags.MOVED_FROM | flags.MOVED_TO | flags.MODIFY
            | flags.ATTRIB | flags.DELETE_SELF | flags.MOVE_SELF | flags.ONLYDIR
            | flags.EXCL_UNLINK)  # /proc/self/fd/N is followed: to the directory opened
OVERFLOW = flags.Q_OVERFLOW
MODIFY = flags.MODIFY
IGNORED = flags.IGNORED


class Event(NamedTuple):
    wd: int
    mask: int
    name: str


class WatchLimit(Exception):
    """The kernel's inotify watch limit (fs.inotify.max_user_watches) is reached."""


LIMIT_FILE = "/proc/sys/fs/inotify/max_user_watches"


class Events:
    def __init__(self) -> None:
        """Made before the process enters Landlock, which refuses /proc/sys: the limit's
        file is opened here, and read when the limit is met."""
        self._inotify = INotify(nonblocking=True)
        self._limit = _open_limit()
        self._marker = os.memfd_create("chorus-warm-barrier")
        self._barrier_wd = self._inotify.add_watch(f"/proc/self/fd/{self._marker}",
                                                   flags.ATTRIB)

    def fileno(self) -> int:
        return self._inotify.fileno()

    def watch(self, dir_fd: int) -> int:
        """Watch the directory open as `dir_fd` (the very one that was opened, whatever
        its path is now); its watch descriptor."""
        try:
            return self._inotify.add_watch(f"/proc/self/fd/{dir_fd}", DIR_MASK)
        except OSError as exc:
            if exc.errno == 28:  # ENOSPC: out of watches
                raise WatchLimit(self.limit_text()) from None
            raise

    def unwatch(self, wd: int) -> None:
        try:
            self._inotify.rm_watch(wd)
        except OSError:
            pass  # already gone with its directory

    def read(self) -> list[Event]:
        """What is queued now, without waiting."""
        return self._convert(self._inotify.read(timeout=0))

    def barrier(self, timeout: float) -> list[Event] | None:
        """Every event queued before this call (see the module doc); None when the
        barrier's own event did not come within `timeout` seconds."""
        os.fchmod(self._marker, 0o600)
        deadline = time.monotonic() + timeout
        before: list[Event] = []
        while (left := deadline - time.monotonic()) > 0:
            batch = self._inotify.read(timeout=max(1, int(left * 1000)))
            before += self._convert(batch)  # what came with it is fresher still: kept
            if any(event.wd == self._barrier_wd for event in batch):
                return before
        return None

    def limit_text(self) -> str:
        """Why the tree is off at the watch limit, with the limit's value now."""
        if isinstance(self._limit, int):
            try:
                value = os.pread(self._limit, 64, 0).decode().strip()
                found = f"fs.inotify.max_user_watches = {value}"
            except OSError as exc:
                found = f"{LIMIT_FILE} could not be read: {exc.strerror}"
        else:
            found = self._limit
        return (f"the kernel's inotify watch limit is reached ({found}); raise it with "
                "sysctl to warm this workspace")

    def close(self) -> None:
        self._inotify.close()
        os.close(self._marker)
        if isinstance(self._limit, int):
            os.close(self._limit)

    def _convert(self, events: list) -> list[Event]:
        return [Event(e.wd, e.mask, e.name) for e in events if e.wd != self._barrier_wd]


def _open_limit() -> int | str:
    """The limit's file, open; or why it cannot be read, said plainly."""
    try:
        return os.open(LIMIT_FILE, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        return f"{LIMIT_FILE} could not be read: {exc.strerror}"
