"""Regression: a response the HTTP transport could not send (h11 refusing it) was logged
with the events' repr, body included: a GET /files or a file.read answer put file
content in the log (docs/protocol.md, Running many: Logs: never file content). The line
says what was to go (kinds, status, lengths), never the bytes."""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any

import h11
import pytest

from chorus_tools.rpc.wire.http_conn import Connection
from chorus_tools.rpc.wire.http_options import HttpOptions

CANARY = b"CANARY-5e1d-file-content"


class _Transport(asyncio.Transport):
    def __init__(self, sock: socket.socket) -> None:
        super().__init__()
        self._sock = sock
        self.written = b""
        self.closed = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._sock if name == "socket" else default

    def write(self, data: Any) -> None:
        self.written += bytes(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True


def test_a_response_that_cannot_be_sent_is_logged_without_its_body(
        caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> _Transport:
        ours, theirs = socket.socketpair()
        with ours, theirs:
            conn = Connection(None, HttpOptions("127.0.0.1", 0, None, 1 << 20),  # type: ignore[arg-type]
                              set(), lambda: False, lambda _: None)
            transport = _Transport(ours)
            conn.connection_made(transport)
            # more body than the head declared: h11 refuses it, as it refused any body
            # after a HEAD (tests/e2e/test_e2e_http_head.py)
            conn.send(h11.Response(status_code=200, headers=[("content-length", "3")]),
                      h11.Data(data=CANARY), h11.EndOfMessage())
            return transport

    with caplog.at_level(logging.ERROR, logger="chorus.http"):
        transport = asyncio.run(main())
    assert transport.written == b"" and transport.closed
    assert "cannot send Response 200, Data (24 bytes), EndOfMessage" in caplog.text
    assert CANARY.decode() not in caplog.text
