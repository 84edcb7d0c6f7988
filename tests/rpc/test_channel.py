"""The jobs channel (rpc/process/channel.py): a bare pickle stream whose large payloads go
from the object to the pipe without a joined copy, read back whole, in order, by a worker
through a buffered stream; a stream cut mid-message ends the worker's loop as EOF."""

from __future__ import annotations

import os
import threading

import pytest

from chorus_tools.rpc.process.channel import pieces, receive, write_some


def send(fd: int, message: object) -> None:
    """Every piece written, on a blocking pipe."""
    assert write_some(fd, pieces(message))


def test_messages_large_and_small_arrive_whole_and_in_order() -> None:
    part = "QUJD" * (3 << 18)  # a 3 MiB base64 string: pickle hands it to our write as is
    sent = [[(1, ("file.upload_part", {"data": part}))], [(2, ("file.read", {}))], part]
    read_end, write_end = os.pipe()  # 64 KiB: the writer blocks while the reader takes it
    writer = threading.Thread(target=lambda: [send(write_end, m) for m in sent])
    writer.start()
    with os.fdopen(read_end, "rb") as stream:
        got = [receive(stream) for _ in sent]
        writer.join()
        os.close(write_end)
        with pytest.raises(EOFError):
            receive(stream)
    assert got == sent


def test_a_message_cut_short_is_end_of_input() -> None:
    read_end, write_end = os.pipe()

    def write() -> None:
        send(write_end, {"data": "x" * 100_000})
        os.close(write_end)

    writer = threading.Thread(target=write)
    writer.start()
    whole = b""
    while chunk := os.read(read_end, 1 << 16):
        whole += chunk
    writer.join()
    os.close(read_end)
    cut_r, cut_w = os.pipe()
    os.write(cut_w, whole[:len(whole) // 2])  # under the pipe's 64 KiB: never blocks
    os.close(cut_w)
    with os.fdopen(cut_r, "rb") as cut, pytest.raises(EOFError):
        receive(cut)
