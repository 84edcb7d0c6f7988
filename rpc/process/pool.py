"""A small process pool made for an RPC server: a worker that dies or overruns fails at most
the job it was running (a read-only one gets a second try) and is replaced at once; what it
had not started runs elsewhere, and the others go on.

concurrent.futures' pool breaks as a whole when one worker dies, and cannot stop a single
running call; here every job can be stopped on its own (its worker is killed and
respawned), the queue is bounded (`server_busy`), and each outcome is delivered exactly once.
Workers are forked, so they start in milliseconds with the tools already imported.
"""

from __future__ import annotations

import asyncio
import fcntl
import itertools
import logging
import multiprocessing
import os
import pickle
import signal
import socket
import struct
import termios
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from chorus_tools.rpc.process import descriptors
from chorus_tools.rpc.process.channel import FrameReader, Undecodable, pieces, write_some
from chorus_tools.rpc.process.jobqueue import JobQueue
from chorus_tools.rpc.process.warm_replies import WarmReplies
from chorus_tools.rpc.process.worker import run_once, worker_main
from chorus_tools.tools.confine.workers import worker_ruleset
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools import pipes
from chorus_tools.tools.encoded import Encoded
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.handing import Handing
from chorus_tools.tools.task import Task
from chorus_tools.tools.warm.client import Pickled

log = logging.getLogger("chorus.pool")
_mp = multiprocessing.get_context("fork")
BATCH = 8  # most read-only jobs sent to one worker in one message
# a worker that dies before it answers anything is forked again after a wait that doubles
# from the first to the last (a worker that cannot start would otherwise be forked again
# and again at full speed: found when one test left its process unable to start workers)
START_WAIT = (0.05, 5.0)
START_FAILURES = 5  # such deaths in a row after which the jobs waiting are answered


@dataclass(eq=False)
class Job:
    id: int
    task: Task  # what the worker runs, decided once by the invoker
    stoppable: bool
    batchable: bool  # small and read-only: may share a message with others like it
    future: asyncio.Future
    worker: Worker | None = None
    retried: bool = False  # started once on a worker that died: the one retry is spent
    part: bool = False  # a part of a running split call: never counted as waiting


@dataclass(eq=False)
class Worker:
    process: Any
    to_worker: int  # pipe: jobs go out here
    from_worker: int  # pipe: outcomes come back here (non-blocking)
    reader: FrameReader
    handoff: socket.socket  # descriptors a reply hands over come here (descriptors.py)
    jobs: deque[Job] = field(default_factory=deque)  # sent, not answered; the first runs
    retired: bool = False  # closing down: not to be replaced
    closed: bool = False
    answered: bool = False  # it sent an outcome: a death since is no failure to start
    outbox: deque[memoryview] = field(default_factory=deque)  # its batch, not yet written


