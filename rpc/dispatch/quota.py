"""The workspace's one usage account, asked by the invoker once before a change runs
(docs/protocol.md, Quotas).

The account lives here, in the dispatcher, because the invoker is the one place every
change passes: it decides the room a change may use and books what the change added. It
never touches a file: its figures come from a worker's job (tools/mutate/quota.py
`measure`: the warm tree's totals, or a walk of the disk) and from the growth each change's
worker reports.

- Under a quota, growing changes take turns (one lock): the room handed to one is not
  handed to another until the first has booked what it used, so two concurrent writes
  cannot both use the same room. Without a quota nothing is locked, measured or booked:
  the hot path is one attribute test.
- The server counts the workspace as it starts (`prime`; or the first change or status
  does, if it comes first); later, the server's own changes are booked as they are
  reported. With the warm tree on, the figures are measured again (a cheap question: it
  keeps them current from inotify events, outside changes included) by every
  workspace.status, every read of the metrics (`recount`) and by a change when the last
  measure is older than REMEASURE seconds. Without it (--index-memory 0), changes made by
  others are not seen until the server restarts.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, AsyncIterator, Awaitable, Callable

from chorus_tools.tools.mutate.quota import GROWN, Room

MEASURE = "chorus_tools.tools.mutate.quota:measure"
REMEASURE = 0.25  # seconds a warm measure stays fresh for the changes that follow it

# runs the MEASURE job: `walk` False answers None when the warm tree cannot
Measure = Callable[[bool], Awaitable[dict[str, int] | None]]


@dataclass(frozen=True)
class QuotaFigures:
    """The four figures the metrics read (chorus_workspace_bytes/files,
    chorus_quota_bytes/files); a quota None is unlimited, usage None not measured yet."""

    workspace_bytes: int | None
    workspace_files: int | None
    quota_bytes: int | None
    quota_files: int | None


class UsageAccount:
    def __init__(self, limit_bytes: int | None = None, limit_files: int | None = None, *,
                 warm: bool = False) -> None:
        self.limit_bytes = limit_bytes
        self.limit_files = limit_files
        self.warm = warm
        self.on = limit_bytes is not None or limit_files is not None
        self.used: tuple[int, int] | None = None  # bytes, files; None until measured
        self._measured = 0.0  # monotonic time of the last measure
        self._turn = asyncio.Lock()

    def figures(self) -> QuotaFigures:
        used = self.used or (None, None)
        return QuotaFigures(used[0], used[1], self.limit_bytes, self.limit_files)

    @asynccontextmanager
    async def turn(self, measure: Measure) -> AsyncIterator[Room]:
        """The room of one change, held until it is booked (`book`)."""
        async with self._turn:
            if self.used is None or (self.warm and
                                     time.monotonic() - self._measured > REMEASURE):
                await self._measure(measure)
            assert self.used is not None
            yield Room(self.used[0], self.limit_bytes, self.used[1], self.limit_files)

    async def prime(self, measure: Measure) -> None:
        """Under a quota, count the workspace once as the server starts (docs/protocol.md,
        Quotas: a walk at start), so the figures the metrics read are the workspace's
        before any change or status asks; a change that comes meanwhile waits for this
        count instead of making its own."""
        if not self.on:
            return
        async with self._turn:
            if self.used is None:
                await self._measure(measure)

    async def recount(self, measure: Measure) -> None:
        """Bring the figures up to date for a read of the metrics, from the warm tree (a
        cheap question that sees outside changes too). While it cannot answer (being
        built), a quota's booked figures stand, and without a quota, which books
        nothing, the disk is walked. Without the warm tree, a quota's booked figures
        stand, and without a quota they stay unknown (0) rather than cost a walk a
        scrape. Never waits behind a change holding the quota's turn (the figures it
        will book stand meanwhile); one that comes during the count waits for it, and
        takes its figures as fresh."""
        if not self.warm or self._turn.locked():
            return
        async with self._turn:
            await self._measure(measure if self.on else lambda walk: measure(True))

    def book(self, ok: bool, audit: dict[str, Any] | None) -> None:
        """Add what a change's worker reported it grew (taken out of its audit record);
        a failed change changed nothing (a multi-file one put back what it made) but
        the spool it removed in any case."""
        grown = audit.pop(GROWN, None) if audit is not None else None
        if grown is not None and self.used is not None:
            self.used = ((self.used[0] + grown[0], self.used[1] + grown[1]) if ok
                         else (self.used[0] + grown[2], self.used[1]))

    async def report(self, measure: Measure) -> dict[str, Any]:
        """workspace.status's `usage` and `quota`."""
        if not self.on:
            found = await measure(True)  # nothing is booked without a quota: measure now
            assert found is not None
        else:
            async with self._turn:
                if self.used is None or self.warm:
                    await self._measure(measure)
            assert self.used is not None
            found = {"bytes": self.used[0], "files": self.used[1]}
        return {"usage": {"bytes": found["bytes"], "files": found["files"]},
                "quota": {"bytes": self.limit_bytes, "files": self.limit_files}}

    async def _measure(self, measure: Measure) -> None:
        """Count anew: a walk the first time; later only from the warm tree (while it
        cannot answer, the booked figures stand)."""
        found = await measure(self.used is None)
        if found is not None:
            self.used = (found["bytes"], found["files"])
        self._measured = time.monotonic()
