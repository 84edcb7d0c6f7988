"""The pool's queue of jobs not yet sent to a worker, counting the requests among them.

docs/protocol.md, Messages: `--max-pending` bounds the requests accepted and not
running; the parts of a running split call (a python-engine search, a big listing) are
that call's work and never count. The queue holds both, in arrival order; it keeps the
count of parts as jobs come and go, so the pool's busy check stays O(1) however long the
queue is.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Protocol


class _Queued(Protocol):
    part: bool


class JobQueue(deque):
    """A deque of jobs that knows how many of them are requests (not parts)."""

    def __init__(self) -> None:
        super().__init__()
        self._parts = 0

    @property
    def requests(self) -> int:
        """Queued jobs that are requests of their own (they count against max-pending)."""
        return len(self) - self._parts

    def append(self, job: _Queued) -> None:
        super().append(job)
        self._parts += job.part

    def appendleft(self, job: _Queued) -> None:
        super().appendleft(job)
        self._parts += job.part

    def popleft(self) -> Any:
        job = super().popleft()
        self._parts -= job.part
        return job

    def remove(self, job: _Queued) -> None:
        super().remove(job)
        self._parts -= job.part

    def clear(self) -> None:
        super().clear()
        self._parts = 0
