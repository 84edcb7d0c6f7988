"""BodyStream (rpc/wire/http_message.py): a streamed request body read in sizes that cut
across the chunks the socket gave, every byte once and in order, the socket paused while
more than `high` bytes wait and resumed once a read brings them down; a cut-off body is
ConnectionError, not a short read."""

from __future__ import annotations

import asyncio
import os
import socket

import pytest

from chorus_tools.rpc.wire.http_message import BodyStream
from chorus_tools.rpc.wire.http_raw import RawBody


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


def _direct(size: int, held: bytes
            ) -> tuple[BodyStream, socket.socket, socket.socket, list[str]]:
    """A stream holding `held`, whose rest (`size` bytes) it reads from a real socket:
    the stream, the connection's end of the socket, the client's, what was said."""
    ours, theirs = socket.socketpair()
    said: list[str] = []
    stream: BodyStream

    def detach() -> RawBody:
        said.append("detached")
        return RawBody(ours.fileno(), size, lambda: said.append("heard"), stream.end,
                       lambda: said.append("lost"))
    stream = BodyStream(lambda: None, lambda: said.append("resume"), high=1 << 20,
                        detach=detach)
    stream.feed(held)
    ours.setblocking(False)
    return stream, ours, theirs, said


def test_fill_copies_what_is_held_then_reads_the_socket_itself_to_the_length() -> None:
    body = os.urandom(150_000)
    stream, ours, theirs, said = _direct(len(body) - 1000, body[:1000])

    async def run() -> bytes:
        loop = asyncio.get_running_loop()
        sending = loop.run_in_executor(None, theirs.sendall, body[1000:] + b"NEXT REQUEST")
        buffer, got = memoryview(bytearray(40_000)), []
        while count := await stream.fill(buffer):
            got.append(bytes(buffer[:count]))
        await sending
        return b"".join(got)

    assert asyncio.run(run()) == body
    assert said[0] == "detached" and "heard" in said and "lost" not in said
    assert "resume" not in said  # the connection's own reading stays paused
    assert ours.recv(100) == b"NEXT REQUEST"  # left for h11, never read as the body
    ours.close()
    theirs.close()


def test_a_body_cut_midway_is_connection_error_and_the_connection_told() -> None:
    stream, ours, theirs, said = _direct(100_000, b"x" * 10)

    async def run() -> None:
        theirs.sendall(b"y" * 5000)
        theirs.close()
        buffer = memoryview(bytearray(200_000))
        with pytest.raises(ConnectionError):
            await stream.fill(buffer)

    asyncio.run(run())
    assert said[-1] == "lost"
    ours.close()


def test_a_refusal_wakes_a_fill_waiting_on_the_socket() -> None:
    stream, ours, theirs, said = _direct(100_000, b"")

    async def run() -> None:
        asyncio.get_running_loop().call_later(0.05, stream.fail)  # a 408, as the timer's
        with pytest.raises(ConnectionError):
            await stream.fill(memoryview(bytearray(1000)))

    asyncio.run(run())
    assert "lost" not in said
    ours.close()
    theirs.close()
