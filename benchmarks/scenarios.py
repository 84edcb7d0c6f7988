"""The scenarios of the table: for each, how to measure ours and how to measure the baseline
a user would pick instead, on the same input, in the same run.

A measuring function takes the Env and returns one Measure; the runner alternates ours and
baseline and keeps the best of each, so a burst of noise hurts one sample, not the ratio.
Results are checked while timed (every id once, every answer a success, the same number of
matches as the baseline), so a fast wrong answer cannot pass for a fast one.
"""

from __future__ import annotations

import itertools
import os
import random
import shutil
import statistics
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from benchmarks import soak
from benchmarks.env import REPO, Env
from benchmarks.httpload import HttpServer
from benchmarks.loadclient import (Call, Check, McpSession, Measured, ProtocolError,
                                   StdioServer, is_success)
from benchmarks.report import Measure, Target
from benchmarks.rss import PeakRss, cpu_seconds

IN_FLIGHT = 64
ALL = 10**7  # max_results meaning "every match"
STDLIB_PATTERN = r"raise \w+Error\("  # the same regex in ripgrep, regex and GNU grep -E
TREE_PATTERN = "TODO"
MD_GLOB = "**/*.md"
WARMUP = 20
Ready = Callable[[StdioServer], dict[str, Any]]  # waits until a server is ready: its state


@dataclass(frozen=True)
class Scenario:
    key: str
    title: str  # {tree}, {big} and {huge} name the run's inputs (Scale.labels)
    baseline_name: str
    target: Target | None
    ours: Callable[[Env], Measure]
    baseline: Callable[[Env], Measure] | None
    long_run: bool = False  # minutes long: measured once, and only when named by --only


# helpers ---------------------------------------------------------------------------------

