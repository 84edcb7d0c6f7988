"""Sanity check for legacy-encoding detection: UTF-8 reads must not pay for it.

The charset detector runs only for text that is not UTF-8, so a UTF-8 read should cost
what it did before. This measures file.read in process (no server, no pipes) on a 4 KiB
and a 10 MB UTF-8 file, and, for scale, on a GBK file of each size (the only reads that
run the detector), each as a ratio against the same run's baseline: reading the file's
bytes and decoding them as UTF-8 with plain Python. A 10 MB read is timed with a fresh
line-count cache each time, so its whole count pass is in the figure.

    PYTHONPATH=$PWD python -m benchmarks.encodings [--rounds N]

Run it on two checkouts back to back and compare the ratios (timings on a shared machine
move by tens of percent; the ratio against the baseline moves much less).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.read.count_cache import CountCache
from chorus_tools.tools.read.read import read

_LINE = "    total = compute(values)  # 合计 ünïcode text, a typical source line\n"
_GBK_LINE = "    total = compute(values)  # 计算合计：这是一个典型的源代码行\n"


def _write(root: Path, name: str, line: str, size: int, encoding: str) -> str:
    data = line.encode(encoding)
    (root / name).write_bytes(data * max(1, size // len(data)))
    return name


def _best(fn: Callable[[], object], rounds: int) -> float:
    """The median of `rounds` timings, in milliseconds (after one warm-up call)."""
    fn()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description="UTF-8 and GBK file.read timings")
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws = Workspace(str(root))
        rows = []
        for label, line, encoding in (("utf-8", _LINE, "utf-8"), ("gbk", _GBK_LINE, "gbk")):
            for size, tag in ((4096, "4 KiB"), (10 * 2**20, "10 MB")):
                name = _write(root, f"{label}-{size}.txt", line, size, encoding)
                path = root / name

                cache = CountCache(slots=16)  # kept between reads of a small file

                def ours(name: str = name, size: int = size,
                         shared: CountCache = cache) -> object:
                    counts = CountCache(slots=16) if size > 2**20 else shared
                    return read(ToolContext(ws=ws, line_counts=counts), name, limit=50)

                def baseline(path: Path = path) -> object:
                    with open(path, "rb") as f:
                        return f.read().decode("utf-8", "replace")

                got = ours()
                assert isinstance(got, dict) and got["encoding"] in ("utf-8", "gb18030", "latin-1")
                mine, base = _best(ours, args.rounds), _best(baseline, args.rounds)
                rows.append((f"{label} {tag} (read 50 lines)", got["encoding"], mine, base))
        os.close(ws.root_fd)
    print(f"{'file':32} {'encoding':10} {'ours ms':>9} {'base ms':>9} {'ratio':>7}")
    for what, encoding, mine, base in rows:
        print(f"{what:32} {encoding:10} {mine:9.3f} {base:9.3f} {mine / base:7.2f}")


if __name__ == "__main__":
    main()
