"""The warm tree and content index (issue 24), measured as a session feels them.

A warm series starts one server, waits until `workspace.status` says it is ready, then
asks the same thing again and again on the unchanged tree; the walking series ask the same
of a server that walks on every call (`--index-memory 0`). Besides: the first call after
start, while the index is still building, against the same call on a walking server; the
time from start to ready; and the warm process's peak memory against its budget.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks import scenarios as sc
from benchmarks.env import Env
from benchmarks.generate import MIB, RARE_IDENT
from benchmarks.loadclient import ProtocolError, StdioServer
from benchmarks.mcp_reference import Unavailable
from benchmarks.report import Measure
from benchmarks.rss import holding, peak_rss_bytes

INDEX_BUDGET = 256 * MIB  # --index-memory's default, given explicitly where it is judged
WARM_PROCESS = "chorus-warm"  # in the warm process's name, or its open files' names
POLL = 0.02  # s between two workspace.status polls
READY_WITHIN = 900.0  # s: a 200k-file tree on a loaded 2-CPU machine, with room to spare
METHOD_NOT_FOUND = -32601
BUILDING = "building"


def _answered(response: dict[str, Any]) -> str | None:
    """A check that lets method_not_found through (a server without workspace.status)."""
    if "result" in response or response.get("error", {}).get("code") == METHOD_NOT_FOUND:
        return None
    return f"error response: {response.get('error')}"


def status(server: StdioServer) -> dict[str, Any] | None:
    """The server's workspace.status, or None when it has no such method."""
    response = server.request("workspace.status", {}, _answered)
    return response.get("result")


def wait_ready(server: StdioServer, settled: bool = False) -> dict[str, Any]:
    """Poll until the tree is ready and the index is not building (ready, partial or off),
    and with `settled` the symbol index too (its niced build takes a CPU from what is
    measured: at 200k files, a minute before it finds it does not fit the budget);
    the first poll starts the warm process if no call has yet. Returns the last status,
    the seconds from the server's start to ready and the largest `memory_bytes` seen. A
    tree that is off stays off: that fails, with the status's reason. A server that
    answers method_not_found comes from before the warm tree: it walks on every call, so
    there is nothing to wait for and {} comes back, which lets these series run on either
    build."""
    polled_peak = 0
    while True:
        state = status(server)
        if state is None:
            return {}
        waited = time.perf_counter() - server.started
        polled_peak = max(polled_peak, state["memory_bytes"])
        if state["tree"] == "ready" and state["index"] != BUILDING and not (
                settled and state.get("symbols") == BUILDING):
            return {"status": state, "ready_seconds": waited, "polled_peak_bytes": polled_peak}
        if state["tree"] == "off":
            raise ProtocolError(f"the warm tree is off: {state.get('reason')}")
        if waited > READY_WITHIN:
            raise ProtocolError(f"not ready within {READY_WITHIN:g} s: {state}")
        time.sleep(POLL)


def _ready_state(server: StdioServer) -> dict[str, Any]:
    """wait_ready (settled), kept short for a measure's detail: what served the calls."""
    ready = wait_ready(server, settled=True)
    if not ready:
        return {"warm": "no workspace.status: every call walked"}
    state = ready["status"]
    return {"tree": state["tree"], "index": state["index"],
            **({"reason": state["reason"]} if "reason" in state else {})}


def _warm_required(server: StdioServer) -> dict[str, Any]:
    """wait_ready on a server that must have a warm tree to measure."""
    ready = wait_ready(server)
    if not ready:
        raise Unavailable("no workspace.status: this server has no warm tree")
    return ready


# repeated calls on an unchanged tree: warm, and walking ---------------------------------

def warm_server(env: Env, tree: Path) -> tuple[StdioServer, dict[str, Any]]:
    """One server with the default options on `tree`, ready, shared by every warm
    measurement of the run on that tree (its start and build are measured apart:
    `build_in`); and what served the calls, for a measure's detail."""
    def start() -> tuple[StdioServer, dict[str, Any]]:
        server = env.ours(tree)
        try:
            return server, _ready_state(server)
        except BaseException:
            server.close()
            raise
    return env.kept(("warm", tree), start)


