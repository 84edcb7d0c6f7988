"""The peers' rows (issue 43): the same calls as ours, each peer through its own tools, in
one run, as a ratio to ours (benchmarks/peers.py says who they are and how they start).

Rows: a 4 KiB read one at a time (p50) and 64 in flight, a one-edit replace, the first 100
matches of the common word on the run's tree, a glob (`*.md`) over it, and spawn to the
first answer (initialize included: an MCP client cannot call a tool before it). A peer
whose search runs in the background (Desktop Commander's start_search) is polled for
its results until it holds what ours answered, or says it is done.
"""

from __future__ import annotations

import os
import re
import statistics
import time
from pathlib import Path
from typing import Callable

from benchmarks import common
from benchmarks import scenarios as sc
from benchmarks.env import Env
from benchmarks.loadclient import McpSession, ProtocolError
from benchmarks.mcp_reference import Unavailable
from benchmarks.peers import OPENHANDS_ACI, PEERS, Peer, content_text, openhands_unavailable
from benchmarks.report import Measure, Target
from benchmarks.scenarios import Scenario

GLOB = "*.md"
SESSION = re.compile(r"session: (\S+)")
POLLS = 10_000  # a background search that never finishes fails its row, not the run


def session(env: Env, peer: Peer, root: Path) -> McpSession:
    """`peer` started on `root` and initialized; its own state (config, logs) under the
    benchmark cache, not the user's home."""
    home = env.cache / "peer-home"
    home.mkdir(parents=True, exist_ok=True)
    server = McpSession(peer.argv(env.cache, env.install, root), cwd=root,
                        stderr=env.logs / "peers.stderr",
                        env={**os.environ, "HOME": str(home)})
    try:
        server.initialize()
    except BaseException:
        server.close()
        raise
    return server


def result_lines(text: str) -> list[str]:
    """The results a Desktop Commander search reply lists (one 📄/📁 line each)."""
    return [line for line in text.splitlines() if line.startswith(("📄", "📁"))]


def background_results(server: McpSession, peer: Peer, start: tuple[str, dict],
                       wanted: int | None) -> int:
    """Start a background search and poll it until it lists `wanted` results (None: until
    it completes); how many it listed."""
    text = content_text(server.request(*start, check=McpSession.tool_ok)["result"])
    found = SESSION.search(text)
    if found is None:
        raise ProtocolError(f"{peer.name}: no search session in {text[:200]!r}")
    for _ in range(POLLS):
        more = content_text(server.call_tool("get_more_search_results", {
            "sessionId": found.group(1), "offset": 0, "length": wanted or 1}))
        done = "Status: COMPLETED" in more
        if wanted is not None and (len(result_lines(more)) >= wanted or done):
            return len(result_lines(more))
        if wanted is None and done:
            total = re.search(r"Total results found: (\d+)", more)
            return int(total.group(1)) if total else 0
    raise ProtocolError(f"{peer.name}: its search did not finish in {POLLS} polls")


def _read_path(env: Env) -> Path:
    return env.scratch / "read4k.txt"


def reads(peer: Peer, timed: Callable[..., Measure]) -> Callable[[Env], Measure]:
    """The peer's read of the 4 KiB file, measured by `timed` (sc._latency, sc._pipelined)."""
    def measure(env: Env) -> Measure:
        with session(env, peer, env.scratch) as server:
            return timed(server, env, sc._same(peer.read(_read_path(env))), McpSession.tool_ok)
    return measure


def replace(peer: Peer) -> Callable[[Env], Measure]:
    def measure(env: Env) -> Measure:
        path = env.fresh_file(f"patch-{peer.package.rsplit('/', 1)[-1]}")
        with session(env, peer, env.scratch) as server:
            return sc._sequential_rate(
                server, lambda i: peer.replace(path, *sc._edit(i), server),
                env.scale.mutations, McpSession.tool_ok)
    return measure


def first_common(peer: Peer) -> Callable[[Env], Measure]:
    search = peer.search
    assert search is not None  # a peer without one has no such row

    def measure(env: Env) -> Measure:
        with session(env, peer, env.tree) as server:
            return sc.median_time(env, lambda: background_results(
                server, peer, search(env.tree, common.COMMON, common.FIRST), common.FIRST))
    return measure


def glob(peer: Peer) -> Callable[[Env], Measure]:
    pattern = peer.glob
    assert pattern is not None  # a peer without one has no such row

    def measure(env: Env) -> Measure:
        with session(env, peer, env.tree) as server:
            return sc.median_time(env, lambda: background_results(
                server, peer, pattern(env.tree, GLOB), None))
    return measure


def spawn(peer: Peer) -> Callable[[Env], Measure]:
    def measure(env: Env) -> Measure:
        def once() -> float:
            with session(env, peer, env.scratch) as server:
                server.request(*peer.read(_read_path(env)), check=McpSession.tool_ok)
                return time.perf_counter() - server.started
        times = [once() for _ in range(env.scale.repeats)]
        return Measure("time", statistics.median(times), {"repeats": len(times)})
    return measure


def ours_first_common(env: Env) -> Measure:
    return common.walk_first_in(env, env.tree)


def ours_glob(env: Env) -> Measure:
    """file.list of every `*.md` beneath the tree, walking (a peer has no warm tree)."""
    return sc.list_ours(env)


def openhands(env: Env) -> Measure:
    raise Unavailable(openhands_unavailable() or f"{OPENHANDS_ACI} has no driver yet")


def _rows(peer: Peer) -> list[Scenario]:
    key = peer.package.rsplit("/", 1)[-1].replace("-", "_")
    faster, more = Target("≤", 1), Target("≥", 1)
    read, edit = peer.read(Path("x"))[1]["name"], peer.edit
    rows = [
        Scenario(f"{key}_read_latency", "file.read 4 KiB, one at a time (p50)",
                 f"{peer.name} {read}", faster, sc.read_latency_ours, reads(peer, sc._latency)),
        Scenario(f"{key}_read_pipelined", "file.read 4 KiB, 64 in flight",
                 f"{peer.name} {read}", more, sc.read_pipelined_ours, reads(peer, sc._pipelined)),
        Scenario(f"{key}_replace", "file.patch one edit, one at a time (fsync on)",
                 f"{peer.name} {edit}", more, sc.patch_ours, replace(peer)),
    ]
    if peer.search is not None:
        rows.append(Scenario(f"{key}_first_common", f"file.search {common.COMMON}, the first "
                             "100, {tree} tree, walking", f"{peer.name} start_search, "
                             "polled to 100", faster, ours_first_common, first_common(peer)))
    if peer.glob is not None:
        rows.append(Scenario(f"{key}_glob", f"file.list **/{GLOB}, {{tree}} tree, walking",
                             f"{peer.name} start_search files {GLOB}", faster, ours_glob,
                             glob(peer)))
    rows.append(Scenario(f"{key}_spawn", "spawn to first answer", f"{peer.name} (initialize, "
                         f"{read})", faster, sc.spawn_ours, spawn(peer)))
    return rows


SCENARIOS = [*(row for peer in PEERS for row in _rows(peer)),
             Scenario("openhands_aci_read_latency", "file.read 4 KiB, one at a time (p50)",
                      f"OpenHands {OPENHANDS_ACI} file_editor view", Target("≤", 1),
                      sc.read_latency_ours, openhands)]
