"""The floor under `/files` (docs/benchmarks.md, Bytes in and out): the least any server
pays to move a file over loopback HTTP on this machine, run as
`python -m benchmarks.bytes_floor DIR` (it prints its port, then serves one connection at
a time until killed). GET: the head, then the file by sendfile. PUT: the body read with
recv_into, written to a temp file beside the target and hashed (SHA-256, as our commit
checks and keeps it), fsynced and renamed over it. No HTTP parser, no workers, no checks:
the rows in benchmarks/bytes_stream_rows.py hold our /files to it."""

from __future__ import annotations

import hashlib
import os
import socket
import sys
from pathlib import Path

MIB = 1 << 20


def _handle(conn: socket.socket, root: Path) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        more = conn.recv(65536)
        if not more:
            return
        data += more
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    method, target = lines[0].split()[:2]
    path = root / target.removeprefix("/files/")
    if method == "GET":
        with open(path, "rb") as f:
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n"
                         % os.fstat(f.fileno()).st_size)
            conn.sendfile(f)
        return
    headers = dict(line.lower().split(":", 1) for line in lines[1:])
    left = int(headers["content-length"]) - len(rest)
    digest = hashlib.sha256(rest)
    temp = path.with_name(".floor-" + path.name)
    buffer = memoryview(bytearray(MIB))
    with open(temp, "wb", buffering=0) as f:
        f.write(rest)
        while left > 0:
            got = conn.recv_into(buffer, min(left, MIB))
            if not got:
                return
            f.write(buffer[:got])
            digest.update(buffer[:got])
            left -= got
        os.fsync(f.fileno())
    os.rename(temp, path)
    conn.sendall(b"HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")


def main() -> None:
    root = Path(sys.argv[1])
    server = socket.create_server(("127.0.0.1", 0))
    print(server.getsockname()[1], flush=True)
    while True:
        conn, _ = server.accept()
        with conn:
            _handle(conn, root)


if __name__ == "__main__":
    main()
