"""Code by structure measured (issue 33): an outline against `ctags -f - FILE`, what an
outline costs a model against the file, the map of the standard library, the symbol
index's build, and what answering one real question costs in calls and bytes with the
code tools against file.search + file.read. The scale series (code.symbols and
code.references against `rg -n -w NAME`, warm and walking) are in benchmarks/code_scale.py.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from benchmarks.env import Env
from benchmarks.generate import MIB
from benchmarks.loadclient import McpSession, ProtocolError, StdioServer
from benchmarks.mcp_reference import Unavailable
from benchmarks.report import Measure
from chorus_tools.tools.code.languages import parser
from chorus_tools.tools.code.symbols import supported
from chorus_tools.tools.warm.symbol_index import MAX_FILE_BYTES

CODE_BUDGET = 1024 * MIB  # --index-memory for the code rows: the symbol index fits at 200k
POLL = 0.1
SYMBOLS_WITHIN = 3600.0  # s: a guard, not a target (200k files on a loaded machine)


def wait_symbols(server: StdioServer) -> dict[str, Any]:
    """Poll workspace.status until the symbol index is settled; the seconds from start
    to the tree ready and to the index ready, and the last status."""
    tree_at = None
    while True:
        state = server.request("workspace.status", {})["result"]
        waited = time.perf_counter() - server.started
        if tree_at is None and state["tree"] == "ready":
            tree_at = waited
        if state.get("symbols") in ("ready", "off") and state["tree"] == "ready":
            if state["symbols"] == "off":
                raise ProtocolError(f"the symbol index is off: {state.get('reason')}")
            return {"status": state, "tree_seconds": tree_at or waited, "seconds": waited}
        if waited > SYMBOLS_WITHIN:
            raise ProtocolError(f"the symbol index was not ready in {SYMBOLS_WITHIN:g} s")
        time.sleep(POLL)


def _stdlib_files(env: Env) -> list[Path]:
    return sorted(p for p in env.stdlib.rglob("*.py") if p.stat().st_size)


def outline_ours(env: Env) -> Measure:
    """code.outline of every standard library file, one at a time: the median."""
    files = _stdlib_files(env)
    times = []
    with env.ours(env.stdlib) as server:
        for path in files:
            start = time.perf_counter()
            server.request("code.outline", {"path": str(path.relative_to(env.stdlib))})
            times.append(time.perf_counter() - start)
    return Measure("time", statistics.median(times), {"files": len(files)})


def outline_ctags(env: Env) -> Measure:
    ctags = shutil.which("ctags")
    if ctags is None:
        raise Unavailable("universal-ctags is not installed")
    times = []
    for path in _stdlib_files(env):
        start = time.perf_counter()
        subprocess.run([ctags, "-f", "-", str(path)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return Measure("time", statistics.median(times), {"files": len(times)})


def outline_cost(env: Env) -> Measure:
    """What a model reads of code_outline at depth 2 (MCP content), per byte of the file:
    the median over the standard library; the JSON's share rides along."""
    shares, json_shares = [], []
    with env.ours(env.stdlib, client=McpSession) as session:
        session.initialize()
        for path in _stdlib_files(env):
            result = session.call_tool("code_outline",
                                       {"path": str(path.relative_to(env.stdlib))})
            size = path.stat().st_size
            text = sum(len(block["text"].encode()) for block in result["content"])
            shares.append(text / size)
            json_shares.append(len(str(result["structuredContent"]).encode()) / size)
    return Measure("cost", statistics.median(shares), {
        "files": len(shares), "json_median": round(statistics.median(json_shares), 4),
        "p90": round(sorted(shares)[int(len(shares) * 0.9)], 4)})


def map_stdlib(env: Env) -> Measure:
    """code.map of the standard library within 4 KiB, warm: the first answer (ranked
    and rendered) and the median of repeats (the kept reply)."""
    with env.ours(env.stdlib, "--index-memory", str(CODE_BUDGET)) as server:
        ready = wait_symbols(server)
        start = time.perf_counter()
        first = server.request("code.map", {})["result"]
        first_time = time.perf_counter() - start
        times = []
        for _ in range(env.scale.repeats):
            start = time.perf_counter()
            server.request("code.map", {})
            times.append(time.perf_counter() - start)
    return Measure("time", statistics.median(times), {
        "first_call_seconds": round(first_time, 3), "files": first["files"],
        "symbols": first["symbols"], "bytes": len(first["map"].encode()),
        "symbol_files": ready["status"]["symbol_files"]})


