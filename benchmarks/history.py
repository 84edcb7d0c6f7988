"""`python -m benchmarks.history [--quick] [--big-mb N]`: what keeping the history
(docs/protocol.md, History) costs, measured against `--history 0` in the same run.

- write and patch throughput on 4 KiB files (target: at least 0.8x of `--history 0`),
  one call at a time, rounds alternating between the two servers, best round kept;
- a big-file write over an existing big file (1 GB by default): the server tree's and
  the worker's peak resident memory with the history on and off. The history streams
  what the write replaces through its spool, so it must not double the peak.

The machine is shared: the figures move with whatever else runs; the ratios less so.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.loadclient import StdioServer
from benchmarks.rss import PeakRss, cpu_seconds

FILES = 50
KIB4 = 4096


def _server(workspace: Path, history: str, *extra: str) -> StdioServer:
    return StdioServer([sys.executable, "-m", "chorus_tools", "--workspace", str(workspace),
                        "--workers", "2", "--history", history, *extra], timeout=600.0)


def _text(i: int) -> str:
    line = f"counter = {i}\n"
    return (line * (KIB4 // len(line) + 1))[:KIB4 - 1] + "\n"


def _rate(server: StdioServer, calls: Callable[[int], tuple[str, dict[str, Any]]],
          count: int) -> tuple[float, float]:
    """Calls per second, and the server tree's CPU seconds per call (steadier than the
    rate on a shared machine)."""
    for i in range(FILES):  # warm: every file exists and every method ran once
        server.request(*calls(i))
    cpu = cpu_seconds(server.pid)
    start = time.perf_counter()
    for i in range(FILES, FILES + count):
        server.request(*calls(i))
    elapsed = time.perf_counter() - start
    return count / elapsed, (cpu_seconds(server.pid) - cpu) / count


def _write(i: int) -> tuple[str, dict[str, Any]]:
    return "file.write", {"path": f"f{i % FILES}.txt", "content": _text(i)}


def _patch(i: int) -> tuple[str, dict[str, Any]]:
    n = i // FILES  # the file's own counter: its content says `counter = n`
    return "file.patch", {"path": f"f{i % FILES}.txt", "patches": [
        {"find": f"counter = {n}\n", "replace": f"counter = {n + 1}\n", "replace_all": True}]}


def throughput(root: Path, rounds: int, count: int) -> dict[str, dict[str, float]]:
    """Calls per second with the history on and off, best of `rounds`, per method; and
    the least CPU per call (`cpu-on`, `cpu-off`)."""
    best: dict[str, dict[str, float]] = {"write": {}, "patch": {}}
    for _ in range(rounds):
        for label, history in (("on", str(root / "history")), ("off", "0")):
            ws = root / f"ws-{label}"
            shutil.rmtree(ws, ignore_errors=True)
            ws.mkdir()
            for i in range(FILES):
                (ws / f"f{i}.txt").write_text(_text(0))
            server = _server(ws, history)
            try:
                write = _rate(server, _write, count)
                for i in range(FILES):  # reset: each file counts from 0 again
                    server.request("file.write", {"path": f"f{i}.txt", "content": _text(0)})
                patch = _rate(server, _patch, count)
            finally:
                server.close(60)
            for method, (rate, cpu) in (("write", write), ("patch", patch)):
                best[method][label] = max(best[method].get(label, 0.0), rate)
                best[method][f"cpu-{label}"] = min(best[method].get(f"cpu-{label}", 1e9), cpu)
    return best


def big_write(root: Path, megabytes: int) -> dict[str, dict[str, int]]:
    """Peak RSS (server tree, and its largest worker) writing `megabytes` over a file of
    the same size, history on and off."""
    size = megabytes << 20
    limit = str(size + (64 << 20))
    content = "x" * (size - 1) + "\n"
    out: dict[str, dict[str, int]] = {}
    for label, history in (("off", "0"), ("on", str(root / "history-big"))):
        ws = root / f"big-{label}"
        shutil.rmtree(ws, ignore_errors=True)
        ws.mkdir()
        with open(ws / "big.txt", "wb") as f:
            block = b"y" * (1 << 20)
            f.writelines(block for _ in range(megabytes))
        server = _server(ws, history, "--max-write-bytes", limit, "--max-message-bytes",
                         str(size * 2), "--request-timeout", "600",
                         "--history-bytes", str(size * 2))  # room to keep the old content
        try:
            server.request("file.info", {"path": "big.txt"})
            with PeakRss(server.pid, interval=0.01) as peak:
                server.request("file.write", {"path": "big.txt", "content": content})
            if history != "0":
                got = server.request("file.history", {"path": "big.txt"})["result"]
                assert got["versions"][0]["bytes"] == size and not got["versions"][0]["evicted"]
        finally:
            server.close(120)
        workers = sorted(peak.by_pid.items(), key=lambda kv: kv[1])
        out[label] = {"tree": peak.peak, "worker": workers[-1][1] if workers else 0,
                      "dispatcher": peak.by_pid.get(server.pid, 0)}
        shutil.rmtree(ws, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> None:
    args = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    args.add_argument("--quick", action="store_true", help="fewer calls and rounds")
    args.add_argument("--big-mb", type=int, default=1024, help="the big write's size (MiB)")
    args.add_argument("--big-only", action="store_true", help="only the big write")
    opts = args.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="chorus-history-bench-"))
    try:
        print(f"load average: {os.getloadavg()[0]:.1f} (a shared machine)")
        rates = {} if opts.big_only else throughput(root, 2 if opts.quick else 3,
                                                    200 if opts.quick else 1000)
        for method, got in rates.items():
            print(f"{method:6} 4 KiB: history on {got['on']:8.0f}/s, off {got['off']:8.0f}/s, "
                  f"ratio {got['on'] / got['off']:.2f} (target >= 0.80); CPU per call "
                  f"{got['cpu-on'] * 1e6:.0f} us on, {got['cpu-off'] * 1e6:.0f} us off")
        peaks = big_write(root, opts.big_mb)
        for label, got in peaks.items():
            print(f"{opts.big_mb} MiB write, history {label:3}: tree peak "
                  f"{got['tree'] / 2**20:7.0f} MiB, largest process "
                  f"{got['worker'] / 2**20:7.0f} MiB")
        print(f"peak ratio on/off: {peaks['on']['tree'] / peaks['off']['tree']:.2f} "
              "(must stay well under 2)")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
