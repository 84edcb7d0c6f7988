"""A tool's answer as the runtime would finish it: a FanOut's parts run in order, merged
after each one until the merge has its answer (rpc/dispatch.py runs them in parallel)."""

from __future__ import annotations

from typing import Any

from chorus_tools.worker import resolve
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.fanout import FanOut


def settle(ctx: ToolContext, result: dict[str, Any] | FanOut) -> dict[str, Any]:
    if not isinstance(result, FanOut):
        return result
    part, merge = resolve(result.part), resolve(result.merge)
    done: list[dict[str, Any]] = []
    for kwargs in result.parts:
        done.append(part(ctx, **kwargs))
        final = merge(result.args, done, len(done) == len(result.parts))
        if final is not None:
            return final
    raise AssertionError("merge returned nothing on the complete results")
