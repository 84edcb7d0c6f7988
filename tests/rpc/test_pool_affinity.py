"""rpc.pool hands a job to the worker idle last: calls one after another run in one worker,
whose per-process caches (the syntax verdicts, the problems kept by a text's hash) hold
what the previous call left (issue 44: with workers taking turns, every other edit of a
file judged its text before again)."""

from __future__ import annotations

import asyncio
import os

from chorus_tools.rpc.process.pool import Pool
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.task import Task


def test_sequential_jobs_stay_in_one_worker_and_concurrent_ones_spread(root) -> None:
    ws = Workspace(str(root))

    async def go() -> tuple[set[int], set[int]]:
        pool = Pool(ToolContext(ws=ws), 2, 8)
        pool.start()
        sequential = set()
        for i in range(6):
            _, payload, _ = await pool.submit(Task("pool_targets:echo", {"n": i})).future
            sequential.add(payload["pid"])
        jobs = [pool.submit(Task("pool_targets:sleep", {"seconds": 0.3})) for _ in range(2)]
        concurrent = {(await job.future)[1]["pid"] for job in jobs}
        await pool.close()
        return sequential, concurrent

    try:
        sequential, concurrent = asyncio.run(go())
    finally:
        os.close(ws.root_fd)
    assert len(sequential) == 1
    assert len(concurrent) == 2
