"""workspace.status: what the warm tree and the content index hold (tools/warm/answers.py),
or that they are off. A server started with --index-memory 0 has neither; one whose warm
process is not answering (starting again after a kill) says so, without waiting."""

from __future__ import annotations

from typing import Any

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.warm.client import ask


def status(ctx: ToolContext) -> dict[str, Any]:
    found = ask(ctx, "status")
    if found is not None:
        return found
    reason = ("--index-memory 0: every call walks the tree" if ctx.warm is None
              else "the warm process is not answering (starting, or starting again)")
    return {"tree": "off", "index": "off", "files": 0, "directories": 0, "indexed_files": 0,
            "indexed_bytes": 0, "memory_bytes": 0, "memory_budget": 0, "reason": reason}