def _run(argv: list[str], cwd: Path) -> tuple[float, bytes, int]:
    """Run a command to completion: (seconds, stdout, peak RSS in bytes from wait4)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    assert proc.stdout is not None  # piped above
    out = proc.stdout.read()
    proc.stdout.close()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):  # 1: no match, for rg and grep alike
        raise ProtocolError(f"{argv[0]} exited {proc.returncode}")
    return elapsed, out, usage.ru_maxrss * 1024


def median_time(env: Env, once: Callable[[], int]) -> Measure:
    """One warm-up call, then the median of `repeats` timed calls; once() returns the
    number of results, which must not change between calls."""
    counts = {once()}
    times = []
    for _ in range(env.scale.repeats):
        start = time.perf_counter()
        counts.add(once())
        times.append(time.perf_counter() - start)
    if len(counts) != 1:
        raise ProtocolError(f"result counts differ between identical calls: {sorted(counts)}")
    return Measure("time", statistics.median(times), {"results": counts.pop(),
                                                       "repeats": len(times)})


def command_time(env: Env, argv: list[str], cwd: Path) -> Measure:
    return median_time(env, lambda: len(_run(argv, cwd)[1].splitlines()))


def _same(call: Call) -> Callable[[int], Call]:
    """The i-th request of a run that repeats one call."""
    return lambda i: call


READ_4K = _same(("file.read", {"path": "read4k.txt"}))


def _ref_read(env: Env) -> Callable[[int], Call]:
    return _same(McpSession.tool("read_text_file", {"path": str(env.scratch / "read4k.txt")}))


def _initialized(session: McpSession) -> McpSession:
    try:
        session.initialize()
    except BaseException:
        session.close()
        raise
    return session


def _started_reference(env: Env, workspace: Path) -> McpSession:
    return _initialized(env.reference(workspace))


def _warm(server: Measured, calls: Callable[[int], Call], check: Check = is_success) -> None:
    for i in range(WARMUP):
        server.request(*calls(i), check)


# file.read 4 KiB -------------------------------------------------------------------------

def _pipelined(server: Measured, env: Env, calls: Callable[[int], Call],
               check: Check = is_success) -> Measure:
    """Requests per second; the JSON also holds the CPU each request cost the server's
    process tree and this client (steadier than the rate on a busy machine)."""
    _warm(server, calls, check)
    server_cpu, client_cpu = cpu_seconds(server.pid), time.process_time()
    tp = server.throughput(calls, env.scale.pipelined, IN_FLIGHT, check)
    per_request = {"server_cpu_us": (cpu_seconds(server.pid) - server_cpu) / tp.requests,
                   "client_cpu_us": (time.process_time() - client_cpu) / tp.requests}
    return Measure("throughput", tp.per_second, {
        "requests": tp.requests, "in_flight": tp.in_flight,
        **{k: round(v * 1e6, 1) for k, v in per_request.items()}})


def read_pipelined_ours(env: Env) -> Measure:
    with env.ours(env.scratch) as server:
        return _pipelined(server, env, READ_4K)


def read_pipelined_reference(env: Env) -> Measure:
    with _started_reference(env, env.scratch) as server:
        return _pipelined(server, env, _ref_read(env), McpSession.tool_ok)


def read_pipelined_floor(env: Env) -> Measure:
    with env.floor(env.scratch) as server:
        return _pipelined(server, env, READ_4K)


def _latency(server: Measured, env: Env, calls: Callable[[int], Call],
             check: Check = is_success) -> Measure:
    _warm(server, calls, check)
    lat = server.latency(calls, env.scale.sequential, check)
    return Measure("time", lat.p50, {"p99": lat.p99, "requests": lat.samples})


def read_latency_ours(env: Env) -> Measure:
    with env.ours(env.scratch) as server:
        return _latency(server, env, READ_4K)


def read_latency_reference(env: Env) -> Measure:
    with _started_reference(env, env.scratch) as server:
        return _latency(server, env, _ref_read(env), McpSession.tool_ok)


# the same reads over MCP on both sides ---------------------------------------------------

MCP_READ_4K = _same(McpSession.tool("file_read", {"path": "read4k.txt"}))


def mcp_read_pipelined_ours(env: Env) -> Measure:
    with _initialized(env.ours(env.scratch, client=McpSession)) as server:
        return _pipelined(server, env, MCP_READ_4K, McpSession.tool_ok)


def mcp_read_latency_ours(env: Env) -> Measure:
    with _initialized(env.ours(env.scratch, client=McpSession)) as server:
        return _latency(server, env, MCP_READ_4K, McpSession.tool_ok)


# the same reads over --http (POST /rpc, and /mcp without a session) ----------------------

def _http(env: Env, path: str = "/rpc") -> HttpServer:
    return HttpServer(env.ours_argv(env.scratch), cwd=REPO, stderr=env.logs / "ours.stderr",
                      path=path)


def http_read_pipelined_ours(env: Env) -> Measure:
    with _http(env) as server:
        return _pipelined(server, env, READ_4K)


def http_read_latency_ours(env: Env) -> Measure:
    with _http(env) as server:
        return _latency(server, env, READ_4K)


def http_mcp_read_pipelined_ours(env: Env) -> Measure:
    with _http(env, "/mcp") as server:
        return _pipelined(server, env, MCP_READ_4K, McpSession.tool_ok)


# spawn to first answer -------------------------------------------------------------------

def _spawn_median(env: Env, first_answer: Callable[[], float]) -> Measure:
    times = [first_answer() for _ in range(env.scale.repeats)]
    return Measure("time", statistics.median(times), {"repeats": len(times)})


def spawn_ours(env: Env) -> Measure:
    def once() -> float:
        with env.ours(env.scratch) as server:
            server.request("file.read", {"path": "read4k.txt"})
            return time.perf_counter() - server.started
    return _spawn_median(env, once)


def spawn_reference(env: Env) -> Measure:
    """Includes MCP's initialize handshake: a client cannot call a tool before it."""
    path = str(env.scratch / "read4k.txt")

    def once() -> float:
        with _started_reference(env, env.scratch) as server:
            server.call_tool("read_text_file", {"path": path})
            return time.perf_counter() - server.started
    return _spawn_median(env, once)


def _spawn_to_initialize(env: Env, start: Callable[[], McpSession]) -> Measure:
    def once() -> float:
        with start() as server:
            server.initialize()
            return time.perf_counter() - server.started
    return _spawn_median(env, once)


def mcp_spawn_ours(env: Env) -> Measure:
    return _spawn_to_initialize(env, lambda: env.ours(env.scratch, client=McpSession))


def mcp_spawn_reference(env: Env) -> Measure:
    return _spawn_to_initialize(env, lambda: env.reference(env.scratch))


