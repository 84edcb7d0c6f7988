"""The server's one lifecycle state (docs/protocol.md, Running many: Drain), read by the
transports (/readyz, HTTP 503 with Retry-After, stdio) and by the dispatcher, which
answers every new request `shutting_down` once the drain has begun."""

from __future__ import annotations

from chorus_tools.tools.errors import ToolError

STARTING, READY, DRAINING = "starting", "ready", "draining"


class Drain:
    """starting → ready (the worker pool is up) → draining (SIGTERM or end of input)."""

    def __init__(self, retry_after: float = 10.0) -> None:
        self.state = STARTING
        self.retry_after = retry_after  # seconds an HTTP client is told to wait
        # changes running (a write, a rewind, an upload's commit, with their history's
        # work before and after): the drain waits for them past --shutdown-timeout
        self.changes = 0

    @property
    def draining(self) -> bool:
        return self.state == DRAINING

    def ready(self) -> None:
        if self.state == STARTING:
            self.state = READY

    def begin(self) -> None:
        self.state = DRAINING

    def refusal(self) -> ToolError:
        return ToolError("shutting_down", "The server is shutting down: it finishes the "
                         "requests it has and takes no new one. Retry on another server "
                         "or after it restarts.", retry_after=int(self.retry_after))
