"""One request in flight, as the dispatcher, the invoker and the MCP face all see it: the
jobs it waits on, how it was cancelled, and its channel back to the client."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from chorus_tools.rpc.mcp.progress import Progress
from chorus_tools.rpc.process.pool import Job
from chorus_tools.rpc.wire.envelope import Request
from chorus_tools.tools.errors import ToolError


@dataclass(eq=False)
class Call:
    """One request in flight: the jobs it waits on and how it was cancelled, if it was."""

    request: Request
    reply: Callable[[Any], None]  # the client's channel: the response, and notifications
    jobs: set[Job] = field(default_factory=set)
    cancelled: str | None = None  # "lsp" or "mcp"
    progress: Progress | None = None  # MCP: the call asked for progress notifications

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """A notification about this call (progress, a watch's changes), sent on its
        channel and so in its framing."""
        self.reply({"jsonrpc": "2.0", "method": method, "params": params})


def cancelled() -> ToolError:
    return ToolError("cancelled", "The request was cancelled by the client.")
