"""The soak (issue 11): a long mixed load - reads, writes, patches, lists, searches and
requests that must fail - at 64 in flight, with a worker SIGKILLed on a schedule. It checks
what must not drift over hours of use: every id answered exactly once and as expected (a
kill may fail at most the one request its worker was running), the RSS of every process
(its slope is reported), the server's descriptors (from /proc/<pid>/fd), and no zombie.

`python -m benchmarks --only soak` runs it at full size (1,000,000 requests, a kill every
10,000); tests/e2e/test_soak.py runs a short one in the suite.
"""

from __future__ import annotations

import os
import random
import signal
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import orjson

from benchmarks.loadclient import ProtocolError, StdioServer
from benchmarks.rss import rss_bytes

IN_FLIGHT = 64
SAMPLES = 50  # resource samples taken over a run
FILES = 16
_TEXT = "".join(f"alpha line {n} of a soaked file\n" for n in range(120))  # about 4 KiB
_NET_ZERO = [{"find": "alpha line 7 ", "replace": "omega line 7 "},
             {"find": "omega line 7 ", "replace": "alpha line 7 "}]

Expect = str | None  # the data.error the request must get, None for a success
Call = tuple[str, dict[str, Any], Expect]


def _mix() -> list[Callable[[int], Call]]:
    """Request i is slot i % len(slots): mostly reads, as an agent's session is, with
    every other kind in each round of 32."""
    def read(i: int) -> Call:
        return "file.read", {"path": f"r{i % FILES}.txt"}, None

    def window(i: int) -> Call:
        return "file.read", {"path": f"r{i % FILES}.txt", "offset": 40, "limit": 20,
                             "raw": True}, None

    def info(i: int) -> Call:
        return "file.info", {"path": f"r{i % FILES}.txt"}, None

    kinds: list[tuple[int, Callable[[int], Call]]] = [
        (14, read), (4, window), (3, info),
        (1, lambda i: ("file.write", {"path": f"w/w{i % FILES}.txt",
                                      "content": f"written by request {i}\n" * 50}, None)),
        (2, lambda i: ("file.patch", {"path": f"p{i % FILES}.txt", "patches": _NET_ZERO},
                       None)),
        (1, lambda i: ("file.list", {"path": "."}, None)),
        (1, lambda i: ("file.list", {"pattern": "**/*.txt"}, None)),
        (1, lambda i: ("file.search", {"pattern": "line 1[0-9] of", "glob": "r*.txt"},
                       None)),
        (1, lambda i: ("file.read", {"path": f"missing{i % FILES}.txt"}, "file_not_found")),
        (1, lambda i: ("file.read", {"path": "../outside.txt"}, "path_outside_workspace")),
        (1, lambda i: ("file.read", {"path": "r0.txt", "bogus": i}, "invalid_params")),
        (2, lambda i: ("file.nope", {"path": "r0.txt"}, "method_not_found")),
    ]
    slots = [make for weight, make in kinds for _ in range(weight)]
    rng = random.Random(32)
    rng.shuffle(slots)
    return slots


MIX = _mix()


def prepare(workspace: Path) -> None:
    """The files the mix reads, patches and lists."""
    (workspace / "w").mkdir(parents=True, exist_ok=True)
    for n in range(FILES):
        (workspace / f"r{n}.txt").write_text(_TEXT)
        (workspace / f"p{n}.txt").write_text(_TEXT)


@dataclass
class Sample:
    answered: int
    rss: dict[str, int]  # "server" and "workers" (their sum), in bytes
    server_fds: int
    worker_fds: int  # the most any worker holds


@dataclass
class SoakResult:
    requests: int
    kills: int
    seconds: float
    crashed: int  # requests answered worker_crashed (at most one per kill)
    samples: list[Sample] = field(default_factory=list)
    fds_start: int = 0
    fds_end: int = 0
    zombies: int = 0  # zombie processes under the server at the end

    def slope(self, who: str) -> float:
        """RSS growth of `who` in bytes per 100,000 requests (least squares)."""
        xs = [s.answered for s in self.samples]
        ys = [s.rss[who] for s in self.samples]
        if len(set(xs)) < 2:
            return 0.0
        return statistics.linear_regression(xs, ys).slope * 100_000

    def summary(self) -> dict[str, Any]:
        fds = [s.server_fds for s in self.samples]
        return {
            "requests": self.requests, "kills": self.kills, "crashed": self.crashed,
            "seconds": round(self.seconds, 1),
            "rss_slope_server_bytes_per_100k": round(self.slope("server")),
            "rss_slope_workers_bytes_per_100k": round(self.slope("workers")),
            "rss_server_first_last_mb": [round(self.samples[0].rss["server"] / 1e6, 1),
                                         round(self.samples[-1].rss["server"] / 1e6, 1)],
            "server_fds_start_end": [self.fds_start, self.fds_end],
            "server_fds_min_max": [min(fds), max(fds)],
            "worker_fds_max": max(s.worker_fds for s in self.samples), "zombies": self.zombies,
        }


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return "gone"


