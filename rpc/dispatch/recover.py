"""After a running job was killed: its method's `recover` job (docs/protocol.md, Errors).

A job killed midway (the request timeout force-kills its worker; a worker may die of
kill -9) may leave its change half made. A method that could (an archive import lands
entry after entry) names a `recover` target; the invoker runs it at once with the same
params, in a job of its own, before the call is answered: it rolls the change back and
says so, and the error gains `rolled_back`. If the recovery fails or is killed too, the
error goes out as it was and the change is left to the next start's recovery.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.method import Method
from chorus_tools.tools.task import Task

log = logging.getLogger("chorus.dispatch")

Outcome = tuple[bool, Any, dict[str, Any] | None]


def killed(method: Method, outcome: Outcome) -> bool:
    """Whether `outcome` is a job of a recoverable method stopped while it ran: by the
    request timeout (whose error names it) or a worker's death. A server shutting down
    answers `timeout` without naming one: its pool takes no more jobs, and the next
    start recovers."""
    ok, payload, _ = outcome
    return bool(method.recover) and not ok and isinstance(payload, ToolError) and (
        payload.code == "worker_crashed" or "timeout" in payload.details)


async def after_kill(method: Method, task: Task, outcome: Outcome,
                     run: Callable[[Task], Awaitable[Outcome]]) -> Outcome:
    """The call's outcome once `method.recover` ran: the same error, saying what became
    of the change; the recovery's record (what it freed, for the quota's account)."""
    error = outcome[1]
    ok: bool
    payload: Any
    try:
        ok, payload, audit = await run(Task(method.recover, task.kwargs, task.paths,
                                            mutating=True, room=task.room))
    except ToolError as exc:
        ok, payload, audit = False, exc, None
    if not ok:
        log.warning("%s: recovery after %s failed (%s); the next start completes it",
                    method.name, error.code, getattr(payload, "message", payload))
        return outcome
    return False, _said(error, payload), audit


def _said(error: ToolError, found: dict[str, Any]) -> ToolError:
    """The error in words that say where the workspace stands, and what to do."""
    details = error.details
    if error.code == "timeout":
        stopped = (f"The request ran past the {details.get('timeout', 0):g} s request "
                   "timeout and was stopped.")
        remedy = " Retry on a server started with a larger --request-timeout."
    else:
        stopped = (f"The worker running this request died (exit code "
                   f"{details.get('exit_code')}); it was replaced.")
        remedy = " Retry it."
    return ToolError(error.code, f"{stopped} {found['note']}"
                     f"{remedy if found['rolled_back'] else ''}",
                     **{**details, "rolled_back": found["rolled_back"]})
