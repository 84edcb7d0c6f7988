"""MCP progress for one call that carried `_meta.progressToken` (docs/protocol.md, MCP):
once the call has run 0.5 s, `notifications/progress` goes out at most every 0.5 s.

The count is honest and cheap: the items of a split call's finished parts (files searched,
directory trees listed), which the dispatcher learns as each part ends. MCP wants
`progress` to grow with every notification, so the first tick reports what is known (0
before any part ends) and later ticks speak only when the count has grown.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

INTERVAL = 0.5  # seconds before the first notification, and at least between two


class Progress:
    def __init__(self, token: str | int | float,
                 notify: Callable[[str, dict[str, Any]], None]) -> None:
        self._token = token
        self._notify = notify  # the call's: (method, params) on its channel
        self._done = 0
        self._total: int | None = None
        self._unit = ""
        self._sent: int | None = None
        self._timer: asyncio.TimerHandle | None = None

    def start(self) -> None:
        self._timer = asyncio.get_running_loop().call_later(INTERVAL, self._tick)

    def advance(self, done: int, total: int, unit: str) -> None:
        """`done` of `total` items of `unit` are finished (reported at the next tick)."""
        self._done, self._total, self._unit = done, total, unit

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _tick(self) -> None:
        if self._sent is None or self._done > self._sent:
            params: dict[str, Any] = {"progressToken": self._token, "progress": self._done,
                                      "message": self._message()}
            if self._total is not None:
                params["total"] = self._total
            self._notify("notifications/progress", params)
            self._sent = self._done
        self._timer = asyncio.get_running_loop().call_later(INTERVAL, self._tick)

    def _message(self) -> str:
        if self._total is None:
            return "Working: nothing counted yet."
        return f"{self._done} of {self._total} {self._unit} so far."
