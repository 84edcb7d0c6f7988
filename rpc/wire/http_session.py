"""An HTTP client's session: its own dispatcher (so its MCP initialize state and its
request ids are its own; the claude set's reads are the workspace's, shared with every
transport), its own watches, and its notification stream (GET).

A notification about a request whose POST is still streaming (progress) goes on that
POST's stream; every other one (a watch's `workspace/didChange`, progress of a request
answered as plain JSON) goes on the session's GET stream. While no GET stream is open they
wait, at most BACKLOG of them (the oldest are dropped first), and go out when one opens.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

from chorus_tools.rpc.dispatch.dispatcher import Dispatcher
from chorus_tools.rpc.process.watch_service import OwnWatches
from chorus_tools.rpc.wire.envelope import dumps
from chorus_tools.rpc.wire.http_message import Response

BACKLOG = 1000
KEEP_ALIVE = 15.0  # seconds between comment lines on a quiet stream


def sse(message: Any) -> bytes:
    """One server-sent event carrying a JSON-RPC message."""
    return b"event: message\ndata: " + dumps(message) + b"\n\n"


class Session:
    def __init__(self, session_id: str | None, dispatcher: Dispatcher,
                 watches: OwnWatches) -> None:
        self.id = session_id  # None: the sessionless client (/rpc, /mcp without a session)
        self.dispatcher = dispatcher
        self.watches = watches
        self.stream: Response | None = None
        self._ended = asyncio.Event()
        self._backlog: deque[bytes] = deque(maxlen=BACKLOG)

    def notify(self, message: Any) -> None:
        """A notification for the GET stream, or for the backlog until one opens."""
        event = sse(message)
        if self.stream is not None and self.stream.open:
            self.stream.chunk(event)
        else:
            self._backlog.append(event)

    async def listen(self, out: Response, headers: list[tuple[str, str]]) -> None:
        """Serve the GET stream on `out` until the session ends or the client leaves."""
        self.stream = out
        left = asyncio.Event()
        out.on_lost = left.set
        out.stream(200, headers)
        out.chunk(b": stream open\n\n")
        while self._backlog:
            out.chunk(self._backlog.popleft())
        ended = asyncio.ensure_future(self._ended.wait())
        gone = asyncio.ensure_future(left.wait())
        try:
            while not (await asyncio.wait({ended, gone}, timeout=KEEP_ALIVE,
                                          return_when=asyncio.FIRST_COMPLETED))[0]:
                out.chunk(b": keep-alive\n\n")  # quiet streams survive proxies' timeouts
        finally:
            ended.cancel()
            gone.cancel()
            if self.stream is out:
                self.stream = None

    def end(self) -> None:
        """DELETE or shutdown: its watches stop and its stream ends."""
        self.watches.close()
        self._ended.set()
        self._backlog.clear()