# file.list **/*.md -----------------------------------------------------------------------

def _median_call(env: Env, workspace: Path, method: str, params: dict[str, Any],
                 items: str, *options: str, engine: str | None = None,
                 ready: Ready | None = None) -> Measure:
    """The median time of one call on a server over `workspace` (started with `options`),
    as `median_call` measures it. With `ready`, the calls wait for it first (what it
    returns goes into the measure's detail)."""
    with env.ours(workspace, *options) as server:
        state = ready(server) if ready else {}
        measure = median_call(env, server, method, params, items, engine=engine)
    measure.detail.update(state)
    return measure


def median_call(env: Env, server: StdioServer, method: str, params: dict[str, Any],
                items: str, *, engine: str | None = None) -> Measure:
    """The median time of one call asking for every item; an answer that was truncated
    (or came from another engine than asked for) is refused, since the baseline finds
    every item."""
    def once() -> int:
        result = server.request(method, {**params, "max_results": ALL})["result"]
        wrong_engine = engine is not None and result["engine"] != engine
        if result["truncated"] or wrong_engine:
            raise ProtocolError(f"{method} answered truncated={result['truncated']}, "
                                f"engine={result.get('engine')} (asked: {engine})")
        return len(result[items])
    return median_time(env, once)


def list_in(env: Env, tree: Path, *options: str, ready: Ready | None = None) -> Measure:
    return _median_call(env, tree, "file.list", {"pattern": MD_GLOB}, "files", *options,
                        ready=ready)


def rg_files_in(env: Env, tree: Path) -> Measure:
    """--no-require-git: read .gitignore outside a git repository, as ours does."""
    return command_time(env, [env.rg, "--files", "--no-require-git", "-g", "*.md"], tree)


def list_ours(env: Env) -> Measure:
    """Walking on every call (the warm tree has its own series: benchmarks/warm.py)."""
    return list_in(env, env.tree, *env.walking())


def list_rg(env: Env) -> Measure:
    return rg_files_in(env, env.tree)


def list_reference(env: Env) -> Measure:
    """Its search_files glob, told to skip what ours skips by default (it reads no
    .gitignore): the dependency folder and hidden entries."""
    arguments = {"path": str(env.tree), "pattern": MD_GLOB,
                 "excludePatterns": ["**/node_modules", "**/.*"]}
    with _started_reference(env, env.tree) as server:
        def once() -> int:
            text = server.call_tool("search_files", arguments)["content"][0]["text"]
            return len(text.splitlines())
        return median_time(env, once)


# file.search -----------------------------------------------------------------------------

def _search_ours(env: Env, engine: str) -> Measure:
    return _median_call(env, env.stdlib, "file.search", {"pattern": STDLIB_PATTERN},
                        "matches", "--search-engine", engine, *env.walking(), engine=engine)


def search_ours_ripgrep(env: Env) -> Measure:
    return _search_ours(env, "ripgrep")


def search_ours_python(env: Env) -> Measure:
    return _search_ours(env, "python")


def search_rg(env: Env) -> Measure:
    return command_time(env, [env.rg, "-n", "-e", STDLIB_PATTERN], env.stdlib)


def search_tree_in(env: Env, tree: Path, *options: str, pattern: str = TREE_PATTERN,
                   ready: Ready | None = None) -> Measure:
    """Every match (TODO unless told) of a generated tree, auto engine (ripgrep), ignore
    rules as rg's."""
    return _median_call(env, tree, "file.search", {"pattern": pattern}, "matches", *options,
                        ready=ready)


def rg_search_in(env: Env, tree: Path, pattern: str = TREE_PATTERN) -> Measure:
    return command_time(env, [env.rg, "-n", "--no-require-git", "-e", pattern], tree)


def search_grep(env: Env) -> Measure:
    return command_time(env, [env.grep, "-rn", "-E", "-e", STDLIB_PATTERN, "."], env.stdlib)


# file.patch and file.write, one at a time ------------------------------------------------

