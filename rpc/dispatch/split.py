"""A split call run across the pool (tools/walk/fanout.py): every part goes out at once
as its own job, and the merger takes the finished parts in order, each one once, until it
has the answer; the parts still running are then stopped."""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Sequence

from chorus_tools.rpc.mcp.progress import Progress
from chorus_tools.rpc.process.worker import resolve
from chorus_tools.tools.task import Task
from chorus_tools.tools.walk.fanout import FanOut, Merger

Outcome = tuple[bool, Any, Any]


async def run_parts(fan: FanOut, run: Callable[[Task], Awaitable[Outcome]],
                    stop: Callable[[], None], progress: Progress | None) -> dict[str, Any]:
    """Run the parts across the pool (`run` one job of the call, `stop` all it still
    waits on); merge the finished prefix until it is enough."""
    merger: Merger = resolve(fan.merge)(fan.args)
    runs = [asyncio.ensure_future(run(Task(fan.part, kwargs, shared=fan.shared)))
            for kwargs in fan.parts]
    if progress is not None and fan.sizes:
        _count_parts(progress, fan, runs)
    try:
        for part in runs:
            ok, payload, _ = await part
            if not ok:
                raise payload
            merged = merger.add(payload)
            if merged is not None:
                return merged
        return merger.finish()
    finally:
        stop()
        await asyncio.gather(*runs, return_exceptions=True)


def _count_parts(progress: Progress, fan: FanOut,
                 runs: Sequence[asyncio.Future[Any]]) -> None:
    """Report the items of every part that has finished, in whatever order they end."""
    def count(_: asyncio.Future[Any] | None = None) -> None:
        progress.advance(sum(size for run, size in zip(runs, fan.sizes) if run.done()),
                         sum(fan.sizes), fan.unit)
    count()
    for run in runs:
        run.add_done_callback(count)
