"""The dispatcher and the MCP face driven in-process, as python-lsp-jsonrpc's tests drive
its endpoint: a fake pool in place of rpc/process/pool.py that records every job and
either answers it at once (running the task in this process, or from a script) or holds
it until the test answers it, and a client that feeds messages and collects replies."""

from __future__ import annotations

import asyncio
from typing import Any, Callable

import orjson

from chorus_tools.rpc.dispatch.dispatcher import Dispatcher
from chorus_tools.rpc.process.pool import Job
from chorus_tools.rpc.process.worker import run_job
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.task import Task

Outcome = tuple[bool, Any, Any]


class FakePool:
    """Pool's face to the invoker (submit, stop): every job is kept in `jobs`; `answer`
    gives a job's outcome at submit, or None to hold it for `finish`."""

    def __init__(self, answer: Callable[[Task], Outcome | None] = lambda _: None) -> None:
        self._answer = answer
        self.jobs: list[Job] = []
        self.stopped: list[tuple[Job, str]] = []  # (job, the error code it was stopped with)

    def submit(self, task: Task, *, stoppable: bool = True, batchable: bool = True,
               part: bool = False) -> Job:
        job = Job(len(self.jobs) + 1, task, stoppable, stoppable and batchable and not part,
                  asyncio.get_running_loop().create_future(), part=part)
        self.jobs.append(job)
        outcome = self._answer(task)
        if outcome is not None:
            job.future.set_result(outcome)
        return job

    def stop(self, job: Job, error: ToolError, *, force: bool = False) -> bool:
        if job.future.done():
            return True
        self.stopped.append((job, error.code))
        job.future.set_result((False, error, None))
        return True

    async def kept(self, task: Task) -> Any:
        return None  # no warm process here: every job runs

    def finish(self, job: Job, outcome: Outcome) -> None:
        """Answer a held job, as its worker would."""
        job.future.set_result(outcome)

    @property
    def tasks(self) -> list[Task]:
        return [job.task for job in self.jobs]


def in_process(ctx: ToolContext) -> Callable[[Task], Outcome]:
    """Answer every job by running its task here, as a worker would (guard included)."""
    return lambda task: run_job(ctx, task)


class Client:
    """Feeds messages to a dispatcher and keeps what it replies, in order."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher
        self.replies: list[Any] = []

    def send(self, message: Any) -> None:
        self.dispatcher.submit(orjson.dumps(message), self.replies.append)

    async def settle(self) -> None:
        """Until every message sent so far has its answer (or waits on a held job)."""
        for _ in range(20):
            await asyncio.sleep(0)

    async def answers(self) -> list[Any]:
        """Wait for every message to be answered; the replies, in order."""
        await asyncio.gather(*list(self.dispatcher.tasks))
        return self.replies

    async def call(self, method: str, params: Any = None, rid: Any = 1) -> dict[str, Any]:
        """One request, answered: its response."""
        self.send(request(rid, method, params))
        await self.answers()
        return next(r for r in self.replies if isinstance(r, dict) and r.get("id") == rid)


def request(rid: Any, method: str, params: Any = None) -> dict[str, Any]:
    message = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return message
