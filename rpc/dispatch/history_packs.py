"""The history's content, in append-only pack files, found by SHA-256.

A file per content cost 1.8 ms to create on this machine's ext4 under load (the create,
not the write): more than the write it kept. Appending to an open pack costs microseconds.
Each pack holds contents one after another up to PACK_SIZE (a larger content gets a pack
of its own); each server process appends to packs of its own (the name carries its start
time and a random token), so servers sharing a history never write into one file.

The pack a server appends to is made and held open before a change is allowed (`ready`,
called by the dispatcher before each mutation): a history directory that became
unwritable refuses the change then, instead of failing after it.

The byte budget is the directory's, whoever writes to it: after content is added, the
packs of every server are counted under an exclusive flock on the packs directory and the
oldest removed first, so servers sharing a history stay within it together. A content
is kept while its pack's name exists; a server whose pack another removed starts a new one.
"""

from __future__ import annotations

import fcntl
import logging
import os
import secrets
import time

from chorus_tools.rpc.dispatch.history_folder import Folder

_PACK_MIN, _PACK_MAX = 4 << 10, 64 << 20

Where = tuple[str, int, int]  # pack name, offset, size
log = logging.getLogger("chorus.history")


class Packs:
    def __init__(self, folder: Folder, budget: int) -> None:
        self._dir = folder.sub("packs")
        self._budget = budget
        self._pack_size = min(max(budget // 16, _PACK_MIN), _PACK_MAX)
        self._name: str | None = None  # the pack this server appends to, held open
        self._fd: int | None = None
        self._end = 0

    def ready(self) -> None:
        """A pack to append to: a new one when there is none, the current one is full,
        or another server's budget removed it."""
        if self._fd is not None and (self._end >= self._pack_size
                                     or os.fstat(self._fd).st_nlink == 0):
            self._let_go()
        if self._fd is None:
            self._start()

    def claim(self, size: int) -> tuple[Where, int] | None:
        """Room for `size` bytes at the end of the current pack (a new one if they would
        overflow it and one can be made), and a descriptor of it to write them with (the
        caller closes it); None if they can never fit."""
        if size > self._budget:
            return None
        if self._fd is None:
            self._start()
        elif self._end > 0 and self._end + size > self._pack_size:
            fd, name, end = self._fd, self._name, self._end
            try:
                self._start()
                os.close(fd)
            except OSError:  # the pack made before the change takes it
                self._fd, self._name, self._end = fd, name, end
        assert self._fd is not None and self._name is not None
        where = (self._name, self._end, size)
        self._end += size
        return where, os.dup(self._fd)

    def kept(self, where: Where | None) -> bool:
        """Whether that content is still there (its pack not removed by any server)."""
        if where is None:
            return False
        try:
            self._dir.stat(where[0])
        except FileNotFoundError:
            return False
        return True

    def current(self, where: Where | None) -> bool:
        """Whether that content lies in the pack this server appends to (its newest)."""
        return where is not None and where[0] == self._name

    def read(self, where: Where) -> bytes | None:
        """The content, or None when its pack was removed meanwhile."""
        name, offset, size = where
        try:
            fd = self._dir.open(name, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            data = os.pread(fd, size, offset)
        finally:
            os.close(fd)
        return data if len(data) == size else None

    def evict(self) -> None:
        """Remove the oldest packs, whoever wrote them, while the directory's packs
        exceed the budget."""
        fcntl.flock(self._dir.fd, fcntl.LOCK_EX)
        try:
            packs = self._sizes()
            total = sum(size for _, size in packs)
            for name, size in packs:
                if total <= self._budget:
                    break
                try:
                    self._dir.unlink(name)
                except FileNotFoundError:
                    pass
                total -= size
                if name == self._name:
                    self._let_go()
        finally:
            fcntl.flock(self._dir.fd, fcntl.LOCK_UN)

    def stored(self) -> int:
        """Bytes in the directory's packs (what the budget counts)."""
        return sum(size for _, size in self._sizes())

    def _sizes(self) -> list[tuple[str, int]]:
        """Every pack with its size, oldest first (names start with their birth time)."""
        out = []
        for name in sorted(self._dir.names()):
            try:
                out.append((name, self._dir.stat(name).st_size))
            except FileNotFoundError:
                continue
        return out

    def _start(self) -> None:
        name = f"{time.time_ns():016x}-{secrets.token_hex(4)}"
        self._fd = self._dir.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL)
        self._name, self._end = name, 0

    def _let_go(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
        self._fd = self._name = None
        self._end = 0

    def close(self) -> None:
        self._let_go()
        self._dir.close()
