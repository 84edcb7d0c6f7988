"""Running many (docs/protocol.md, "Running many"): what counting costs the hot path, and
how fast the liveness probe answers under load.

Rows: file.read 4 KiB, 64 in flight, with the metrics counted against the same server
started `--no-metrics` (in paired rounds: benchmarks/paired.py; target ≥ 0.97×); and `GET /healthz`
p99 on fresh connections (as a kubelet probes) while 64 searches of the standard library
run over /rpc from another process (target ≤ 5 ms, absolute).
"""

from __future__ import annotations

import multiprocessing
import os
import socket
import time
from multiprocessing.synchronize import Event

from benchmarks.env import REPO, Env
from benchmarks.httpload import HttpServer
from benchmarks.loadclient import percentile
from benchmarks.report import Measure, Target
from benchmarks import paired
from benchmarks.scenarios import IN_FLIGHT, READ_4K, STDLIB_PATTERN, Scenario

PROBES = 200


def metrics_on(env: Env) -> Measure:
    """64 reads in flight on both servers, in paired rounds (benchmarks/paired.py)."""
    count = max(200, env.scale.pipelined // 4)
    return paired.measure(env, lambda: env.ours(env.scratch),
                          lambda: env.ours(env.scratch, "--no-metrics"),
                          lambda server: server.throughput(READ_4K, count, IN_FLIGHT).per_second,
                          count)


def _probe(address: tuple[str, int]) -> float:
    """One GET /healthz on a new connection: seconds to the whole answer."""
    start = time.perf_counter()
    with socket.create_connection(address, timeout=30) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answer = b""
        while b'{"status":"ok"}' not in answer:
            chunk = sock.recv(4096)
            if not chunk:
                raise ConnectionError(f"/healthz answered {answer!r}")
            answer += chunk
    return time.perf_counter() - start


SEARCH = ("file.search", {"pattern": STDLIB_PATTERN, "max_results": 100})


def _search_load(address: tuple[str, int], stop: Event) -> None:
    """64 searches in flight until `stop`: in a process of its own, so the prober's
    timings never wait for this loop's turn at the GIL (in one process, a probe's thread
    waited up to the 5 ms switch interval after each read: the client's own p99)."""
    client = HttpServer.attach(address)
    while not stop.is_set():
        client.throughput(lambda i: SEARCH, IN_FLIGHT * 2, IN_FLIGHT)


def healthz_under_search(env: Env) -> Measure:
    with HttpServer(env.ours_argv(env.stdlib), cwd=REPO,
                    stderr=env.logs / "ours.stderr") as server:
        server.throughput(lambda i: SEARCH, IN_FLIGHT)  # warm: connections, page cache
        fork = multiprocessing.get_context("fork")
        stop = fork.Event()
        loader = fork.Process(target=_search_load, args=(server.address, stop), daemon=True)
        loader.start()
        try:
            time.sleep(0.5)
            samples = [_probe(server.address) for _ in range(PROBES)]
        finally:
            stop.set()
            loader.join(120)
            if loader.is_alive():
                loader.kill()
        return Measure("time", percentile(samples, 0.99),
                       {"p50": percentile(samples, 0.5), "max": max(samples),
                        "probes": len(samples), "searches_in_flight": IN_FLIGHT,
                        "load_average": os.getloadavg()})


SCENARIOS: list[Scenario] = [
    Scenario("ops_metrics_read", "file.read 4 KiB, 64 in flight, metrics counted",
             "the same server --no-metrics", Target("≥", 0.97), metrics_on,
             paired.baseline_of),
    Scenario("ops_healthz_p99", "GET /healthz p99 (new connections) while 64 searches run",
             "—", Target("≤", 0.005, absolute=True, unit="s"), healthz_under_search, None),
]