def _sequential_rate(server: StdioServer, calls: Callable[[int], Call], count: int,
                     check: Check = is_success) -> Measure:
    """`count` calls one at a time after the warm-up calls (untimed, as for reads: the first
    call of a method pays one-off costs that spawn-to-first-answer measures)."""
    _warm(server, calls, check)
    start = time.perf_counter()
    for i in range(WARMUP, WARMUP + count):
        server.request(*calls(i), check)
    elapsed = time.perf_counter() - start
    return Measure("throughput", count / elapsed, {"requests": count})


def _edit(i: int) -> tuple[str, str]:
    return f"counter = {i}\n", f"counter = {i + 1}\n"


def patch_ours(env: Env) -> Measure:
    name = env.fresh_file("patch-ours").name

    def call(i: int) -> Call:
        find, replace = _edit(i)
        return "file.patch", {"path": name, "patches": [{"find": find, "replace": replace}]}
    with env.ours(env.scratch) as server:
        return _sequential_rate(server, call, env.scale.mutations)


def patch_reference(env: Env) -> Measure:
    path = str(env.fresh_file("patch-ref"))

    def call(i: int) -> Call:
        find, replace = _edit(i)
        return McpSession.tool("edit_file", {"path": path,
                                             "edits": [{"oldText": find, "newText": replace}]})
    with _started_reference(env, env.scratch) as server:
        return _sequential_rate(server, call, env.scale.mutations, McpSession.tool_ok)


def write_ours(env: Env) -> Measure:
    name = env.fresh_file("write-ours").name
    with env.ours(env.scratch) as server:
        return _sequential_rate(server, lambda i: ("file.write", {
            "path": name, "content": env.text_4k(i + 1)}), env.scale.mutations)


def write_floor(env: Env) -> Measure:
    name = env.fresh_file("write-floor").name
    with env.floor(env.scratch) as server:
        return _sequential_rate(server, lambda i: ("file.write", {
            "path": name, "content": env.text_4k(i + 1)}), env.scale.mutations)


def write_reference(env: Env) -> Measure:
    path = str(env.fresh_file("write-ref"))
    with _started_reference(env, env.scratch) as server:
        return _sequential_rate(server, lambda i: McpSession.tool("write_file", {
            "path": path, "content": env.text_4k(i + 1)}), env.scale.mutations,
            McpSession.tool_ok)


# a window of a big file ------------------------------------------------------------------

BIG = "data/big_module.py"


def _window_calls(path: Path, call: Call, first: bool) -> Callable[[int], Call]:
    """The same window read each time; with `first`, the file's mtime moves before each
    call (untimed), so every read is the first of a new version and nothing remembered
    about the file may serve it."""
    if not first:
        return _same(call)

    def touched(i: int) -> Call:
        now = time.time_ns()
        os.utime(path, ns=(now, now))
        return call
    return touched


def _window_latency(server: StdioServer, calls: Callable[[int], Call], count: int,
                    check: Check = is_success) -> Measure:
    for i in range(min(WARMUP, count)):
        server.request(*calls(i), check)
    lat = server.latency(calls, count, check)
    return Measure("time", lat.p50, {"p99": lat.p99, "requests": lat.samples})


def window_in(env: Env, workspace: Path, name: str, first: bool, count: int) -> Measure:
    """p50 of `count` reads of lines 1-50 of `name`, by ours."""
    call = ("file.read", {"path": name, "offset": 1, "limit": 50})
    with env.ours(workspace) as server:
        return _window_latency(server, _window_calls(workspace / name, call, first), count)


def reference_head_in(env: Env, workspace: Path, name: str, first: bool,
                      count: int) -> Measure:
    """The same by the reference server's read_text_file with head=50."""
    path = workspace / name
    call = McpSession.tool("read_text_file", {"path": str(path), "head": 50})
    with _started_reference(env, workspace) as server:
        return _window_latency(server, _window_calls(path, call, first), count,
                               McpSession.tool_ok)