def index_build(env: Env) -> Measure:
    """The symbol index's build on the standard library: the files it parsed per second,
    from the tree ready to the index ready (the content index reads files meanwhile)."""
    with env.ours(env.stdlib, "--index-memory", str(CODE_BUDGET)) as server:
        ready = wait_symbols(server)
    state = ready["status"]
    seconds = ready["seconds"] - ready["tree_seconds"]
    return Measure("rate", state["symbol_files"] / max(seconds, 1e-9), {
        "symbol_files": state["symbol_files"], "symbols_indexed": state["symbols_indexed"],
        "seconds": round(seconds, 2), "memory_bytes": state["memory_bytes"]})


def parse_floor(env: Env) -> Measure:
    """What any build of the index pays on this machine before it makes anything of a
    tree: the same code files (those the index parses) read and parsed by tree-sitter, a
    process a CPU, the trees thrown away; the best rate of the rounds."""
    files = [path for path in map(str, sorted(env.stdlib.rglob("*"))) if _parsed(path)]
    cpus = os.cpu_count() or 1
    with multiprocessing.get_context("spawn").Pool(cpus) as pool:
        pool.map(_parse, files[:cpus * 16])  # the workers' imports and grammars loaded
        best = float("inf")
        for _ in range(max(env.scale.rounds, 1)):
            start = time.perf_counter()
            pool.map(_parse, files, chunksize=16)
            best = min(best, time.perf_counter() - start)
    return Measure("rate", len(files) / best, {"symbol_files": len(files),
                                                "seconds": round(best, 2), "processes": cpus})


def _parsed(path: str) -> bool:
    """Whether the symbol index parses `path` (tools/warm/symbol_index.read_local)."""
    if not os.path.isfile(path) or os.path.getsize(path) > MAX_FILE_BYTES:
        return False
    with open(path, "rb") as f:
        return supported(path, f.read()) is not None


def _parse(path: str) -> None:
    with open(path, "rb") as f:
        data = f.read()
    grammar = supported(path, data)
    assert grammar is not None  # chosen by _parsed
    parser(grammar).parse(data)


# one real question: where is HTTPConnection.request defined, and who calls it? ---------

QUESTION_FILE = "Lib/http/client.py"


def _asked_about(env: Env) -> None:
    if not (env.stdlib / QUESTION_FILE).is_file():
        raise Unavailable(f"no {QUESTION_FILE} in this standard library copy (--quick)")


def _spent(session: McpSession, calls: list[tuple[str, dict[str, Any]]]) -> tuple[int, int]:
    """Calls made and bytes of content a model read."""
    spent = 0
    for name, arguments in calls:
        result = session.call_tool(name, arguments)
        spent += sum(len(block.get("text", "").encode()) for block in result["content"])
    return len(calls), spent


def question_code_tools(env: Env) -> Measure:
    """code_symbols for the definition, code_references for its callers."""
    _asked_about(env)
    with env.ours(env.stdlib, client=McpSession) as session:
        session.initialize()
        calls, spent = _spent(session, [
            ("code_symbols", {"query": "HTTPConnection/request"}),
            ("code_references", {"name": "request", "path": "Lib"})])
    return Measure("bytes", spent, {"calls": calls})


def question_search_read(env: Env) -> Measure:
    """file_search for the definition, file_read of its file (to see its class: the
    whole file, as an agent without an outline reads it), file_search for the callers."""
    _asked_about(env)
    with env.ours(env.stdlib, client=McpSession) as session:
        session.initialize()
        calls, spent = _spent(session, [
            ("file_search", {"pattern": r"def request\(", "path": "Lib"}),
            ("file_read", {"path": QUESTION_FILE}),
            ("file_search", {"pattern": r"\.request\(", "path": "Lib"})])
    return Measure("bytes", spent, {"calls": calls})
