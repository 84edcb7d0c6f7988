"""The symbol index built again from records on disk (issue 45, `--index-cache DIR`): what
an orchestrator does when it starts many servers on the same code (one per task on a fresh
copy of one repository, or a restart on the same workspace). An earlier server on the
standard library fills a fresh cache; the row is a second server's build, from the tree
ready to the index ready (the content index reads files meanwhile), beside the cold build
(benchmarks/code_speed.py, no cache) in the same run. The detail says what the cache takes
on disk per file: its records' bytes and the blocks they hold.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from benchmarks.code_speed import CODE_BUDGET, index_build, wait_symbols
from benchmarks.env import Env
from benchmarks.loadclient import ProtocolError
from benchmarks.report import Measure, Target
from benchmarks.scenarios import Scenario


def cached_build(env: Env) -> Measure:
    """The second server's build, every file's record filed by the first."""
    cache = Path(tempfile.mkdtemp(prefix="chorus-bench-index-cache-"))  # out of every tree
    options = ("--index-memory", str(CODE_BUDGET), "--index-cache", str(cache))
    try:
        with env.ours(env.stdlib, *options) as server:
            filled = wait_symbols(server)["status"]
        records = [p.stat() for p in cache.glob("*/*")]
        with env.ours(env.stdlib, *options) as server:
            ready = wait_symbols(server)
        if len(list(cache.glob("*/*"))) != len(records):
            raise ProtocolError("the second server wrote records: it parsed files again")
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    state = ready["status"]
    if (state["symbol_files"], state["symbols_indexed"]) != (filled["symbol_files"],
                                                             filled["symbols_indexed"]):
        raise ProtocolError(f"the index from records differs from the parsed one: {state}")
    seconds = ready["seconds"] - ready["tree_seconds"]
    count = max(len(records), 1)
    return Measure("rate", state["symbol_files"] / max(seconds, 1e-9), {
        "symbol_files": state["symbol_files"], "symbols_indexed": state["symbols_indexed"],
        "seconds": round(seconds, 2), "records": len(records),
        "record_bytes_per_file": round(sum(r.st_size for r in records) / count),
        "disk_bytes_per_file": round(sum(r.st_blocks * 512 for r in records) / count)})


SCENARIOS = [
    Scenario("code_index_build_cached", "symbol index build, standard library, from "
             "--index-cache records an earlier server filed", "the build parsing (no cache)",
             Target("≥", 1000, absolute=True, unit="files/s"), cached_build, index_build),
]
