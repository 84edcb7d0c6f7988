"""Two servers measured in the same rounds, for rows whose two sides differ by a few per
cent (a counter, a quota): measured one after the other, the two sides of such a row swung
0.8-1.3x on this machine, and two servers with the same options, started one after the
other, differed by 1.31x (docs/benchmarks.md). So both servers are up at once, each round
measures both (the order alternating), half the rounds on servers started in the other
order (each server's first round untimed: its workers start), and the ratio is the
median of the rounds' paired ratios. The baseline's row
reports our median rate divided by that ratio, its own median kept beside."""

from __future__ import annotations

import statistics
from contextlib import AbstractContextManager
from typing import Callable

from benchmarks.env import Env
from benchmarks.loadclient import StdioServer
from benchmarks.report import Measure
from benchmarks.rss import cpu_seconds

ROUNDS = 32  # the rounds spread ±10 %: 16 left the median ±3 % (docs/benchmarks.md)
_BASELINES: dict[int, Measure] = {}  # measured in ours' rounds, by Env

Start = Callable[[], AbstractContextManager[StdioServer]]


def measure(env: Env, ours: Start, baseline: Start, rate: Callable[[StdioServer], float],
            requests: int) -> Measure:
    """Ours' Measure (a throughput); the baseline's, from the same rounds, is kept for
    `baseline_of`. `requests` a round, for the server CPU each cost."""
    rates: dict[bool, list[float]] = {True: [], False: []}
    cpu = {True: 0.0, False: 0.0}
    for half in range(2):
        with (ours if half == 0 else baseline)() as first, \
                (baseline if half == 0 else ours)() as second:
            servers = {True: first, False: second} if half == 0 else \
                {True: second, False: first}
            for server in servers.values():  # untimed: a new server's workers start
                rate(server)
            for r in range(ROUNDS // 2):
                for side in ((True, False) if r % 2 == 0 else (False, True)):
                    before = cpu_seconds(servers[side].pid)
                    rates[side].append(rate(servers[side]))
                    cpu[side] += cpu_seconds(servers[side].pid) - before
    paired = [a / b for a, b in zip(rates[True], rates[False])]
    ratio = statistics.median(paired)
    ours_rate = statistics.median(rates[True])
    per_request = {side: round(cpu[side] / (requests * ROUNDS) * 1e6, 1) for side in cpu}
    _BASELINES[id(env)] = Measure("throughput", ours_rate / ratio, {
        "plain_median": statistics.median(rates[False]), "rounds": rates[False],
        "server_cpu_us": per_request[False]})
    return Measure("throughput", ours_rate, {
        "rounds": rates[True], "paired_ratios": [round(x, 3) for x in paired],
        "server_cpu_us": per_request[True]})


def baseline_of(env: Env) -> Measure:
    """The baseline `measure` took for `env` in the same rounds."""
    return _BASELINES.pop(id(env))


def times(ours: Callable[[], float], baseline: Callable[[], float], rounds: int,
          detail: dict[str, object] | None = None) -> tuple[Measure, Measure]:
    """The same pairing for two commands timed once each a round (an import against
    `tar -xzf`): each round times both, the order alternating; ours' Measure is the median
    of its times, the baseline's is that median divided by the median of the paired
    ratios (its own median beside), so the row's ratio is the paired one. Each callable
    does its own untimed setup and returns its seconds."""
    taken: dict[bool, list[float]] = {True: [], False: []}
    for r in range(rounds):
        for side in ((True, False) if r % 2 == 0 else (False, True)):
            taken[side].append((ours if side else baseline)())
    paired = [a / b for a, b in zip(taken[True], taken[False])]
    ratio = statistics.median(paired)
    ours_time = statistics.median(taken[True])
    return Measure("time", ours_time, {
        **(detail or {}), "rounds": [round(x, 3) for x in taken[True]],
        "paired_ratios": [round(x, 3) for x in paired]}), Measure("time", ours_time / ratio, {
            "plain_median": statistics.median(taken[False]),
            "rounds": [round(x, 3) for x in taken[False]]})
