"""Arrival order per path, where it matters: a call that changes a file starts only after
every earlier call on that path, and a read starts only after the earlier changes. So a
client that pipelines `write` then `read` of one file reads what it wrote, while reads of
one path, and calls on different paths, still run side by side. The key is the path as
normalised lexically; aliases through symlinks are serialized later, by the directory
lock every mutation takes."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field


@dataclass
class _Tail:
    write: asyncio.Future | None = None
    reads: list[asyncio.Future] = field(default_factory=list)


class PathOrder:
    def __init__(self) -> None:
        self._tails: dict[str, _Tail] = {}

    def enter(self, key: str, mutating: bool) -> tuple[list[asyncio.Future], asyncio.Future]:
        """Register a call; returns the futures it must wait for, and its own, which the
        caller resolves with `leave` when the call is over."""
        tail = self._tails.setdefault(key, _Tail())
        tail.reads = [r for r in tail.reads if not r.done()]
        mine = asyncio.get_running_loop().create_future()
        before = [f for f in [tail.write] if f is not None and not f.done()]
        if mutating:
            before += tail.reads
            tail.write, tail.reads = mine, []
        else:
            tail.reads.append(mine)
        return before, mine

    def leave(self, key: str, mine: asyncio.Future) -> None:
        mine.set_result(None)
        tail = self._tails.get(key)
        if tail is not None and (tail.write is None or tail.write.done()) and all(
                r.done() for r in tail.reads):
            del self._tails[key]
