"""What a model pays to know the tools, and what remembering the claude set's reads on
disk costs (docs/protocol.md, MCP).

Context rows: for every tool set, `tools/list`'s names, descriptions and input schemas as
compact JSON (what a host puts in the model's context), against the reference filesystem
server's, both asked over MCP in the same run; the whole `tools/list` and `instructions`
ride along in the row's detail.

State rows: the claude set's Read (64 in flight) and Edit (one at a time) with the reads
on disk, the default, against the same server keeping them in memory (its state directory
placed inside the workspace, which the server refuses to write: it warns and keeps reads
for the process).
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from benchmarks.env import Env
from benchmarks.loadclient import McpSession
from benchmarks.report import Measure, Target
from benchmarks.scenarios import REFERENCE, Scenario, edit_claude, read_claude
from chorus_tools.rpc.dispatch.history_home import workspace_key
from chorus_tools.rpc.dispatch.state_places import state_base
from chorus_tools.tools.registry import TOOLSETS


def _listed(session: McpSession) -> Measure:
    """The core bytes of one tools/list, checked to hold tools."""
    with session:
        init = session.initialize()
        tools = session.request("tools/list", {})["result"]["tools"]
    if not tools:
        raise RuntimeError("tools/list listed no tool")
    core = [{"name": t["name"], "description": t.get("description", ""),
             "inputSchema": t["inputSchema"]} for t in tools]
    return Measure("bytes", len(_compact(core)), {
        "tools": len(tools), "tools_list_bytes": len(_compact(tools)),
        "instructions_bytes": len(init.get("instructions", "").encode())})


def _compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def _context_ours(toolset: str) -> Callable[[Env], Measure]:
    def measure(env: Env) -> Measure:
        return _listed(env.ours(env.scratch, "--tools", toolset, client=McpSession))
    return measure


def context_reference(env: Env) -> Measure:
    return _listed(env.reference(env.scratch))


@contextmanager
def _reads_in_memory(env: Env) -> Iterator[None]:
    """Servers started inside keep the claude set's reads in memory: their state directory
    lies inside the workspace (see above). The history, whose default place follows the
    same variable and may not lie inside, is given where ours keeps it."""
    before = os.environ.get("XDG_STATE_HOME")
    history = os.path.join(state_base(), "history", workspace_key(str(env.scratch)))
    os.environ["XDG_STATE_HOME"] = str(Path(env.scratch) / ".state")
    options, env.options = env.options, (*env.options, "--history", history)
    try:
        yield
    finally:
        env.options = options
        if before is None:
            del os.environ["XDG_STATE_HOME"]
        else:
            os.environ["XDG_STATE_HOME"] = before


def _in_memory(measure: Callable[[Env], Measure]) -> Callable[[Env], Measure]:
    def baseline(env: Env) -> Measure:
        with _reads_in_memory(env):
            return measure(env)
    return baseline


SCENARIOS: list[Scenario] = [
    *(Scenario(f"context_{toolset}",
               f"tools/list names+descriptions+inputSchemas (--tools {toolset})",
               f"{REFERENCE} (14 tools)", Target("≤", 1.0), _context_ours(toolset),
               context_reference)
      for toolset in TOOLSETS),
    Scenario("read_claude_state", "Read 4 KiB (--tools claude), 64 in flight, reads on disk",
             "the same, reads in memory", Target("≥", 0.9), read_claude,
             _in_memory(read_claude)),
    Scenario("edit_claude_state", "Edit one edit (--tools claude), one at a time, reads on "
             "disk", "the same, reads in memory", Target("≥", 0.9), edit_claude,
             _in_memory(edit_claude)),
]
