"""GET and PUT /files/{path} as the server moves the bytes itself (docs/protocol.md, Bytes
in and out): a worker opens the file or the spool and hands the descriptor over, the
server process sends it with sendfile or writes the body into it. Attacked for real: a
file replaced or changed in place mid-transfer, a connection dropped once the spool was
handed over, a body of unknown length, the quota, --deny and --read-only, and no
descriptor left open in any server process after many transfers."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from http_server import HttpServer

BLOB = os.urandom(20 << 20)


def _spools(ws: Path) -> list[str]:
    return [p.name for p in ws.iterdir() if p.name.startswith(".chorus-tmp-")]


def _connect(base: str, rcvbuf: int = 1 << 16) -> socket.socket:
    where = urlsplit(base)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)  # the server must wait
    sock.settimeout(30)
    sock.connect((where.hostname, where.port))
    return sock


def _head(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        more = sock.recv(65536)
        assert more, "closed before the head"
        data += more
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in
               (line.split(":", 1) for line in lines[1:])}
    return int(lines[0].split()[1]), headers, rest


def _start_get(base: str, path: str) -> tuple[socket.socket, dict[str, str], bytes]:
    """A GET whose body is read only 1 MiB so far: the rest waits in the server."""
    sock = _connect(base)
    sock.sendall(f"GET /files/{path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    status, headers, body = _head(sock)
    assert status == 200
    while len(body) < 1 << 20:
        body += sock.recv(65536)
    return sock, headers, body


def _rest(sock: socket.socket, body: bytes) -> bytes:
    while more := sock.recv(1 << 20):
        body += more
    sock.close()
    return body


def test_a_get_sends_the_version_it_named_though_the_file_is_replaced_midway(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.bin").write_bytes(BLOB)
    with HttpServer(ws) as server:
        sock, headers, body = _start_get(server.base, "f.bin")
        put = httpx.put(server.base + "/files/f.bin", content=b"new", timeout=60)
        assert put.status_code == 200
        sock.settimeout(5)
        body = body + _read_exactly(sock, len(BLOB) - len(body))
        assert body == BLOB  # all of the old version, nothing of the new
        assert headers["etag"] != put.headers["etag"]
        assert httpx.get(server.base + "/files/f.bin").content == b"new"
        sock.close()


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    got = bytearray()
    while len(got) < n:
        more = sock.recv(min(n - len(got), 1 << 20))
        assert more, f"the body ended {n - len(got)} bytes short"
        got += more
    return bytes(got)


def test_a_get_of_a_file_changed_in_place_midway_never_ends_whole(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.bin").write_bytes(BLOB)
    with HttpServer(ws) as server:
        for change in ("write", "truncate"):
            sock, headers, body = _start_get(server.base, "f.bin")
            with open(ws / "f.bin", "r+b") as f:  # in place: the open inode itself
                if change == "write":
                    f.seek(len(BLOB) // 2)
                    f.write(b"X" * 100)
                else:
                    f.truncate(len(BLOB) // 2)
            body = _rest(sock, body)
            assert len(body) < int(headers["content-length"]), change
            (ws / "f.bin").write_bytes(BLOB)


def test_a_body_of_unknown_length_lands_whole_at_its_length(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with HttpServer(ws) as server:
        def chunks():  # no Content-Length: chunked, past one step of room (16 MiB)
            for at in range(0, len(BLOB), 3 << 20):
                yield BLOB[at:at + (3 << 20)]
        put = httpx.put(server.base + "/files/u.bin", content=chunks(), timeout=60,
                        headers={"x-content-sha256": hashlib.sha256(BLOB).hexdigest()})
        assert put.status_code == 201, put.text
        assert put.json()["bytes_written"] == len(BLOB)
        empty = httpx.put(server.base + "/files/e.bin", content=iter([b""]), timeout=60)
        assert empty.status_code == 201, empty.text
        got = httpx.get(server.base + "/files/e.bin")
        assert (got.status_code, got.content, got.headers["content-length"]) == (200, b"", "0")
        tiny = [BLOB[at:at + 100] for at in range(0, 300_000, 100)]  # more than IOV_MAX
        many = httpx.put(server.base + "/files/m.bin", content=iter(tiny), timeout=60)
        assert many.status_code == 201, many.text
    assert (ws / "u.bin").read_bytes() == BLOB
    assert (ws / "e.bin").read_bytes() == b""
    assert (ws / "m.bin").read_bytes() == BLOB[:300_000]
    assert _spools(ws) == []


def test_quota_deny_and_read_only_hold_for_the_streamed_transfers(tmp_path: Path) -> None:
    ws, records = tmp_path / "ws", tmp_path / "records"
    ws.mkdir()
    records.mkdir()
    (ws / "secret.key").write_bytes(b"k3y")
    with HttpServer(ws, "--quota-bytes", "8M", "--deny", "*.key",
                    "--records", str(records)) as server:
        over = httpx.put(server.base + "/files/big.bin", content=BLOB, timeout=60)
        assert over.status_code == 507 and over.json()["error"] == "quota_exceeded"
        for chunked in (False, True):  # refused at its first step of room, or its length
            body = iter([BLOB[:4 << 20]] * 5) if chunked else BLOB
            refused = httpx.put(server.base + "/files/big.bin", content=body, timeout=60)
            assert refused.status_code == 507, refused.text
        denied = httpx.get(server.base + "/files/secret.key")
        assert denied.status_code == 403 and b"k3y" not in denied.content
        ok = httpx.put(server.base + "/files/small.bin", content=BLOB[:1 << 20], timeout=60)
        assert ok.status_code == 201
    assert not (ws / "big.bin").exists() and _spools(ws) == []
    logged = [json.loads(line) for f in records.iterdir() for line in f.read_text().splitlines()]
    committed = [r for r in logged if r.get("method") == "file.upload_commit"
                 and r.get("outcome") == "ok"]
    assert [r["path"] for r in committed] == ["small.bin"]
    with HttpServer(ws, "--read-only") as server:
        refused = httpx.put(server.base + "/files/small.bin", content=b"x")
        assert refused.status_code == 403 and refused.json()["error"] == "permission_denied"
        assert httpx.get(server.base + "/files/small.bin").content == BLOB[:1 << 20]


def _open_fds(pid: int) -> int:
    """Descriptors open in the server process and every worker beneath it."""
    pids = [pid]
    for task in Path(f"/proc/{pid}/task").iterdir():
        pids += [int(c) for c in (task / "children").read_text().split()]
    return sum(len(os.listdir(f"/proc/{p}/fd")) for p in pids if Path(f"/proc/{p}").exists())


def test_no_descriptor_stays_open_after_many_transfers(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    blob = BLOB[:2 << 20]
    with HttpServer(ws) as server:
        assert httpx.put(server.base + "/files/f.bin", content=blob).status_code == 201
        assert httpx.get(server.base + "/files/f.bin").content == blob
        before = _open_fds(server.proc.pid)
        with httpx.Client(base_url=server.base, timeout=60) as client:
            for i in range(15):
                assert client.put(f"/files/f{i % 3}.bin", content=blob).status_code in (200, 201)
                assert client.get(f"/files/f{i % 3}.bin").content == blob
                assert client.get("/files/f.bin", headers={"range": "bytes=5-9"}
                                  ).content == blob[5:10]
                assert client.get("/files/f.bin", headers={"range": f"bytes={len(blob)}-"}
                                  ).status_code == 416
                assert client.get("/files/nope.bin").status_code == 404
                etag = client.get("/files/f.bin").headers["etag"]
                assert client.get("/files/f.bin", headers={"if-none-match": etag}
                                  ).status_code == 304
        for _ in range(3):  # and transfers cut off both ways
            sock, _, _ = _start_get(server.base, "f.bin")
            sock.close()
        deadline = time.monotonic() + 15
        while _open_fds(server.proc.pid) > before and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _open_fds(server.proc.pid) <= before
