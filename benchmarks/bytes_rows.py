"""Bytes in and out (docs/protocol.md, "Bytes in and out"): the issue-41 rows.

- `PUT /files` of a large file (1 GiB; 16 MiB under --quick) against `cp` of the same file
  on the same disk followed by an fsync (the server's commit fsyncs too), and `GET /files`
  of it against `cat FILE > /dev/null`; each with the server tree's memory growth over
  the transfers in the detail (see _timed).
- The same file uploaded in 8 MiB parts over stdio JSON-RPC (base64 in JSON) against the
  PUT: what the JSON encoding costs an orchestrator without HTTP.
- `file.read_bytes` of 1 MiB against `file.read` of a 1 MiB text file, one call at a time.

Our transfers use a raw socket (sendfile up, recv_into down) so the client costs as
little as `cp` and `cat` do; the server runs with --max-write-bytes raised to fit the file.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Callable

import pybase64

from benchmarks.env import REPO, Env
from benchmarks.httpload import HttpServer
from benchmarks.loadclient import Call, ProtocolError, StdioServer
from benchmarks.report import Measure, Target
from benchmarks.rss import peak_rss_bytes, rss_bytes, tree_pids
from benchmarks.scenarios import Scenario, _sequential_rate

MIB = 1 << 20
PART = 8 * MIB
RECEIVE = 4 * MIB  # a download's reads
WAKE = 2 * MIB  # and the bytes each one waits for


def _size(env: Env) -> int:
    return 16 * MIB if env.quick else 1024 * MIB


def _source(env: Env) -> Path:
    """Incompressible bytes of the run's size, made once and kept in the cache."""
    path = env.cache / f"bytes-{_size(env)}.bin"
    if not path.exists() or path.stat().st_size != _size(env):
        with open(path.with_suffix(".part"), "wb") as f:
            for _ in range(_size(env) // MIB):
                f.write(os.urandom(MIB))
        path.with_suffix(".part").rename(path)
    return path


def _workspace(env: Env) -> Path:
    """An empty workspace on the cache's disk (the same disk as the source and `cp`)."""
    path = env.cache / f"bytes-ws-{os.getpid()}"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir()
    return path


def _server(env: Env, workspace: Path) -> HttpServer:
    return HttpServer(env.ours_argv(workspace, "--max-write-bytes", str(2 * _size(env))),
                      cwd=REPO, stderr=env.logs / "ours.stderr")


def _tree_rss(pid: int) -> int:
    return sum(rss_bytes(p) for p in tree_pids(pid))


def _head(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """The status, headers and the bytes after them, from a reply on `sock`."""
    data = b""
    while b"\r\n\r\n" not in data:
        more = sock.recv(65536)
        if not more:
            raise ProtocolError("the server closed the connection before its reply")
        data += more
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    headers = dict((k.strip().lower(), v.strip()) for k, v in
                   (line.split(":", 1) for line in lines[1:]))
    return int(lines[0].split()[1]), headers, rest


def _put(server: HttpServer, name: str, source: Path) -> None:
    size = source.stat().st_size
    with socket.create_connection(server.address) as sock, open(source, "rb") as f:
        sock.sendall(b"PUT /files/%s HTTP/1.1\r\nHost: %s:%d\r\nContent-Length: %d\r\n\r\n"
                     % (name.encode(), server.address[0].encode(), server.address[1], size))
        sock.sendfile(f)
        status, _, _ = _head(sock)
    if status not in (200, 201):
        raise ProtocolError(f"PUT /files answered {status}")


def _get(server: HttpServer, name: str) -> int:
    """The file's bytes read and dropped: how many. The client wakes once per WAKE bytes
    received (SO_RCVLOWAT), as a bulk downloader does: woken per segment, as by default,
    a client's wake-ups cost more than the bytes on this loopback (docs/benchmarks.md,
    "A download's client")."""
    with socket.create_connection(server.address) as sock:
        sock.sendall(b"GET /files/%s HTTP/1.1\r\nHost: %s:%d\r\n\r\n"
                     % (name.encode(), server.address[0].encode(), server.address[1]))
        status, headers, rest = _head(sock)
        if status != 200:
            raise ProtocolError(f"GET /files answered {status}")
        left = int(headers["content-length"]) - len(rest)
        buffer = memoryview(bytearray(RECEIVE))
        mark = 0
        while left > 0:
            if mark != (wanted := _mark(left)):
                mark = wanted
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT, mark)
            got = sock.recv_into(buffer, min(left, RECEIVE))
            if not got:
                raise ProtocolError("GET /files ended early")
            left -= got
    return int(headers["content-length"])


def _mark(left: int) -> int:
    """The wake-up mark for a body with `left` bytes to come. Linux wakes a reader asleep
    in recv only when `mark` bytes it has not yet copied wait (or at FIN): a reader that
    copied some and sleeps for the rest would wait for ever if fewer than `mark` remain,
    so the last 2 × WAKE bytes are read as they come."""
    return WAKE if left >= 2 * WAKE else 1


def _timed(env: Env, once: Callable[[], object],
           server: StdioServer | HttpServer | None = None) -> Measure:
    """One untimed warm-up run (it starts the workers and fills the page cache), then the
    best of `rounds` timed runs (a transfer is long: the best is the one the shared machine
    disturbed least). With `server`, its tree's memory growth: the sum of each
    process's high-water mark (VmHWM, a peak no sampling misses) after the runs, less the
    tree's resident size after a first small request; an upper bound, as the processes'
    peaks need not coincide."""
    if server is not None:  # the workers started, by a request as small as one can be
        server.request("file.write_bytes", {"path": "warm.bin", "data": "AA=="})
    idle = _tree_rss(server.pid) if server else 0
    once()
    best = float("inf")
    for _ in range(max(env.scale.rounds, 1)):
        start = time.perf_counter()
        once()
        best = min(best, time.perf_counter() - start)
    detail: dict[str, object] = {"bytes": _size(env), "MB_per_s": round(_size(env) / best / 1e6)}
    if server is not None:
        peaks = sum(peak_rss_bytes(p) for p in tree_pids(server.pid))
        detail["rss_growth_MB"] = round((peaks - idle) / 1e6, 1)
    return Measure("time", best, detail)


def put_ours(env: Env) -> Measure:
    source, workspace = _source(env), _workspace(env)
    try:
        with _server(env, workspace) as server:
            return _timed(env, lambda: _put(server, "put.bin", source), server)
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


def put_cp(env: Env) -> Measure:
    source, workspace = _source(env), _workspace(env)

    def copy() -> None:
        subprocess.run(["cp", str(source), str(workspace / "copy.bin")], check=True)
        fd = os.open(workspace / "copy.bin", os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    try:
        return _timed(env, copy)
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


def get_ours(env: Env) -> Measure:
    source, workspace = _source(env), _workspace(env)
    os.link(source, workspace / "get.bin")  # the same bytes on the same disk, no copy
    try:
        with _server(env, workspace) as server:
            return _timed(env, lambda: _get(server, "get.bin"), server)
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


def get_cat(env: Env) -> Measure:
    source = _source(env)
    return _timed(env, lambda: subprocess.run(f"cat '{source}' > /dev/null", shell=True,
                                              check=True))


def parts_ours(env: Env) -> Measure:
    """The file uploaded in 8 MiB parts over stdio, then committed. The client does what
    an orchestrator would: two parts in flight (it encodes the next while the server
    takes one), each encoded by pybase64 (the server's own codec, as fast as any) and
    written into its line as it is (benchmarks/loadclient.py, `_line`)."""
    source, workspace = _source(env), _workspace(env)
    with open(source, "rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()

    def upload(server: StdioServer) -> None:
        begin = server.request("file.upload_begin",
                               {"path": "parts.bin", "size": _size(env), "sha256": digest})
        upload_id = begin["result"]["upload_id"]
        with open(source, "rb") as f:
            def part(i: int) -> Call:
                data = pybase64.b64encode(os.pread(f.fileno(), PART, i * PART))
                return "file.upload_part", {"upload_id": upload_id, "offset": i * PART,
                                            "data": data}
            server.throughput(part, -(-_size(env) // PART), in_flight=2)
        server.request("file.upload_commit", {"upload_id": upload_id})
    try:
        with env.ours(workspace, "--max-write-bytes", str(2 * _size(env))) as server:
            return _timed(env, lambda: upload(server), server)
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


def _read_rate(env: Env, method: str, name: str, content: bytes) -> Measure:
    (env.scratch / name).write_bytes(content)
    params = {"path": name, **({"length": MIB} if method == "file.read_bytes" else {})}
    with env.ours(env.scratch) as server:
        return _sequential_rate(server, lambda i: (method, params), env.scale.sequential // 10)


def read_bytes_ours(env: Env) -> Measure:
    return _read_rate(env, "file.read_bytes", "read1m.bin", os.urandom(MIB))


def read_text(env: Env) -> Measure:
    line = b"def handler(request, limit=10):  # a line of source about 64 bytes\n"
    return _read_rate(env, "file.read", "read1m.txt", (line * (MIB // len(line) + 1))[:MIB])


SCENARIOS: list[Scenario] = [
    Scenario("put_files", "PUT /files of a 1 GiB file (16 MiB --quick), peak RSS growth",
             "cp of the same file on the same disk, fsync'd", Target("≤", 1.25), put_ours,
             put_cp),
    Scenario("get_files", "GET /files of a 1 GiB file (16 MiB --quick), peak RSS growth",
             "cat FILE > /dev/null", Target("≤", 1.25), get_ours, get_cat),
    Scenario("upload_parts", "the same file in 8 MiB file.upload_part calls over stdio, "
             "two in flight",
             "PUT /files of it", Target("≤", 2.5), parts_ours, put_ours),
    Scenario("read_bytes_1m", "file.read_bytes of 1 MiB, one call at a time",
             "file.read of a 1 MiB text file", Target("≥", 0.8), read_bytes_ours, read_text),
]
