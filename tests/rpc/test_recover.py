"""The invoker's follow-up after a killed job (rpc/dispatch/recover.py): run for a request
timeout or a worker's death of a method that names a `recover` target, never for a server
shutting down; its answer turns the error into one that says what became of the change."""

from __future__ import annotations

import asyncio
from typing import Any

from chorus_tools.rpc.dispatch import recover
from chorus_tools.tools.bytes.table import METHODS
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.task import Task

IMPORT = next(m for m in METHODS if m.name == "archive.import_commit")
UPLOAD = next(m for m in METHODS if m.name == "file.upload_commit")
TIMEOUT = ToolError("timeout", "The request ran past the 2 s request timeout.", timeout=2.0)
CRASHED = ToolError("worker_crashed", "died", exit_code=-9, started=True)
SHUTDOWN = ToolError("timeout", "The server shut down before this request finished.")


def test_killed_only_by_the_timeout_or_a_death_of_a_recoverable_method() -> None:
    assert recover.killed(IMPORT, (False, TIMEOUT, None))
    assert recover.killed(IMPORT, (False, CRASHED, None))
    assert not recover.killed(IMPORT, (False, SHUTDOWN, None))
    assert not recover.killed(IMPORT, (False, ToolError("write_failed", "x"), None))
    assert not recover.killed(IMPORT, (True, {}, None))
    assert not recover.killed(UPLOAD, (False, TIMEOUT, None))  # names no recover target


def _after(error: ToolError, answer: tuple[bool, Any, Any]) -> tuple[Any, list[Task]]:
    ran: list[Task] = []

    async def run(task: Task) -> tuple[bool, Any, Any]:
        ran.append(task)
        return answer

    task = Task(IMPORT.target or "", {"upload_id": "ab" * 16}, room=(1, 2, 3, 4))
    return asyncio.run(recover.after_kill(IMPORT, task, (False, error, None), run)), ran


def test_the_error_says_it_was_rolled_back() -> None:
    (ok, error, audit), ran = _after(TIMEOUT, (True, {"rolled_back": True, "note":
                                                      "The import was rolled back."},
                                               {"quota_grown": (0, 0, -5)}))
    assert ran == [Task(IMPORT.recover, {"upload_id": "ab" * 16}, mutating=True,
                        room=(1, 2, 3, 4))]
    assert not ok and error.code == "timeout" and error.details == {
        "timeout": 2.0, "rolled_back": True}
    assert "rolled back" in error.message and "larger --request-timeout" in error.message
    assert audit == {"quota_grown": (0, 0, -5)}  # what the recovery freed gets booked
    (_, crashed, _), _ = _after(CRASHED, (True, {"rolled_back": False, "note": "Nothing of "
                                                 "the archive had landed yet."}, None))
    assert crashed.details["rolled_back"] is False and crashed.details["exit_code"] == -9
    assert "--request-timeout" not in crashed.message


def test_a_failed_recovery_leaves_the_error_as_it_was() -> None:
    (ok, error, _), _ = _after(TIMEOUT, (False, ToolError("write_failed", "no"), None))
    assert not ok and error is TIMEOUT