def _on_warm(env: Env, tree: Path, method: str, params: dict[str, Any],
             items: str) -> Measure:
    server, state = warm_server(env, tree)
    found = sc.median_call(env, server, method, params, items)
    found.detail.update(state)
    return found


def warm_list_in(env: Env, tree: Path) -> Measure:
    return _on_warm(env, tree, "file.list", {"pattern": sc.MD_GLOB}, "files")


def walk_list_in(env: Env, tree: Path) -> Measure:
    return sc.list_in(env, tree, *env.walking())


def warm_search_in(env: Env, tree: Path) -> Measure:
    return _on_warm(env, tree, "file.search", {"pattern": sc.TREE_PATTERN}, "matches")


def walk_search_in(env: Env, tree: Path) -> Measure:
    return sc.search_tree_in(env, tree, *env.walking())


def warm_rare_in(env: Env, tree: Path) -> Measure:
    return _on_warm(env, tree, "file.search", {"pattern": RARE_IDENT}, "matches")


def rg_rare_in(env: Env, tree: Path) -> Measure:
    return sc.rg_search_in(env, tree, RARE_IDENT)


# the first call after start --------------------------------------------------------------

def _first_call(env: Env, tree: Path, *options: str) -> Measure:
    """Process start to the answer of a search for RARE_IDENT sent at once (it starts the
    warm process, and walks), median of `repeats` starts after one untimed start; the
    state the server was in right after the answer goes into the detail."""
    times, counts, states = [], set(), set()
    for _ in range(env.scale.repeats + 1):
        with env.ours(tree, *options) as server:
            result = server.request("file.search", {"pattern": RARE_IDENT,
                                                    "max_results": sc.ALL})["result"]
            times.append(time.perf_counter() - server.started)
            if result["truncated"]:
                raise ProtocolError("file.search answered truncated")
            counts.add(len(result["matches"]))
            state = status(server)
            states.add("no workspace.status" if state is None
                       else f"tree {state['tree']}, index {state['index']}")
    if len(counts) != 1:
        raise ProtocolError(f"result counts differ between identical calls: {sorted(counts)}")
    return Measure("time", statistics.median(times[1:]), {
        "results": counts.pop(), "repeats": len(times) - 1,
        "state_after_answer": sorted(states)})


def first_call_in(env: Env, tree: Path) -> Measure:
    return _first_call(env, tree)


def first_call_walking_in(env: Env, tree: Path) -> Measure:
    return _first_call(env, tree, *env.walking())


# what the warm tree costs: build time, memory --------------------------------------------

def build_in(env: Env, tree: Path) -> Measure:
    """Process start to workspace.status ready."""
    with env.ours(tree) as server:
        ready = _warm_required(server)
    state = ready["status"]
    return Measure("time", ready["ready_seconds"], {
        key: state[key] for key in ("tree", "index", "files", "directories",
                                    "indexed_files", "indexed_bytes", "reason")
        if key in state})


def memory_in(env: Env, tree: Path) -> Measure:
    """The warm process's peak RSS once ready, with --index-memory INDEX_BUDGET: its
    kernel high-water mark (VmHWM) when it can be told among the server's processes (by
    its name, or a file it holds open named after it), else the largest `memory_bytes`
    its status showed while polled."""
    if not env.has_warm_tree:
        raise Unavailable("no --index-memory: this server has no warm tree")
    with env.ours(tree, "--index-memory", str(INDEX_BUDGET)) as server:
        ready = _warm_required(server)
        warm = holding(server.pid, WARM_PROCESS)
        peak = peak_rss_bytes(warm) if warm is not None else 0
    state = ready["status"]
    if state["memory_budget"] != INDEX_BUDGET:
        raise ProtocolError(f"memory_budget {state['memory_budget']}, asked {INDEX_BUDGET}")
    source = f"VmHWM of {WARM_PROCESS}" if peak else "largest memory_bytes polled"
    return Measure("memory", peak or ready["polled_peak_bytes"], {
        "source": source, "memory_bytes": state["memory_bytes"],
        "memory_budget": state["memory_budget"], "index": state["index"],
        "files": state["files"], "indexed_files": state["indexed_files"]})


def budget(env: Env, tree: Path) -> Measure:
    """The budget the memory is judged against (nothing to run: the ratio is the share)."""
    return Measure("memory", INDEX_BUDGET)