def _window_ours(env: Env, first: bool) -> Measure:
    return window_in(env, env.tree, BIG, first, env.scale.sequential // 10)


def _window_reference(env: Env, first: bool) -> Measure:
    return reference_head_in(env, env.tree, BIG, first, env.scale.sequential // 10)


def window_ours(env: Env) -> Measure:
    return _window_ours(env, first=False)


def window_reference(env: Env) -> Measure:
    return _window_reference(env, first=False)


def window_first_ours(env: Env) -> Measure:
    return _window_ours(env, first=True)


def window_first_reference(env: Env) -> Measure:
    return _window_reference(env, first=True)


# memory ----------------------------------------------------------------------------------

def _peaks_mb(peak: PeakRss) -> list[float]:
    """Each process's own peak, largest first (the root server is among them)."""
    return sorted((round(v / 1e6, 1) for v in peak.by_pid.values() if v), reverse=True)


def rss_huge_ours(env: Env) -> Measure:
    """While reading: the server is up (it has answered a listing) when sampling starts,
    and the peak covers every process alive during three window reads."""
    size = (env.huge / "huge.txt").stat().st_size
    seconds = []
    with env.ours(env.huge) as server:
        server.request("file.list", {})
        with PeakRss(server.pid) as peak:
            for _ in range(3):
                start = time.perf_counter()
                result = server.request("file.read", {"path": "huge.txt", "offset": 1,
                                                      "limit": 50})["result"]
                seconds.append(time.perf_counter() - start)
                if result["end_line"] != 50:
                    raise ProtocolError(f"expected lines 1-50, got {result['end_line']}")
    return Measure("memory", peak.peak, {"processes": peak.processes, "file_bytes": size,
                                         "process_peaks_mb": _peaks_mb(peak),
                                         "read_seconds": statistics.median(seconds)})


def rss_search_ours(env: Env) -> Measure:
    """During the search, once the server is up (as for the window read)."""
    with env.ours(env.tree, *env.walking()) as server:
        server.request("file.list", {})
        with PeakRss(server.pid) as peak:
            result = server.request("file.search", {"pattern": TREE_PATTERN,
                                                    "max_results": ALL})["result"]
    return Measure("memory", peak.peak, {"processes": peak.processes,
                                         "process_peaks_mb": _peaks_mb(peak),
                                         "results": len(result["matches"])})


def rss_search_rg(env: Env) -> Measure:
    _, out, rss = _run([env.rg, "-n", "--no-require-git", "-e", TREE_PATTERN], env.tree)
    return Measure("memory", rss, {"processes": 1, "results": len(out.splitlines())})


# the soak ---------------------------------------------------------------------------------

def soak_ours(env: Env) -> Measure:
    workspace = env.scratch / "soak"
    shutil.rmtree(workspace, ignore_errors=True)
    soak.prepare(workspace)
    with env.ours(workspace, client=soak.SoakClient) as client:
        result = client.run(env.scale.soak, env.scale.soak_kill_every, random.Random(11))
    return Measure("throughput", result.requests / result.seconds, result.summary())


# the syntax guard: a looser-tier patch parsed before and after (docs/protocol.md, file.patch)

GUARD_TS_BYTES = 200 * 1024
_GUARD_NAMES = itertools.count()


def _python_4k() -> str:
    """About 4 KiB of Python, with a `counter` line inside a function to edit."""
    parts = [f"def handler_{i}(request, limit={i}):\n    if request.size > limit:\n"
             f"        return request.window({i})\n    return None\n\n\n" for i in range(40)]
    parts.insert(20, "def tick():\n    counter = 0\n    return counter\n\n\n")
    text = ""
    for part in parts:
        if len(text) + len(part) > 4096:
            break
        text += part
    return text


def _typescript(size: int) -> str:
    """About `size` bytes of TypeScript classes, one of them holding `counter = 0;`."""
    chunk = ("export class Handler{i} {{\n  private limit: number = {i};\n"
             "  async handle(request: Request<string>): Promise<number> {{\n"
             "    const items = request.items.filter((x) => x.size > this.limit);\n"
             "    for (const item of items) {{\n      if (item.kind === \"a\") {{\n"
             "        console.log(`item ${{item.name}}`);\n      }}\n    }}\n"
             "    return items.length;\n  }}\n}}\n\n")
    parts = [chunk.format(i=i) for i in range(size // len(chunk.format(i=0)))]
    parts.insert(len(parts) // 2, "export function tick(): number {\n  let counter = 0;\n"
                 "  return counter;\n}\n\n")
    return "".join(parts)


def _guarded_patches(env: Env, name: str, text: str, semicolon: str) -> Measure:
    """`counter = N` edited through the indentation tier (find indented with a tab, the
    file with spaces), one call at a time: with a parsed name the guard checks every call."""
    prefix = "let " if semicolon else ""
    (env.scratch / name).write_text(text)

    def call(i: int) -> Call:
        return "file.patch", {"path": name, "patches": [
            {"find": f"\t{prefix}counter = {i}{semicolon}\n",
             "replace": f"\t{prefix}counter = {i + 1}{semicolon}\n"}]}

    def tiered(reply: dict[str, Any]) -> str | None:
        wrong = is_success(reply)
        if wrong is None and reply["result"]["matches"][0]["tier"] != "indentation":
            return f"not an indentation-tier patch: {reply['result']['matches']}"
        return wrong
    with env.ours(env.scratch) as server:
        return _sequential_rate(server, call, env.scale.mutations, tiered)


def guard_py_ours(env: Env) -> Measure:
    return _guarded_patches(env, f"guard-{next(_GUARD_NAMES)}.py", _python_4k(), "")


def guard_py_unguarded(env: Env) -> Measure:
    return _guarded_patches(env, f"guard-{next(_GUARD_NAMES)}.txt", _python_4k(), "")


def guard_ts_ours(env: Env) -> Measure:
    return _guarded_patches(env, f"guard-{next(_GUARD_NAMES)}.ts", _typescript(GUARD_TS_BYTES),
                            ";")


def guard_ts_unguarded(env: Env) -> Measure:
    return _guarded_patches(env, f"guard-{next(_GUARD_NAMES)}.txt",
                            _typescript(GUARD_TS_BYTES), ";")


# a dialect call costs one job like a native one (`--tools` in docs/protocol.md) ------------

CLAUDE = ("--tools", "claude")


def read_claude(env: Env) -> Measure:
    with env.ours(env.scratch, *CLAUDE) as server:
        return _pipelined(server, env, _same(("Read", {"file_path": "read4k.txt"})))


def read_native_with_claude(env: Env) -> Measure:
    with env.ours(env.scratch, *CLAUDE) as server:
        return _pipelined(server, env, READ_4K)


def _edits(env: Env, tag: str, method: str) -> Measure:
    name = env.fresh_file(tag).name

    def call(i: int) -> Call:
        find, replace = _edit(i)
        if method == "Edit":
            return "Edit", {"file_path": name, "old_string": find, "new_string": replace}
        return "file.patch", {"path": name, "patches": [{"find": find, "replace": replace}]}
    with env.ours(env.scratch, *CLAUDE) as server:
        server.request("Read", {"file_path": name}, is_success)  # read before write
        return _sequential_rate(server, call, env.scale.mutations)


def edit_claude(env: Env) -> Measure:
    return _edits(env, "edit-claude", "Edit")


def patch_native_with_claude(env: Env) -> Measure:
    return _edits(env, "patch-native", "file.patch")


# apply_patch (--tools codex) against file.patch on the same server -----------------------

CODEX = ("--tools", "native,codex")


def _v4a(*edits: tuple[str, int]) -> dict[str, Any]:
    """One V4A patch making `_edit(i)` in each named file."""
    body = []
    for name, i in edits:
        find, replace = _edit(i)
        body += [f"*** Update File: {name}", "@@", f"-{find.rstrip()}", f"+{replace.rstrip()}"]
    return {"input": "\n".join(["*** Begin Patch", *body, "*** End Patch"])}


def _codex_rate(env: Env, tag: str, files: int, calls: Callable[[list[str], int], list[Call]]
                ) -> Measure:
    """Rounds of edits, one request at a time: each round makes one edit in each of
    `files` fresh files, with the requests `calls` gives; the rate is rounds a second."""
    names = [env.fresh_file(f"{tag}{k}").name for k in range(files)]
    with env.ours(env.scratch, *CODEX) as server:
        for i in range(WARMUP):
            for call in calls(names, i):
                server.request(*call, is_success)
        start = time.perf_counter()
        for i in range(WARMUP, WARMUP + env.scale.mutations):
            for call in calls(names, i):
                server.request(*call, is_success)
        elapsed = time.perf_counter() - start
    return Measure("throughput", env.scale.mutations / elapsed,
                   {"requests": env.scale.mutations})


def _patch_calls(names: list[str], i: int) -> list[Call]:
    return [("file.patch", {"path": name, "patches": [dict(zip(("find", "replace"),
                                                                _edit(i)))]})
            for name in names]


def _apply_calls(names: list[str], i: int) -> list[Call]:
    return [("apply_patch", _v4a(*((name, i) for name in names)))]


def apply_patch_one(env: Env) -> Measure:
    return _codex_rate(env, "v4a-one", 1, _apply_calls)


def patch_one_with_codex(env: Env) -> Measure:
    return _codex_rate(env, "patch-one", 1, _patch_calls)


def apply_patch_three(env: Env) -> Measure:
    return _codex_rate(env, "v4a-three", 3, _apply_calls)


def patch_three_with_codex(env: Env) -> Measure:
    return _codex_rate(env, "patch-three", 3, _patch_calls)
# a trained format's editor costs what file.patch does (docs/protocol.md, Tool sets) -------

def _trained_edits(env: Env, tag: str, toolset: str,
                   call_of: Callable[[str, str, str], Call]) -> Measure:
    """The same edits as patch_ours, one at a time, through `call_of(name, find,
    replace)` on a server running `--tools toolset`."""
    name = env.fresh_file(tag).name
    with env.ours(env.scratch, "--tools", toolset) as server:
        return _sequential_rate(server, lambda i: call_of(name, *_edit(i)),
                                env.scale.mutations)


def _native_patch(name: str, find: str, replace: str) -> Call:
    return "file.patch", {"path": name, "patches": [{"find": find, "replace": replace}]}


def str_replace_anthropic(env: Env) -> Measure:
    return _trained_edits(env, "edit-anthropic", "anthropic", lambda name, find, replace: (
        "str_replace_based_edit_tool", {"command": "str_replace", "path": name,
                                        "old_str": find, "new_str": replace}))


def patch_native_with_anthropic(env: Env) -> Measure:
    return _trained_edits(env, "patch-anthropic", "anthropic", _native_patch)


def replace_gemini(env: Env) -> Measure:
    return _trained_edits(env, "edit-gemini", "gemini", lambda name, find, replace: (
        "replace", {"file_path": name, "old_string": find, "new_string": replace}))


def patch_native_with_gemini(env: Env) -> Measure:
    return _trained_edits(env, "patch-gemini", "gemini", _native_patch)


# the table -------------------------------------------------------------------------------

REFERENCE = "reference MCP server"

SCENARIOS: list[Scenario] = [
    Scenario("read_pipelined_reference", "file.read 4 KiB, 64 in flight",
             f"{REFERENCE} read_text_file", Target("≥", 3),
             read_pipelined_ours, read_pipelined_reference),
    Scenario("read_latency_reference", "file.read 4 KiB, one at a time (p50)",
             f"{REFERENCE} read_text_file", Target("≤", 0.4),
             read_latency_ours, read_latency_reference),
    Scenario("read_pipelined_floor", "file.read 4 KiB, 64 in flight",
             "single-process Python floor", Target("≥", 1.0),
             read_pipelined_ours, read_pipelined_floor),
    Scenario("spawn_reference", "spawn to first answer", REFERENCE, Target("≤", 0.4),
             spawn_ours, spawn_reference),
    Scenario("mcp_read_pipelined", "MCP tools/call file_read 4 KiB, 64 in flight",
             f"{REFERENCE} read_text_file", Target("≥", 2),
             mcp_read_pipelined_ours, read_pipelined_reference),
    Scenario("mcp_read_latency", "MCP tools/call file_read 4 KiB, one at a time (p50)",
             f"{REFERENCE} read_text_file", Target("≤", 0.5),
             mcp_read_latency_ours, read_latency_reference),
    Scenario("http_read_pipelined", "file.read 4 KiB over --http /rpc, 64 in flight",
             "the same over stdio", Target("≥", 0.5),
             http_read_pipelined_ours, read_pipelined_ours),
    Scenario("http_read_latency", "file.read 4 KiB over --http /rpc, one at a time (p50)",
             "the same over stdio", Target("≤", 2.0),
             http_read_latency_ours, read_latency_ours),
    Scenario("http_mcp_read_pipelined",
             "MCP tools/call file_read 4 KiB over --http /mcp, 64 in flight",
             "the same over stdio", Target("≥", 0.5),
             http_mcp_read_pipelined_ours, mcp_read_pipelined_ours),
    Scenario("mcp_spawn", "MCP spawn to initialize answered", REFERENCE, Target("≤", 0.5),
             mcp_spawn_ours, mcp_spawn_reference),
    Scenario("mcp_overhead", "MCP tools/call file_read 4 KiB, 64 in flight",
             "ours, plain file.read (same run)", Target("≥", 0.9),
             mcp_read_pipelined_ours, read_pipelined_ours),
    Scenario("list_rg", "file.list **/*.md, {tree} tree", "rg --files -g '*.md'",
             Target("≤", 1.3), list_ours, list_rg),
    Scenario("list_reference", "file.list **/*.md, {tree} tree",
             f"{REFERENCE} search_files", None, list_ours, list_reference),
    Scenario("search_rg", "file.search, whole stdlib, all matches", "rg -n",
             Target("≤", 1.3), search_ours_ripgrep, search_rg),
    Scenario("search_grep", "file.search, python engine, whole stdlib", "grep -rn",
             Target("≤", 1.5), search_ours_python, search_grep),
    Scenario("patch_reference", "file.patch one edit, one at a time (fsync on)",
             f"{REFERENCE} edit_file", Target("≥", 2), patch_ours, patch_reference),
    Scenario("write_reference", "file.write 4 KiB, one at a time (fsync on)",
             f"{REFERENCE} write_file", None, write_ours, write_reference),
    Scenario("write_floor", "file.write 4 KiB, one at a time (fsync on)",
             "Python floor: temp, fsync, rename, fsync dir", Target("≥", 0.8), write_ours,
             write_floor),
    Scenario("window_first_reference",
             "file.read lines 1–50 of a {big} file, first read of its version (p50)",
             f"{REFERENCE} read_text_file head=50", Target("≤", 3),
             window_first_ours, window_first_reference),
    Scenario("window_reference",
             "file.read lines 1–50 of a {big} file, repeat on the unchanged file (p50)",
             f"{REFERENCE} read_text_file head=50", Target("≤", 1.2),
             window_ours, window_reference),
    Scenario("read_claude", "Read 4 KiB (--tools claude), 64 in flight",
             "file.read, same server", Target("≥", 0.9), read_claude,
             read_native_with_claude),
    Scenario("edit_claude", "Edit one edit (--tools claude), one at a time",
             "file.patch, same server", Target("≥", 0.9), edit_claude,
             patch_native_with_claude),
    Scenario("patch_guard_py", "file.patch, indentation tier, 4 KiB Python (syntax guard on)",
             "the same patch on a .txt copy (no guard)", Target("≥", 0.8), guard_py_ours,
             guard_py_unguarded),
    Scenario("patch_guard_ts",
             "file.patch, indentation tier, 200 KiB TypeScript (syntax guard on)",
             "the same patch on a .txt copy (no guard)", Target("≥", 0.8), guard_ts_ours,
             guard_ts_unguarded),
    Scenario("apply_patch_codex", "apply_patch one edit (--tools codex), one at a time",
             "file.patch, same server", Target("≥", 0.9), apply_patch_one,
             patch_one_with_codex),
    Scenario("apply_patch_3_files", "apply_patch of one edit in each of 3 files",
             "three file.patch calls, same server", Target("≥", 1.0), apply_patch_three,
             patch_three_with_codex),
    Scenario("str_replace_anthropic",
             "str_replace_based_edit_tool str_replace (--tools anthropic), one at a time",
             "file.patch, same server", Target("≥", 0.9), str_replace_anthropic,
             patch_native_with_anthropic),
    Scenario("replace_gemini", "replace one edit (--tools gemini), one at a time",
             "file.patch, same server", Target("≥", 0.9), replace_gemini,
             patch_native_with_gemini),
    Scenario("rss_huge", "read lines 1–50 of a {huge} file: peak RSS, all processes", "—",
             Target("≤", 100e6, absolute=True), rss_huge_ours, None),
    Scenario("rss_search", "search of the whole {tree} tree: peak RSS, all processes", "rg -n",
             None, rss_search_ours, rss_search_rg),
    Scenario("soak", "soak: mixed requests, 64 in flight, a worker SIGKILLed on a schedule",
             "—", None, soak_ours, None, long_run=True),
]
