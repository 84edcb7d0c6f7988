"""Arrival order per path, where it matters: a call that changes a file starts only after
every earlier call on that path, and a read starts only after the earlier changes. So a
client that pipelines `write` then `read` of one file reads what it wrote, while reads of
one path, and calls on different paths, still run side by side. The key is the path as
normalised lexically; aliases through symlinks are serialized later, by the directory
lock every mutation takes.

A change of a path is also a change of everything beneath it (a directory moved or
deleted): it starts after every earlier call on a path beneath it, and a call on a path
beneath it starts after it. So `file.move a b` then `file.read b/x`, pipelined, reads
the moved file.

A mark (a checkpoint: the key MARK) changes no file: it starts after every earlier change
and every later change starts after it, while reads pass it by (as a root change it waited
for a slow search in flight, and every later call waited for it)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from chorus_tools.tools.confine.sandbox import ROOT

MARK = "\0mark"  # no path holds a NUL

@dataclass
class _Tail:
    write: asyncio.Future | None = None
    reads: set[asyncio.Future] = field(default_factory=set)  # entered since it, not left


class PathOrder:
    """Each call costs O(1) here, whatever is in flight on its path (64 pipelined reads of
    one file once cost a scan of all the others at every entry and exit); only a change
    looks at the paths beneath its own."""

    def __init__(self) -> None:
        self._tails: dict[str, _Tail] = {}
        self._mark: asyncio.Future | None = None  # the latest mark, while it runs

    def enter(self, key: str, mutating: bool) -> tuple[list[asyncio.Future], asyncio.Future]:
        """Register a call; returns the futures it must wait for, and its own, which the
        caller resolves with `leave` when the call is over."""
        mine = asyncio.get_running_loop().create_future()
        mark = [self._mark] if self._mark is not None and not self._mark.done() else []
        if key == MARK:
            self._mark = mine
            return mark + [t.write for t in self._tails.values()
                           if t.write is not None and not t.write.done()], mine
        tail = self._tails.setdefault(key, _Tail())
        before = [tail.write] if tail.write is not None and not tail.write.done() else []
        before += self._changes_above(key)
        if mutating:
            before += [*tail.reads, *self._calls_beneath(key), *mark]
            tail.write, tail.reads = mine, set()
        else:
            tail.reads.add(mine)
        return before, mine

    def _changes_above(self, key: str) -> list[asyncio.Future]:
        """The pending changes of the directories above `key`, the root's included (a
        checkpoint or a rewind is a change of the root: every later call waits for it)."""
        found = []
        root = self._tails.get(ROOT) if key != ROOT else None
        if root is not None and root.write is not None and not root.write.done():
            found.append(root.write)
        at = key.find("/")
        while at > 0:
            tail = self._tails.get(key[:at])
            if tail is not None and tail.write is not None and not tail.write.done():
                found.append(tail.write)
            at = key.find("/", at + 1)
        return found

    def _calls_beneath(self, key: str) -> list[asyncio.Future]:
        """Every pending call on a path beneath `key` (the in-flight paths are few)."""
        prefix = "" if key == ROOT else key + "/"
        return [f for k, tail in self._tails.items() if k.startswith(prefix) and k != key
                for f in [tail.write, *tail.reads] if f is not None and not f.done()]

    def leave(self, key: str, mine: asyncio.Future) -> None:
        mine.set_result(None)
        if self._mark is mine:
            self._mark = None
        tail = self._tails.get(key)
        if tail is None:
            return
        tail.reads.discard(mine)
        if not tail.reads and (tail.write is None or tail.write.done()):
            del self._tails[key]
