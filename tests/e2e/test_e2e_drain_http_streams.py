"""Regression: an HTTP transfer begun before SIGTERM was cut by the drain it should have
finished (docs/protocol.md, Shutdown: what is in flight finishes). A PUT /files or PUT
/archive is several calls of the server's own (its upload's begin, stream and commit),
and a GET /archive one call per chunk; the dispatcher answered every call made after the
drain began `shutting_down`, so a PUT whose body was still arriving was refused 503 at its
commit, its spool left behind (the abort was refused too), and a GET /archive stream was
cut after its first chunk. Only a request that arrives after the drain began is refused."""

from __future__ import annotations

import io
import os
import signal
import socket
import tarfile
import time
from pathlib import Path

from e2e_support import MIB, sparse_text
from http_server import HttpServer

BODY = b"0123456789abcdef" * 16384  # 256 KiB


def _draining(server: HttpServer) -> None:
    end = time.monotonic() + 15
    while b"draining" not in server.stderr:
        assert time.monotonic() < end, server.stderr
        time.sleep(0.01)


def _spools(root: Path) -> list[str]:
    return [name for name in os.listdir(root) if name.startswith(".chorus-tmp-")]


def _connect(server: HttpServer) -> socket.socket:
    host, port = server.base.removeprefix("http://").rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=30)


def _response(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    chunks = []
    while data := sock.recv(1 << 16):
        chunks.append(data)
    return b"".join(chunks)


def _put_across_the_signal(server: HttpServer, root: Path, target: str,
                           body: bytes) -> bytes:
    """Send a PUT's head and half its body, SIGTERM the server once its upload has begun
    (the spool is there), then the rest: its whole response."""
    with _connect(server) as sock:
        sock.sendall(f"PUT {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                     f"Content-Length: {len(body)}\r\n\r\n".encode() + body[:len(body) // 2])
        end = time.monotonic() + 15
        while not _spools(root):
            assert time.monotonic() < end
            time.sleep(0.01)
        server.proc.send_signal(signal.SIGTERM)
        _draining(server)
        sock.sendall(body[len(body) // 2:])
        return _response(sock)


def test_a_put_files_whose_body_arrives_during_the_drain_lands(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    with HttpServer(root, "--workers", "1", "--log-level", "info") as server:
        reply = _put_across_the_signal(server, root, "/files/landed.bin", BODY)
        assert reply.startswith(b"HTTP/1.1 201"), reply[:400]
        assert server.proc.wait(30) == 0
    assert (root / "landed.bin").read_bytes() == BODY
    assert _spools(root) == []


def test_a_put_archive_whose_body_arrives_during_the_drain_lands(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    packed = io.BytesIO()
    with tarfile.open(fileobj=packed, mode="w") as tar:
        entry = tarfile.TarInfo("inside.bin")
        entry.size = len(BODY)
        tar.addfile(entry, io.BytesIO(BODY))
    with HttpServer(root, "--workers", "1", "--log-level", "info") as server:
        reply = _put_across_the_signal(server, root, "/archive/unpacked", packed.getvalue())
        assert reply.startswith(b"HTTP/1.1 200"), reply[:400]
        assert server.proc.wait(30) == 0
    assert (root / "unpacked" / "inside.bin").read_bytes() == BODY
    assert _spools(root) == []


def test_a_get_archive_streaming_when_the_drain_begins_is_sent_whole(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "big").mkdir(parents=True)
    sparse_text(root / "big" / "holes.txt", 40 * MIB)  # five chunks of the tar stream
    with HttpServer(root, "--workers", "1", "--log-level", "info") as server:
        with _connect(server) as sock:
            sock.sendall(b"GET /archive/big?format=tar HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         b"Connection: close\r\n\r\n")
            first = sock.recv(1 << 16)  # the stream has begun; the rest waits unread
            assert first.startswith(b"HTTP/1.1 200"), first[:400]
            server.proc.send_signal(signal.SIGTERM)
            _draining(server)
            reply = first + _response(sock)
        assert server.proc.wait(30) == 0
    body = reply.partition(b"\r\n\r\n")[2]
    tar = b"".join(_unchunked(body))
    with tarfile.open(fileobj=io.BytesIO(tar)) as unpacked:
        member = unpacked.getmember("holes.txt")
        assert member.size == 40 * MIB


def _unchunked(body: bytes) -> list[bytes]:
    """The pieces of a chunked transfer coding, up to its last (empty) chunk; a stream cut
    short has none and fails here."""
    pieces, rest = [], body
    while True:
        size_line, _, rest = rest.partition(b"\r\n")
        assert size_line, "the stream was cut short"
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            return pieces
        assert len(rest) >= size + 2, "the stream was cut short"
        pieces.append(rest[:size])
        rest = rest[size + 2:]
