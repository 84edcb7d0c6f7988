"""The loop each worker process runs: receive jobs, call the tools, send the outcomes.

A worker is forked from the dispatcher with the workspace's pinned root descriptor already
open. It never sees JSON-RPC: a message to it is a list of jobs (job id, Task: what to run,
decided once by the invoker, see tools/task.py), read whole before the first runs, so the
dispatcher's write never waits on a running job; each outcome (job id, ok, result or
ToolError, audit record or None) goes back as soon as its job ends.
"""

from __future__ import annotations

import ctypes
import logging
import os
import pickle
import select
import signal
import socket
from functools import cache
from typing import Any, Callable

from chorus_tools.rpc.process import descriptors
from chorus_tools.rpc.process.channel import frame, receive, write_all
from chorus_tools.tools.confine.workers import enter
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.handing import Handing
from chorus_tools.tools.mutate import reserve
from chorus_tools.tools.mutate.quota import Room
from chorus_tools.tools.task import Task
from chorus_tools.tools.method import load
from chorus_tools.tools.confine.policy import guard
from chorus_tools.tools.registry import ALL_METHODS

_PR_SET_PDEATHSIG = 1
_PR_SET_NAME = 15
log = logging.getLogger("chorus.worker")


@cache
def resolve(target: str) -> Callable[..., Any]:
    return load(target)


def die_with_parent() -> None:
    """Ask the kernel to SIGKILL this process when its parent dies, so that no worker (or
    ripgrep child) outlives the server, even a server killed with SIGKILL."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def name_process(name: str) -> None:
    """Name this process in /proc/PID/comm (ps, top), so a service child is told from a
    worker at a glance."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_NAME, name.encode()[:15], 0, 0, 0)


def run_job(ctx: ToolContext, task: Task) -> tuple[bool, Any, dict[str, Any] | None]:
    ctx.record = {} if task.record or task.keep or task.room is not None else None
    ctx.room, ctx.grown = (None if task.room is None else Room._make(task.room)), (0, 0, 0)
    ctx.auditing = task.record  # False: the history's content only, no audit hashes
    ctx.ws.normalised = task.paths
    ok = False
    try:
        guard(ctx, task)  # --read-only and --deny, before the tool runs
        kwargs = {**pickle.loads(task.shared), **task.kwargs} if task.shared else task.kwargs
        result = resolve(task.target)(ctx, **kwargs)
        ok = True
        return True, result, ctx.record
    except ToolError as exc:
        return False, exc, ctx.record
    except Exception as exc:  # a bug: report it, keep serving
        log.exception("tool %s failed", task.target)
        return False, ToolError(
            "internal_error", f"Internal error in chorus-tools (a bug, not your input): "
            f"{type(exc).__name__}: {exc}. Details are in the server's log."), ctx.record
    finally:
        ctx.ws.normalised = {}
        if task.keep:
            reserve.settle(ctx, ok)  # the history's room: tools/mutate/reserve.py


def become_child(parent_pid: int, close_fds: tuple[int, ...],
                 ruleset: int | None = None) -> bool:
    """Tie this forked process to the server and enter the workers' Landlock domain
    (tools/confine/workers.py, when given) before any job runs; False if the server is already
    gone."""
    die_with_parent()
    for fd in close_fds:  # the protocol stream belongs to the dispatcher alone
        try:
            os.close(fd)
        except OSError:
            pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # a SIGTERM sent to the whole process group (systemd's control group, `timeout`, a
    # shell's `kill %job`) is the server's to drain on (docs/protocol.md, Shutdown): a
    # child dying of it cut the job in flight. The server ends its children itself
    # (end of their pipe, else SIGKILL) and the kernel kills them with it (PDEATHSIG);
    # ripgrep and oxlint, started from here, inherit the ignoring.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.set_wakeup_fd(-1)  # the server loop's: a signal here must not wake it there
    enter(ruleset)
    return os.getppid() == parent_pid


def run_once(ctx: ToolContext, task: Task, parent_pid: int,
             close_fds: tuple[int, ...], ruleset: int | None) -> None:
    """A background task in a process of its own (the start-up sweep of temp files)."""
    name_process("chorus-oneshot")
    if become_child(parent_pid, close_fds, ruleset):
        ok, payload, _ = run_job(ctx, task)
        log.info("%s: %s", task.target, payload if ok else payload.message)


def warm_up(jobs_fd: int, quiet: float = 0.05) -> None:
    """Import the tools while no job is waiting, one module after each quiet moment: the
    server answers its first request without waiting for imports it does not need, and
    each tool's first call later pays none. poll, not select: select refuses a descriptor
    numbered past 1023, which a worker forked by a server holding many (HTTP connections,
    a launcher's leaked descriptors) has, and every worker died at start."""
    waiting = select.poll()
    waiting.register(jobs_fd, select.POLLIN)
    for method in ALL_METHODS:
        if waiting.poll(quiet * 1000):
            return
        try:
            if method.target is not None:
                resolve(method.target)
        except Exception:  # reported as internal_error when the tool is called
            log.exception("cannot import %s", method.target)


def worker_main(jobs_fd: int, results_fd: int, handoff_fd: int, ctx: ToolContext,
                parent_pid: int, close_fds: tuple[int, ...], ruleset: int | None) -> None:
    name_process("chorus-worker")
    if not become_child(parent_pid, close_fds, ruleset):
        return
    warm_up(jobs_fd)
    jobs = os.fdopen(jobs_fd, "rb")
    handoff = socket.socket(fileno=handoff_fd)  # rpc/process/descriptors.py
    while True:
        try:
            batch = receive(jobs)
        except (EOFError, OSError):
            return
        for job_id, fields in batch:
            task = Task._make(fields)
            try:  # no name holds the outcome past its write: it may hold a file's text
                write_all(results_fd, _outcome(job_id, task.target,
                                               _handed(handoff, job_id, run_job(ctx, task))))
            except OSError:
                return


def _handed(handoff: socket.socket, job_id: int, outcome: tuple[bool, Any, Any]
            ) -> tuple[bool, Any, Any]:
    """The outcome to write: a Handing's descriptors go through the socket first."""
    return descriptors.hand(handoff, job_id, outcome) if type(outcome[1]) is Handing \
        else outcome


def _outcome(job_id: int, target: str, outcome: tuple[bool, Any, Any]) -> bytes:
    ok, payload, record = outcome
    try:
        return frame((job_id, ok, payload, record))
    except Exception as exc:  # an unpicklable result is a bug too
        log.exception("cannot send the result of %s", target)
        return frame((job_id, False, ToolError(
            "internal_error", f"Internal error in chorus-tools: {exc}"), record))
