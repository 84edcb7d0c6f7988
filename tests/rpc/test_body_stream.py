"""BodyStream (rpc/wire/http_message.py): a streamed request body read in sizes that cut
across the chunks the socket gave, every byte once and in order, the socket paused while
more than `high` bytes wait and resumed once a read brings them down; a cut-off body is
ConnectionError, not a short read."""

from __future__ import annotations

import asyncio
import os

import pytest

from chorus_tools.rpc.wire.http_message import BodyStream


def test_reads_cut_across_chunks_keep_every_byte_and_pace_the_socket() -> None:
    body = os.urandom(10_000)
    events: list[str] = []
    stream = BodyStream(lambda: events.append("pause"), lambda: events.append("resume"),
                        high=3000)

    async def run() -> bytes:
        for at in range(0, 4000, 700):  # 4,000 bytes in 700-byte chunks: past high
            stream.feed(body[at:min(at + 700, 4000)])
        assert "pause" in events
        got = [await stream.read(1024)]
        assert events[-1] == "resume"  # 2,976 held: at most high again
        stream.feed(body[4000:])
        stream.end()
        while data := await stream.read(1024):
            assert len(data) == 1024 or len(data) == len(body) % 1024
            got.append(data)
        return b"".join(got)

    assert asyncio.run(run()) == body


def test_a_read_waits_for_its_size_and_a_cut_body_is_connection_error() -> None:
    stream = BodyStream(lambda: None, lambda: None, high=1 << 20)

    async def run() -> None:
        stream.feed(b"abc")
        waiting = asyncio.ensure_future(stream.read(5))
        await asyncio.sleep(0)
        assert not waiting.done()  # three of five bytes: it waits for the rest
        stream.feed(b"defg")
        assert await waiting == b"abcde"
        stream.fail()
        with pytest.raises(ConnectionError):
            await stream.read(5)

    asyncio.run(run())
