"""Archives over HTTP (docs/protocol.md, Bytes in and out), against `tar` on the same tree.

Rows: `GET /archive/?format=tar.gz&include_ignored=true` of the run's source tree (20k
files; 2k under --quick) read to its end, against `tar -czf - DIR > /dev/null`, one timed
run each, its result checked (a gzip came back); and `PUT /archive/{dir}` of that tree's
tar.gz into an empty directory, against `tar -xzf` into an empty directory, with history
on (the default) and with `--history 0`, so the rows say what keeping each file costs.

A PUT row is measured in paired rounds (benchmarks/paired.py `times`): `tar -xzf` of these
25k files swings 3-60 s back to back on a shared disk with whatever writeback is pending,
so one run of each side, minutes apart, said nothing. Each round times both sides, the
order alternating, each into a fresh empty directory (ours: a fresh workspace and a
server started for it, untimed, its workers' warm-up imports finished), after an untimed
sync(2) so no run pays for the writeback of the one before, the tarball in the page cache
for both (both read it every round); the row is ours' median time and the median of the
paired ratios. The import's reply is checked (it counts every file).
"""

from __future__ import annotations

import http.client
import os
import shutil
import subprocess
import tarfile
import time
from pathlib import Path

import orjson

from benchmarks import paired
from benchmarks.env import Env
from benchmarks.httpload import HttpServer
from benchmarks.report import Measure, Target
from benchmarks.rss import cpu_seconds
from benchmarks.scenarios import Scenario

_BLOCK = 1 << 20
PUT_ROUNDS, PUT_ROUNDS_QUICK = 6, 2  # paired rounds of a PUT row (--quick: the harness)
_PAIRS: dict[tuple[int, tuple[str, ...]], tuple[Measure, Measure]] = {}


def _request(server: HttpServer, method: str, path: str, body: Path | None = None
             ) -> tuple[int, bytes, float]:
    """One request; (status, the body's first chunk, seconds): a GET's body is read to
    its end and dropped, as `> /dev/null` does."""
    conn = http.client.HTTPConnection(*server.address, timeout=600)
    os.sync()
    start = time.perf_counter()
    if body is None:
        conn.request(method, path)
    else:
        with body.open("rb") as f:
            conn.request(method, path, body=f, headers={"content-length": str(
                body.stat().st_size)})
    reply = conn.getresponse()
    head = b""
    while chunk := reply.read(_BLOCK):
        head = head or chunk
    elapsed = time.perf_counter() - start
    conn.close()
    return reply.status, head, elapsed


def _files(tree: Path) -> int:
    return sum(1 for p in tree.rglob("*") if p.is_file() and not p.is_symlink())


def archive_get_ours(env: Env) -> Measure:
    server = HttpServer(env.ours_argv(env.tree), stderr=env.logs / "ours.stderr")
    try:
        status, head, seconds = _request(server, "GET",
                                         "/archive/?format=tar.gz&include_ignored=true")
    finally:
        server.close()
    if status != 200 or head[:2] != b"\x1f\x8b":
        raise RuntimeError(f"GET /archive answered {status}: {head[:200]!r}")
    return Measure("time", seconds, {"files": _files(env.tree)})


def archive_get_tar(env: Env) -> Measure:
    os.sync()
    start = time.perf_counter()
    with open("/dev/null", "wb") as sink:
        subprocess.run(["tar", "-czf", "-", "-C", str(env.tree), "."], stdout=sink,
                       check=True)
    return Measure("time", time.perf_counter() - start)


def _tarball(env: Env) -> Path:
    path = env.cache / f"archive-{env.scale.files}.tar.gz"
    if not path.exists():
        with tarfile.open(path, "w:gz") as tar:
            tar.add(env.tree, arcname=".")
    return path


def _empty(env: Env, name: str) -> Path:
    path = env.cache / name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir()
    return path


def _put_once(env: Env, options: tuple[str, ...], reply: dict[str, object]) -> float:
    """One import into a fresh, empty workspace by a server started for it (untimed);
    the reply kept in `reply`, its seconds returned."""
    tarball, ws = _tarball(env), _empty(env, "archive-put")
    server = HttpServer(env.ours_argv(ws, *options), stderr=env.logs / "ours.stderr")
    try:
        _settled(server.proc.pid)
        status, body, seconds = _request(server, "PUT", "/archive/tree", tarball)
    finally:
        server.close()
        shutil.rmtree(ws, ignore_errors=True)
    if status != 200:
        raise RuntimeError(f"PUT /archive answered {status}: {body[:300]!r}")
    reply.update(orjson.loads(body))
    return seconds


def _settled(pid: int, quiet: float = 0.02, within: float = 15.0) -> None:
    """Wait until the server's processes are idle (under `quiet` CPU seconds in a quarter
    of a second): a server just started has its workers importing every tool in the
    background (rpc/process/worker.py warm_up), 0.6 s of CPU on 2 cores that a timed
    request would share, where an orchestrator's server has long been up."""
    deadline, used = time.monotonic() + within, cpu_seconds(pid)
    while time.monotonic() < deadline:
        time.sleep(0.25)
        now = cpu_seconds(pid)
        if now - used < quiet:
            return
        used = now


def _tar_once(env: Env) -> float:
    """`tar -xzf` of the same tarball into a fresh, empty directory."""
    tarball, into = _tarball(env), _empty(env, "archive-tar-x")
    os.sync()
    start = time.perf_counter()
    subprocess.run(["tar", "-xzf", str(tarball), "-C", str(into)], check=True)
    seconds = time.perf_counter() - start
    shutil.rmtree(into, ignore_errors=True)
    return seconds


def _paired(env: Env, *options: str) -> tuple[Measure, Measure]:
    """Both sides of a PUT row, measured once per run in PUT_ROUNDS paired rounds
    (benchmarks/paired.py `times`): the runner asks for each side `rounds` times, and
    every ask gets the same pair."""
    key = (id(env), options)
    if key not in _PAIRS:
        reply: dict[str, object] = {}
        _PAIRS[key] = paired.times(lambda: _put_once(env, options, reply),
                                   lambda: _tar_once(env),
                                   PUT_ROUNDS_QUICK if env.quick else PUT_ROUNDS, reply)
    return _PAIRS[key]


def archive_put_ours(env: Env) -> Measure:
    return _paired(env)[0]


def archive_put_tar(env: Env) -> Measure:
    return _paired(env)[1]


def archive_put_no_history(env: Env) -> Measure:
    return _paired(env, "--history", "0")[0]


def archive_put_no_history_tar(env: Env) -> Measure:
    return _paired(env, "--history", "0")[1]


SCENARIOS = [
    Scenario("archive_get", "GET /archive tar.gz of {tree}", "tar -czf - DIR > /dev/null",
             Target("≤", 1.2), archive_get_ours, archive_get_tar),
    Scenario("archive_put", "PUT /archive tar.gz of {tree}, history on",
             "tar -xzf into an empty dir", Target("≤", 1.5), archive_put_ours,
             archive_put_tar),
    Scenario("archive_put_nohist", "PUT /archive tar.gz of {tree}, --history 0",
             "tar -xzf into an empty dir", Target("≤", 1.5), archive_put_no_history,
             archive_put_no_history_tar),
]
