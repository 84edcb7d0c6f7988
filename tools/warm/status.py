"""workspace.status: what the warm tree, the content and symbol indexes hold
(tools/warm/answers.py), or that they are off. A server started with --index-memory 0 has
none; a warm process that does not answer yet is starting (this very question starts it,
as the first listing or search does: rpc/process/warm_process.py), and the reply says so
without waiting."""

from __future__ import annotations

from typing import Any

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.warm.client import ask


def status(ctx: ToolContext) -> dict[str, Any]:
    found = ask(ctx, "status")
    if found is not None:
        return found
    if ctx.warm is None:
        state, reason = "off", "--index-memory 0: every call walks the tree"
    else:
        state, reason = "building", "the warm process is starting"
    return {"tree": state, "index": state, "symbols": state, "files": 0, "directories": 0,
            "indexed_files": 0, "indexed_bytes": 0, "symbol_files": 0, "symbols_indexed": 0,
            "memory_bytes": 0, "memory_budget": 0, "reason": reason}
