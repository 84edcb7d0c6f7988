"""PUT /files with a Content-Length: the body read from the socket straight into the
server's buffers once h11 framed it (rpc/wire/http_raw.py), hashed and written in two
threads (rpc/wire/http_upload.py), and the digest of a file the server landed itself
handed to the commit that replaces it (tools/bytes/handoff.py `replaced_*`). Attacked
over a real socket: bytes past the length, a request pipelined behind the body, a body
that trickles (each gap under --http-idle-timeout) or stops short, a wrong
X-Content-SHA256 on a body of many pieces, a file changed by someone else between two
PUTs (its digest must then be computed, never taken from the last PUT), and a large file
replaced (held while it is renamed over, then let go)."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import h11
import httpx

from chorus_tools.tools.mutate.atomic import FREE_LATER
from e2e_support import _children, _open_files, wait_for
from http_server import HttpServer

BLOB = os.urandom((9 << 20) + 123)  # more than two of the server's 4 MiB pieces, not even


def _spools(ws: Path) -> list[str]:
    return [p.name for p in ws.iterdir() if p.name.startswith(".chorus-tmp-")]


def _connect(base: str) -> socket.socket:
    where = urlsplit(base)
    sock = socket.create_connection((where.hostname, where.port))
    sock.settimeout(30)
    return sock


def _put_head(path: str, length: int, *extra: str) -> bytes:
    lines = [f"PUT /files/{path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Length: {length}",
             *extra]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _replies(sock: socket.socket, count: int) -> list[tuple[int, bytes]]:
    """`count` responses read off `sock` (status, body), in order; each has a length."""
    out: list[tuple[int, bytes]] = []
    data = b""
    while len(out) < count:
        while b"\r\n\r\n" not in data:
            more = sock.recv(1 << 20)
            assert more, (out, data)
            data += more
        head, data = data.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, v in
                   (line.split(":", 1) for line in lines[1:])}
        length = int(headers.get("content-length", "0"))
        while len(data) < length:
            more = sock.recv(1 << 20)
            assert more, (out, len(data))
            data += more
        out.append((int(lines[0].split()[1]), data[:length]))
        data = data[length:]
    return out


def _wait_no_spool(ws: Path) -> None:
    deadline = time.monotonic() + 15
    while _spools(ws) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _spools(ws) == []


def test_a_body_of_many_pieces_lands_and_the_request_behind_it_is_answered(
        tmp_path: Path) -> None:
    """The PUT, and a GET sent right behind its body in the same write: h11 must learn the
    body was read whole, and the GET wait in the socket until then (never read as body)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    with HttpServer(ws) as server:
        sock = _connect(server.base)
        sock.sendall(_put_head("big.bin", len(BLOB)) + BLOB
                     + b"GET /files/big.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        (put_status, put_body), (get_status, got) = _replies(sock, 2)
        assert put_status == 201, put_body
        assert json.loads(put_body)["bytes_written"] == len(BLOB)
        assert (get_status, got) == (200, BLOB)
        sock.sendall(_put_head("big.bin", 5) + b"again")  # the same connection, kept alive
        assert _replies(sock, 1)[0][0] == 200
        sock.close()
    assert (ws / "big.bin").read_bytes() == b"again"
    assert _spools(ws) == []


def test_bytes_past_the_length_are_the_next_request_never_the_file(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with HttpServer(ws) as server:
        sock = _connect(server.base)
        sock.sendall(_put_head("five.bin", 5) + b"hello" + b"and more, no request\r\n\r\n")
        (status, _), (next_status, _) = _replies(sock, 2)
        assert (status, next_status) == (201, 400)
        sock.close()
    assert (ws / "five.bin").read_bytes() == b"hello"


def test_a_body_that_trickles_lands_while_each_gap_is_under_the_idle_timeout(
        tmp_path: Path) -> None:
    """Reads straight from the socket count as the body moving: a body taking three
    times --http-idle-timeout in all, never silent for half of it, lands."""
    ws = tmp_path / "ws"
    ws.mkdir()
    with HttpServer(ws, "--http-idle-timeout", "1") as server:
        sock = _connect(server.base)
        sock.sendall(_put_head("slow.bin", len(BLOB)) + BLOB[:1000])
        sent = 1000
        for _ in range(6):
            time.sleep(0.5)
            step = (len(BLOB) - sent) // 2 or len(BLOB) - sent
            sock.sendall(BLOB[sent:sent + step])
            sent += step
        sock.sendall(BLOB[sent:])
        assert _replies(sock, 1)[0][0] == 201
        sock.close()
    assert (ws / "slow.bin").read_bytes() == BLOB


def test_a_body_that_stops_short_is_cut_and_lands_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.bin").write_bytes(b"as it was")
    with HttpServer(ws, "--http-idle-timeout", "1") as server:
        stalled = _connect(server.base)  # most of the body, then silence: 408
        stalled.sendall(_put_head("f.bin", len(BLOB)) + BLOB[:-10])
        answer = b""
        while b"\r\n\r\n" not in answer:
            more = stalled.recv(4096)
            assert more, answer
            answer += more
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        stalled.close()
        closed = _connect(server.base)  # most of the body, then the client goes
        closed.sendall(_put_head("f.bin", len(BLOB)) + BLOB[:-10])
        closed.close()
        _wait_no_spool(ws)
        assert httpx.get(server.base + "/files/f.bin").content == b"as it was"
    assert (ws / "f.bin").read_bytes() == b"as it was"


def test_a_wrong_sha256_on_a_body_of_many_pieces_is_422_and_changes_nothing(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.bin").write_bytes(b"as it was")
    with HttpServer(ws) as server:
        wrong = hashlib.sha256(BLOB[:-1]).hexdigest()
        put = httpx.put(server.base + "/files/f.bin", content=BLOB, timeout=60,
                        headers={"x-content-sha256": wrong})
        assert put.status_code == 422, put.text
        assert put.json()["error"] == "verification_failed"
        right = httpx.put(server.base + "/files/f.bin", content=BLOB, timeout=60,
                          headers={"x-content-sha256": hashlib.sha256(BLOB).hexdigest()})
        assert right.status_code == 200, right.text
    assert (ws / "f.bin").read_bytes() == BLOB
    assert _spools(ws) == []


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_the_replaced_files_digest_is_the_true_one_whoever_changed_it_last(
        tmp_path: Path) -> None:
    """A PUT over a file this server landed takes that file's digest from the last PUT
    instead of reading it again; over a file someone changed since (another version),
    it must not. The records and the history say the true digests either way, for a
    file the history keeps (1 MiB) and one too large for its budget (only hashed)."""
    ws, records = tmp_path / "ws", tmp_path / "records"
    ws.mkdir()
    records.mkdir()
    small, large = BLOB[:1 << 20], BLOB[:2 << 20]
    with HttpServer(ws, "--records", str(records), "--history-bytes", str(3 << 19),
                    "--history", str(tmp_path / "history")) as server:
        for path, first in (("kept.bin", small), ("big.bin", large)):
            second, third = first[::-1], bytes(len(first))
            for content in (first, second):
                put = httpx.put(f"{server.base}/files/{path}", content=content, timeout=60)
                assert put.status_code in (200, 201), put.text
            with open(ws / path, "r+b") as f:  # someone else, in place, as they may (one
                f.write(b"changed by someone else")  # more byte: a new version even
                f.seek(0, os.SEEK_END)  # within one tick of the file system's clock)
                f.write(b"!")
            changed = (ws / path).read_bytes()
            put = httpx.put(f"{server.base}/files/{path}", content=third, timeout=60)
            assert put.status_code == 200, put.text
            lines = [json.loads(line) for line in
                     (records / "records.jsonl").read_text().splitlines()]
            befores = [r["sha256_before"] for r in lines if r.get("path") == path
                       and r["method"] == "file.upload_commit"]
            assert befores == [None, _sha(first), _sha(changed)]
            history = httpx.post(server.rpc, json={
                "jsonrpc": "2.0", "id": 1, "method": "file.history",
                "params": {"path": path}}).json()["result"]["versions"]
            assert [v["sha256"] for v in history][:2] == [_sha(changed), _sha(first)]
    assert (ws / "kept.bin").read_bytes() == bytes(1 << 20)


def test_h11_still_has_what_the_direct_body_relies_on() -> None:
    """rpc/wire/http_conn.py reads a body of known length past h11 only while h11 frames
    it with a ContentLengthReader counting `_remaining` (else h11 reads it all, slower):
    an h11 that changed this would silently cost every PUT its speed."""
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(b"PUT /x HTTP/1.1\r\nHost: a\r\nContent-Length: 7\r\n\r\nab")
    assert isinstance(conn.next_event(), h11.Request)
    reader = getattr(conn, "_reader", None)
    assert type(reader).__name__ == "ContentLengthReader"
    event = conn.next_event()
    assert isinstance(event, h11.Data) and event.data == b"ab"
    assert reader._remaining == 5  # type: ignore[union-attr]
    reader._remaining = 0  # type: ignore[union-attr]  # what the connection does
    assert isinstance(conn.next_event(), h11.EndOfMessage)
    assert conn.their_state is h11.DONE


def _tree(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        found.append(todo.pop())
        todo += _children(found[-1])
    return found


def _deleted_in(ws: Path, pid: int) -> list[str]:
    """Files beneath `ws` that some process of the server's tree holds though deleted."""
    return [name for p in _tree(pid) for name in _open_files(p)
            if name.startswith(str(ws)) and name.endswith(" (deleted)")]


def test_a_large_file_replaced_is_let_go_once_the_put_is_answered(tmp_path: Path) -> None:
    """The commit holds the large file it replaces, so the rename does not wait while the
    file system frees it (tools/mutate/atomic.py `_hold`); that hold must end: afterwards
    no process of the server keeps the replaced file, nor its space."""
    ws = tmp_path / "ws"
    ws.mkdir()
    old, new = b"o" * FREE_LATER, b"n" * FREE_LATER
    with HttpServer(ws) as server:
        for content in (old, new, old):
            put = httpx.put(server.base + "/files/big.bin", content=content, timeout=60)
            assert put.status_code in (200, 201), put.text
        wait_for(lambda: not _deleted_in(ws, server.proc.pid))
    assert (ws / "big.bin").read_bytes() == old


def test_a_disk_that_fills_under_a_direct_body_is_507_enospc_and_the_old_file_stays(
        small_fs: Path, tmp_path: Path) -> None:
    """A 2 MiB file system and a 5 MiB body: its pieces are written past the page cache,
    and the write that finds the disk full says so; nothing lands, no spool stays."""
    ws = small_fs / "ws"
    ws.mkdir()
    (ws / "f.bin").write_bytes(b"old content")
    with HttpServer(ws, "--history", str(tmp_path / "history")) as server:
        put = httpx.put(server.base + "/files/f.bin", content=BLOB[:5 << 20], timeout=60)
        assert put.status_code == 507, put.text
        assert (put.json()["error"], put.json()["errno"]) == ("write_failed", "ENOSPC")
        _wait_no_spool(ws)
        fits = httpx.put(server.base + "/files/f.bin", content=BLOB[:1 << 20], timeout=60)
        assert fits.status_code == 200, fits.text  # the space came back with the spool
    assert (ws / "f.bin").read_bytes() == BLOB[:1 << 20]
