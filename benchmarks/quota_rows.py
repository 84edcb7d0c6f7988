"""Quotas (docs/protocol.md, Quotas).

Rows: a 4 KiB file.write, one at a time, on a server with --quota-bytes and --quota-files
set (each write takes its turn of the usage account, carries the room in its job, and is
booked; the warm tree is counted again every quarter second) against the same writes on a
server without a quota; and how long after 10,000 outside changes (files written, grown
and deleted by this process, beside the server) workspace.status's `usage` equals a fresh
walk of the workspace, bytes and files: the warm tree's settle time.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from benchmarks import paired
from benchmarks.env import Env
from benchmarks.loadclient import Call
from benchmarks.report import Measure, Target
from benchmarks.scenarios import WARMUP, Scenario, _sequential_rate

QUOTA = ("--quota-bytes", "64G", "--quota-files", "10000000")
OUTSIDE_CHANGES = 10_000
SETTLE_PATIENCE = 60.0  # seconds before the row gives up: not met


def write_quota(env: Env) -> Measure:
    """The same 4 KiB writes on both servers, in paired rounds (benchmarks/paired.py)."""
    count = max(10, env.scale.mutations // 8)
    for side in "qp":
        (env.scratch / side).mkdir(exist_ok=True)
    names = [f"w{n}.txt" for n in range(16)]

    def call(i: int) -> Call:
        return "file.write", {"path": names[i % 16], "content": env.text_4k(i)}
    return paired.measure(env, lambda: env.ours(env.scratch / "q", *QUOTA),
                          lambda: env.ours(env.scratch / "p"),
                          lambda server: _sequential_rate(server, call, count).value,
                          count + WARMUP)


def outside_settle(env: Env) -> Measure:
    root = env.cache / f"quota-outside-{os.getpid()}"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    try:
        with env.ours(root, *QUOTA) as server:
            server.request("workspace.status", {})  # starts the warm process
            outside_changes(root)
            done = time.perf_counter()
            wanted = walked_usage(root)
            while (got := server.request("workspace.status", {})["result"]["usage"]) \
                    != wanted and time.perf_counter() - done < SETTLE_PATIENCE:
                time.sleep(0.01)
            settle = time.perf_counter() - done
        return Measure("time", settle, {"changes": OUTSIDE_CHANGES, "usage": got,
                                        "walk": wanted, "equal": got == wanted})
    finally:
        shutil.rmtree(root, ignore_errors=True)


def outside_changes(root: Path, changes: int = OUTSIDE_CHANGES, folders: int = 100) -> None:
    """`changes` changes beside the server: files made in `folders` directories, a quarter
    grown, a tenth deleted (tests/e2e/test_e2e_quota.py makes a smaller storm of them)."""
    made = 0
    for d in range(folders):
        (root / f"d{d}").mkdir()
    for i in range(changes):
        path = root / f"d{i % folders}" / f"f{i // folders}.txt"
        before = root / f"d{(i - 1) % folders}" / f"f{(i - 1) // folders}.txt"
        if i % 10 == 9 and made:
            before.unlink()
        elif i % 4 == 3:
            with open(before, "a") as f:
                f.write("more\n")
        else:
            path.write_text("x" * (i % 300))
            made += 1


def walked_usage(root: Path) -> dict[str, int]:
    """The oracle of usage: every entry below the root, and the regular files' sizes."""
    total = count = 0
    for top, dirs, files in os.walk(root):
        count += len(dirs) + len(files)
        total += sum(os.lstat(os.path.join(top, f)).st_size for f in files)
    return {"bytes": total, "files": count}


SCENARIOS: list[Scenario] = [
    Scenario("quota_write", "file.write 4 KiB, one at a time, under --quota-bytes/--quota-files",
             "the same writes without a quota", Target("≥", 0.95), write_quota,
             paired.baseline_of),
    Scenario("quota_outside", "usage after 10,000 outside changes equals a fresh walk: settle",
             "—", Target("≤", 5.0, absolute=True, unit="s"), outside_settle, None),
]