def fd_count(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:  # a worker that just died
        return 0


def zombies_under(pid: int) -> int:
    """Zombies among the server's children and grandchildren (workers' ripgreps)."""
    kids = children(pid)
    return sum(_state(p) == "Z" for p in kids + [g for k in kids for g in children(k)])


class SoakClient(StdioServer):
    """Drives the mixed load and checks each answer against what its request expects."""

    def run(self, requests: int, kill_every: int, rng: random.Random) -> SoakResult:
        expected: dict[int, Expect] = {}
        answered: set[int] = set()
        result = SoakResult(requests, 0, 0.0, 0)
        every = max(requests // SAMPLES, 1)
        self._settle()
        result.fds_start = fd_count(self.pid)
        started = time.perf_counter()
        sent = 0
        while len(answered) < requests:
            burst = min(requests - sent, IN_FLIGHT - (sent - len(answered)))
            if burst > 0:
                lines = []
                for i in range(sent, sent + burst):
                    method, params, expected[i + 1] = MIX[i % len(MIX)](i)
                    lines.append(orjson.dumps({"jsonrpc": "2.0", "id": i + 1,
                                               "method": method, "params": params}))
                    if (i + 1) % kill_every == 0:
                        self._write(b"\n".join(lines) + b"\n")
                        lines = []
                        result.kills += self._kill_a_worker(rng)
                if lines:
                    self._write(b"\n".join(lines) + b"\n")
                sent += burst
            result.crashed += self._check(self._receive(), expected, answered)
            if len(answered) % every == 0:
                result.samples.append(self._sample(len(answered)))
        result.seconds = time.perf_counter() - started
        if result.crashed > result.kills:
            raise ProtocolError(f"{result.crashed} requests failed for {result.kills} kills")
        self._settle()
        result.fds_end = fd_count(self.pid)
        result.zombies = zombies_under(self.pid)
        return result

    def _check(self, response: dict[str, Any], expected: dict[int, Expect],
               answered: set[int]) -> int:
        """1 when the request was failed by its worker's death, else 0; raises when the
        answer is not the one its request must get."""
        rid = response.get("id")
        if rid not in expected:
            raise ProtocolError(f"an answer with an id never sent: {rid!r}")
        if rid in answered:
            raise ProtocolError(f"id {rid} answered twice")
        answered.add(rid)
        got = response["error"]["data"]["error"] if "error" in response else None
        want = expected.pop(rid)
        if got == want:
            return 0
        if got == "worker_crashed":
            return 1
        raise ProtocolError(f"id {rid}: expected {want or 'success'}, got {response}")

    def _kill_a_worker(self, rng: random.Random) -> int:
        workers = [p for p in children(self.pid) if _state(p) not in ("Z", "gone")]
        if not workers:
            return 0
        os.kill(rng.choice(workers), signal.SIGKILL)
        return 1

    def _sample(self, answered: int) -> Sample:
        workers = children(self.pid)
        return Sample(answered, {"server": rss_bytes(self.pid),
                                 "workers": sum(rss_bytes(p) for p in workers)},
                      fd_count(self.pid), max(map(fd_count, workers), default=0))

    def _settle(self) -> None:
        """Quiet moments to count descriptors in: the pool whole and idle, and the warm
        process started (the first listing starts it once the pool is idle, so a count
        taken before it holds two pipes fewer than one taken after)."""
        for i in range(len(MIX)):  # each kind, answered in turn
            method, params, want = MIX[i](i)
            self.request(method, params, check=lambda r, want=want: None if (
                r["error"]["data"]["error"] if "error" in r else None) == want else str(r))
        deadline = time.monotonic() + 60
        while (self.request("workspace.status", {})["result"]["tree"] == "building"
               and time.monotonic() < deadline):
            time.sleep(0.05)