class Pool:
    def __init__(self, ctx: ToolContext, size: int, max_pending: int,
                 close_fds: tuple[int, ...] = (), replies_room: int = 0) -> None:
        self._ctx = ctx
        self._replies_room = replies_room  # bytes of whole warm replies kept; 0: none
        self._size = size
        self.restarts = 0  # workers replaced after a crash or a kill (chorus_worker_restarts)
        self._max_pending = max_pending
        self._close_fds = close_fds
        # descriptors opened after start that a new child must close too (--http's
        # connections: a copy in a worker would keep a closed connection open)
        self.more_fds: Callable[[], tuple[int, ...]] = tuple
        self._workers: list[Worker] = []
        self._idle: deque[Worker] = deque()
        self._queue = JobQueue()
        self._ids = itertools.count(1)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._background: list[Any] = []
        self._ruleset: int | None = None  # Landlock: every child enters it after fork
        self._replies: WarmReplies | None = None  # whole warm replies: warm_replies.py
        self._unborn = 0  # workers in a row that died before answering anything
        self._closed = False

    def close_in_children(self, *fds: int) -> None:
        """Descriptors opened after the pool was made that no child may keep."""
        self._close_fds += fds

    @property
    def ruleset(self) -> int | None:
        """The Landlock ruleset every child of the server enters after fork (None: none)."""
        return self._ruleset

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._ruleset = worker_ruleset(self._ctx)
        if self._ctx.warm is not None and self._replies_room:  # bound before: warm_process.py
            self._replies = WarmReplies(self._ctx.warm, self._replies_room)
        for _ in range(self._size):
            self._spawn()

    def background(self, target: str, **kwargs: Any) -> None:
        """Run `target(ctx, **kwargs)` once in a process of its own, beside the workers."""
        process = _mp.Process(target=run_once, daemon=True, name="chorus-background",
                              args=(self._ctx, Task(target, kwargs), os.getpid(), self.inherited(),
                                    self._ruleset))
        process.start()
        self._background.append(process)
        assert self._loop is not None
        self._loop.add_reader(process.sentinel, self._reap, process)

    def _reap(self, process: Any) -> None:
        """A background process finished: collect it, so no zombie lingers."""
        assert self._loop is not None
        self._loop.remove_reader(process.sentinel)
        process.join()
        self._background.remove(process)

    def submit(self, task: Task, *, stoppable: bool = True, batchable: bool = True,
               part: bool = False) -> Job:
        """Queue a job and return it; its future resolves to (ok, payload, record).
        A `part` of a running split call is always taken: it is that call's work."""
        if not (part or self._idle) and (waiting := self._waiting()) >= self._max_pending:
            raise ToolError("server_busy",
                            f"Server busy: {waiting} requests are already waiting "
                            "for a worker. Retry after some answers arrive.",
                            pending=waiting, limit=self._max_pending)
        assert self._loop is not None
        job = Job(next(self._ids), task, stoppable, stoppable and batchable and not part,
                  self._loop.create_future(), part=part)
        self._queue.append(job)
        self._dispatch()
        return job

    async def kept(self, task: Task) -> Encoded | None:
        """The whole warm reply a worker gave to this same `task`, while the tree is as it
        was made from (rpc/process/warm_replies.py); None: run it."""
        return None if self._replies is None else await self._replies.get(task)

    def idle(self) -> bool:
        """No job queued or running."""
        return not self._queue and not any(w.jobs for w in self._workers)

    def _waiting(self) -> int:
        """Requests accepted but not running: the queue's, and each batch behind its first
        job (docs/protocol.md, Messages: --max-pending counts them wherever they wait; a
        part, never batched, waits only in the queue and never counts)."""
        return self._queue.requests + sum(len(w.jobs) - 1 for w in self._workers if w.jobs)

    def stop(self, job: Job, error: ToolError, *, force: bool = False) -> bool:
        """Fail a job with `error`: dropped if queued or still waiting in its worker's
        batch; if running and stoppable (or `force`), its worker is killed and replaced.
        False if it could not be stopped."""
        if job.future.done():
            return True
        worker = job.worker
        if worker is None:
            self._queue.remove(job)
        elif worker.jobs[0] is job:
            if not (job.stoppable or force):
                return False
            self._kill(worker)
        job.future.set_result((False, error, None))
        return True

    async def close(self, timeout: float = 2.0) -> None:
        """Let idle workers exit on end-of-pipe; kill whatever is still alive after it.
        A worker still running a job is killed at once: the drain's bound has passed
        (docs/protocol.md, Shutdown), and it cannot see its end of pipe until the job ends."""
        self._closed = True
        for process in list(self._background):
            process.kill()
            self._reap(process)
        for worker in self._workers:
            worker.retired = True
            self._detach(worker)
            if worker.jobs:
                worker.process.kill()
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        for worker in self._workers:
            while worker.process.is_alive() and loop.time() < end:
                await asyncio.sleep(0.01)
            if worker.process.is_alive():
                worker.process.kill()
            worker.process.join(1.0)
            for job in worker.jobs:
                if not job.future.done():
                    job.future.set_result((False, _shutting_down(), None))
        self._workers.clear()
        self._idle.clear()
        for job in self._queue:
            if not job.future.done():
                job.future.set_result((False, _shutting_down(), None))
        self._queue.clear()
        if self._replies is not None:
            self._replies.close()
        if self._ruleset is not None:
            os.close(self._ruleset)
            self._ruleset = None

    def _spawn(self) -> Worker:
        jobs_r, jobs_w = os.pipe()
        results_r, results_w = os.pipe()
        pipes.widen(jobs_w)  # a large job or reply (an 8 MiB upload part, a 1 MiB read's
        pipes.widen(results_w)  # base64) crosses in 1 MiB steps, not 64 KiB wake-ups
        handoff, theirs = descriptors.pair()
        process = _mp.Process(target=worker_main, daemon=True, name="chorus-worker",
                              args=(jobs_r, results_w, theirs.fileno(), self._ctx,
                                    os.getpid(),
                                    self.inherited(jobs_w, results_r, handoff.fileno()),
                                    self._ruleset))
        process.start()
        os.close(jobs_r)
        os.close(results_w)
        theirs.close()
        os.set_blocking(results_r, False)
        os.set_blocking(jobs_w, False)
        worker = Worker(process, jobs_w, results_r, FrameReader(), handoff)
        self._workers.append(worker)
        self._idle.append(worker)
        assert self._loop is not None
        self._loop.add_reader(results_r, self._on_readable, worker)
        self._dispatch()
        return worker

    def inherited(self, *fds: int) -> tuple[int, ...]:
        """Descriptors a new child (a worker, or the watcher) must close: the wire, and
        the dispatcher's ends of every worker pipe (a copy held open in a sibling would
        hide a worker's end-of-pipe), and the descriptors workers handed over."""
        ends = [*fds, *(fd for w in self._workers if not w.closed
                        for fd in (w.to_worker, w.from_worker, w.handoff.fileno()))]
        if self._replies is not None:
            ends += self._replies.fds()
        return self._close_fds + self.more_fds() + tuple(ends) + descriptors.live()

    def _dispatch(self) -> None:
        """Hand queued jobs to idle workers. Under load, consecutive small read-only jobs
        go out several to a message (one wake-up of the worker instead of one each: the
        pipe write was a third of the dispatcher's time); a mutation, or a part of a
        split job (which must spread over the workers), always goes alone. The worker
        idle last goes first: calls one after another then run in one worker, whose
        caches hold what the previous call left (an edit's diagnostics find the text
        before it judged already; taking turns made every other edit judge it again)."""
        while self._queue and self._idle:
            worker = self._idle.pop()
            room = min(BATCH, 1 + len(self._queue) // (len(self._idle) + 1))
            batch = [self._queue.popleft()]
            while (len(batch) < room and batch[0].batchable and self._queue
                   and self._queue[0].batchable):
                batch.append(self._queue.popleft())
            for job in batch:
                job.worker = worker
            worker.jobs.extend(batch)
            # one message: the worker reads it whole before it runs any of it
            worker.outbox = pieces([(j.id, tuple(j.task)) for j in batch])  # tools/task.py
            self._write(worker)

    def _write(self, worker: Worker) -> None:
        """What the pipe takes of a worker's batch now; the rest when it has room (the
        loop goes on meanwhile: an 8 MiB upload part no longer holds stdin unread)."""
        assert self._loop is not None
        try:
            done = write_some(worker.to_worker, worker.outbox)
        except OSError:  # the worker is gone and never got this batch
            self._crashed(worker, took_batch=False)
            return
        if done:
            self._loop.remove_writer(worker.to_worker)
        else:
            self._loop.add_writer(worker.to_worker, self._write, worker)

    def _on_readable(self, worker: Worker) -> None:
        try:
            data = os.read(worker.from_worker, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._crashed(worker)
            return
        for outcome in worker.reader.feed(data):
            if isinstance(outcome, Undecodable):  # an outcome that cannot be unpickled: a bug
                outcome = (None, False, outcome.error, None)
            _, ok, payload, record = outcome
            worker.answered, self._unborn = True, 0
            job = worker.jobs.popleft()
            if type(payload) is Pickled:  # a warm listing handed on as it came
                payload = pickle.loads(payload)
            elif type(payload) is Encoded and self._replies is not None:
                self._replies.put(job.task, payload)
            elif type(payload) is Handing:  # its descriptors wait in the socket
                payload = descriptors.receive(worker.handoff, job.id, payload)
                ok = not isinstance(payload, ToolError)
            if not job.future.done():
                job.future.set_result((ok, payload, record))
        if not worker.jobs:
            self._idle.append(worker)
            self._dispatch()

    def _crashed(self, worker: Worker, *, took_batch: bool | None = None) -> None:
        """A worker died on its own. Whatever it had not started runs elsewhere. The job it
        was running: a read-only one gets one more try on another worker (so a poison
        input takes down two workers at most); a mutation may have been applied, so it is
        never run again and fails `worker_crashed` with `started: true`."""
        if took_batch is None:
            took_batch = not worker.outbox and _unread(worker.to_worker) == 0
        job = worker.jobs[0] if worker.jobs else None
        again = False
        if job is not None:
            again = not took_batch or (job.stoppable and not job.retried)
            job.retried = job.retried or (again and took_batch)
        self._replace(worker, keep_first=again,
                      unborn=not worker.answered and (job is None or not took_batch))
        code = worker.process.exitcode
        log.warning("worker %s died (exit code %s)", worker.process.pid, code)
        if job is not None and not again and not job.future.done():
            job.future.set_result((False, ToolError(
                "worker_crashed", "The worker running this request died "
                f"(exit code {code}); it was replaced. "
                + ("It had died on this request once already, so the input itself may "
                   "crash the worker." if job.stoppable else
                   "The change may or may not have been applied: read the file before "
                   "retrying."), exit_code=code, started=True), None))

    def _kill(self, worker: Worker) -> None:
        try:
            os.kill(worker.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self._replace(worker)

    def _replace(self, worker: Worker, *, keep_first: bool = False,
                 unborn: bool = False) -> None:
        """Take a dead or killed worker out and fork its successor. The jobs that waited
        behind the one it was running never started, so they go back to the head of the
        queue, and so does the first one when `keep_first`. A worker `unborn` (dead before
        it answered or took anything) is followed after a wait (START_WAIT)."""
        self._detach(worker)
        worker.process.join(1.0)
        if worker in self._workers:
            self._workers.remove(worker)
        if worker in self._idle:
            self._idle.remove(worker)
        waiting = list(worker.jobs)[0 if keep_first else 1:]
        worker.jobs.clear()
        for job in reversed(waiting):
            if not job.future.done():
                job.worker = None
                self._queue.appendleft(job)
        if worker.retired:
            return
        self.restarts += 1
        if not unborn:
            self._spawn()
            return
        self._unborn += 1
        if self._unborn >= START_FAILURES:
            self._fail_waiting(worker.process.exitcode)
        first, last = START_WAIT
        assert self._loop is not None
        self._loop.call_later(min(last, first * 2 ** (self._unborn - 1)), self._respawn)

    def _respawn(self) -> None:
        if not self._closed:
            self._spawn()

    def _fail_waiting(self, code: int | None) -> None:
        """No worker starts: the jobs waiting are answered (none ran) instead of waiting
        for one that may never come."""
        log.error("%d workers in a row died before answering (last exit code %s)",
                  self._unborn, code)
        for job in self._queue:
            if not job.future.done():
                job.future.set_result((False, ToolError(
                    "worker_crashed", f"No worker could start: the last {self._unborn} died "
                    f"before answering anything (exit code {code}). This request was not "
                    "run; retry it later.", exit_code=code, started=False), None))
        self._queue.clear()

    def _detach(self, worker: Worker) -> None:
        if worker.closed:
            return
        assert self._loop is not None
        self._loop.remove_reader(worker.from_worker)
        self._loop.remove_writer(worker.to_worker)
        worker.outbox.clear()
        os.close(worker.from_worker)
        os.close(worker.to_worker)
        worker.handoff.close()
        worker.closed = True


def _unread(fd: int) -> int:
    """Bytes written to a pipe and not read yet. The worker reads a batch whole before it
    runs any of it, and a worker has one batch at a time: none left unread means the
    worker took it and started its first job (or was about to: counted as started, the
    side that never runs a mutation twice). Asked only when a worker died, so the hot
    path pays nothing for it."""
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]


def _shutting_down() -> ToolError:
    return ToolError("timeout", "The server shut down before this request finished "
                     "(--shutdown-timeout). Retry it on a new server.")
