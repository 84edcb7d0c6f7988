"""The invoker: the one path every tool call takes, whichever face asked for it (plain
JSON-RPC from the dispatcher, `tools/call` from the MCP face).

validate → normalise once → order → (history) run (history) → record:
- the params are checked against the method's schema (rpc/dispatch/validate.py);
- its path params are normalised lexically once; the same result keys the path order,
  the claude session's read-before-write state, and travels in the job (tools/task.py)
  for the worker's --deny guard and the tool itself;
- the call waits for the earlier calls on its paths (rpc/dispatch/ordering.py), then one
  job runs in the pool, between the history's `prepare` and `finish`
  (rpc/dispatch/history_calls.py), still in the path's order: what a mutation replaced is
  kept before its record is written and its response sent; a tool that splits its work
  (a FanOut) has its parts run across the pool and merged as they finish
  (rpc/dispatch/split.py);
- a mutating call is recorded (when records are on) before its outcome is handed back.

`workspace.watch` is checked by a worker like any call, then made live by
rpc/process/watch_service.py; `workspace.unwatch` is answered here.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Iterable, Protocol

from chorus_tools.rpc.dispatch.call import Call, cancelled
from chorus_tools.rpc.dispatch.history_calls import HistoryCalls
from chorus_tools.rpc.dispatch.landed import Landed
from chorus_tools.rpc.dispatch.ordering import MARK, PathOrder
from chorus_tools.rpc.dispatch.quota import MEASURE, UsageAccount
from chorus_tools.rpc.dispatch import recover
from chorus_tools.rpc.dispatch.records import Records
from chorus_tools.rpc.dispatch.session import ReadVersions
from chorus_tools.rpc.dispatch.undo import UndoEdits
from chorus_tools.rpc.dispatch.split import run_parts
from chorus_tools.rpc.dispatch.validate import ParamsValidator
from chorus_tools.rpc.process.pool import Job
from chorus_tools.rpc.process.watch_service import OwnWatches, Watches
from chorus_tools.rpc.process.worker import resolve
from chorus_tools.tools.confine.sandbox import ROOT, normalize
from chorus_tools.tools.errors import ToolError, in_words
from chorus_tools.tools.method import Method
from chorus_tools.tools.task import Task
from chorus_tools.tools.walk.fanout import FanOut

log = logging.getLogger("chorus.dispatch")

WATCH, UNWATCH = "workspace.watch", "workspace.unwatch"  # watches live in watch_service
STATUS = "workspace.status"  # its usage and quota come from the account here
AUDIT_HASHES = "chorus_tools.tools.mutate.audit:current_hashes"

Outcome = tuple[bool, Any, dict[str, Any] | None]  # ok, result or error, audit hashes


class Jobs(Protocol):
    """What the invoker needs of the pool (rpc/process/pool.py; a fake one in tests)."""

    def submit(self, task: Task, *, stoppable: bool = True, batchable: bool = True,
               part: bool = False) -> Job:
        ...

    def stop(self, job: Job, error: ToolError, *, force: bool = False) -> bool: ...

    async def kept(self, task: Task) -> Any: ...


class Invoker:
    def __init__(self, pool: Jobs, methods: dict[str, Method], *, request_timeout: float,
                 records: Records | None = None, session: ReadVersions | None = None,
                 undo: UndoEdits | None = None,
                 watches: Watches | OwnWatches | None = None, roots: tuple[str, ...] = (),
                 history: HistoryCalls | None = None, order: PathOrder | None = None,
                 quota: UsageAccount | None = None, landed: Landed | None = None) -> None:
        self._pool = pool
        self._history = history
        self._validator = ParamsValidator(methods)
        self._timeout = request_timeout
        self._records = records
        self._session = session
        self._undo = undo
        self._watches = watches
        self._roots = roots
        self._order = order or PathOrder()  # shared by the HTTP sessions of one server
        self._quota = quota or UsageAccount()  # shared too: one account per workspace
        self._landed = landed or Landed()  # and what the server landed

    async def invoke(self, call: Call, method: Method, params: Any) -> tuple[bool, Any]:
        """Validate, run and record one call of `method`: (True, result) or (False, the
        exception, in the tool set's own error style)."""
        payload: Any  # the result, or the exception that ended the call
        checked = None  # refused params are named as the tool's schema names them
        try:
            checked = self._validator.check(method, params)
            if method.name == UNWATCH:
                ok, payload, audit = True, self._unwatch(checked["watch_id"]), None
            else:
                ok, payload, audit = await self._execute(call, method, checked)
            if ok and method.name == WATCH:  # the worker checked it; now make it live
                assert self._watches is not None
                payload = {"watch_id": await self._watches.add(payload, call.notify)}
        except Exception as exc:
            ok, payload, audit = False, exc, None
        await self._record(call, method, params if isinstance(params, dict) else {},
                           payload, audit)
        return ok, (payload if ok else _styled(method, payload, ran=checked is not None))

    async def refuse(self, call: Call, method: Method, params: Any, error: ToolError) -> None:
        """Record a call refused before it ran (the drain's shutting_down): a mutating
        call is recorded failed or not (docs/protocol.md, Audit records)."""
        await self._record(call, method, params if isinstance(params, dict) else {},
                           error, None)

    def _unwatch(self, watch_id: str) -> dict[str, Any]:
        if self._watches is None or not self._watches.remove(watch_id):
            raise ToolError("invalid_params", f"No watch has the id {watch_id!r} (it was "
                            "never made, or already ended). Pass a watch_id that "
                            "workspace.watch returned.", param="watch_id")
        return {"success": True}

    async def _execute(self, call: Call, method: Method, params: dict[str, Any]) -> Outcome:
        assert method.target is not None  # only unwatch has none, answered above
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._timeout
        mutates = method.mutates(params)
        paths, keys = self._normalised(method.paths_of(params).values())
        if not keys and method.path_params:  # an optional path left out: the root
            keys = [ROOT]
        if method.marks:
            keys = [MARK]
        # a dry run is ordered as the change it previews (a rewind's sees every earlier write)
        change = mutates or (method.mutating and method.audited
                             and params.get("dry_run") is True)
        entered = [(key, *self._order.enter(key, change)) for key in keys]
        try:
            own = {fut for _, _, fut in entered}  # a move never waits on its other path
            before = [f for _, waits, _ in entered for f in waits if f not in own]
            if before:
                _, late = await asyncio.wait(before, timeout=deadline - loop.time())
                if late:
                    raise self._timeout_error()
            # read-before-write state (claude) and undo memory (anthropic) are taken and
            # left in the path's order, so a write pipelined after a read sees that read
            session, undo, kwargs = self._session, self._undo, params
            seen = _session_key(method.path_of(params), paths)
            if session is not None:
                kwargs = session.prepare(method, kwargs, seen)
            if undo is not None:
                kwargs = undo.prepare(method, kwargs, seen)
            kwargs = self._landed.prepare(method, kwargs, paths)
            history = self._history
            if history is not None:  # beside the records: rpc/dispatch/history_calls.py
                kwargs = await history.prepare(method, kwargs, lambda job: self.run(
                    call, job, deadline, stoppable=False))
            task = Task(method.target, kwargs, paths,
                        method.mutating and not method.only_reads(params),
                        self._records is not None and mutates,
                        history is not None and history.on and mutates)
            quota = self._quota
            if quota.on and task.mutating:  # asked once, here: rpc/dispatch/quota.py
                async with quota.turn(lambda walk: self._measure(call, deadline, walk)
                                      ) as room:
                    ok, payload, audit = await self._run_task(
                        call, task._replace(room=tuple(room)), deadline, method)
                    quota.book(ok, audit)
            else:
                ok, payload, audit = await self._run_task(call, task, deadline, method)
            self._landed.note(audit)
            if history is not None:
                payload = await history.finish(method, params, ok, payload, audit)
            if ok and session is not None:
                session.note(method, params, payload, seen)
            if ok and undo is not None:
                payload = undo.note(method, params, payload, seen)
        finally:
            for key, _, fut in entered:
                self._order.leave(key, fut)
        if ok and method.name == STATUS:
            payload = {**payload, **await self._quota.report(
                lambda walk: self._measure(call, deadline, walk))}
        if ok and isinstance(payload, FanOut):
            payload = await run_parts(
                payload, lambda part: self.run(call, part, deadline, part=True),
                lambda: self.stop(call), call.progress)
        return ok, payload, audit

    async def _run_task(self, call: Call, task: Task, deadline: float,
                        method: Method) -> Outcome:
        try:
            outcome = await self.run(call, task, deadline, stoppable=method.stoppable)
        except ToolError as exc:  # never ran (cancelled, server_busy): the history
            return False, exc, None  # must hear of it too
        if recover.killed(method, outcome):  # rolled back before the answer
            outcome = await recover.after_kill(method, task, outcome, lambda job: self.run(
                call, job, asyncio.get_running_loop().time() + self._timeout,
                stoppable=False))
        return outcome

    async def _measure(self, call: Call, deadline: float,
                       walk: bool) -> dict[str, int] | None:
        """The workspace's usage now, counted by a worker (the invoker touches no file)."""
        ok, payload, _ = await self.run(call, Task(MEASURE, {"walk": walk}), deadline)
        if not ok:
            raise payload
        return payload

    def _normalised(self, given: Iterable[Any]) -> tuple[dict[str, str], list[str]]:
        """Each path given as its workspace-relative form, for those that have one (the
        tool refuses the others with their own error), and the call's ordering keys: those
        forms, the root for a path left empty or null, a path with no form as given."""
        paths: dict[str, str] = {}
        keys: dict[str, None] = {}
        for path in given:
            if isinstance(path, str):
                try:
                    key = paths[path] = normalize(path, allow_empty=True, roots=self._roots)
                except ToolError:
                    key = path
            else:
                key = ROOT if path is None else str(path)
            keys[key] = None
        return paths, list(keys)

    async def run(self, call: Call, task: Task, deadline: float, *, stoppable: bool = True,
                  batchable: bool = True, part: bool = False) -> Outcome:
        """One job in the pool for `call`, stopped at `deadline`; a `part` of its split
        work is never batched and never counted against --max-pending (the pool's); a
        whole warm reply still current is answered again without one (the pool's)."""
        kept = None if part else await self._pool.kept(task)
        if call.cancelled:
            raise cancelled()
        if kept is not None:
            return True, kept, None
        job = self._pool.submit(task, stoppable=stoppable, batchable=batchable, part=part)
        call.jobs.add(job)
        timer = asyncio.get_running_loop().call_at(deadline, self._expire, job)
        try:
            return await job.future
        finally:
            timer.cancel()
            call.jobs.discard(job)

    def stop(self, call: Call) -> None:
        """Stop every job `call` still waits on (cancelled, or no longer needed)."""
        for job in list(call.jobs):
            self._pool.stop(job, cancelled())

    def _expire(self, job: Job) -> None:
        self._pool.stop(job, self._timeout_error(), force=True)

    def _timeout_error(self) -> ToolError:
        return ToolError(
            "timeout", f"The request ran past the {self._timeout:g} s request timeout and "
            "was stopped. Narrow it (a smaller window, path or pattern) and retry.",
            timeout=self._timeout)

    async def _record(self, call: Call, method: Method, params: dict[str, Any],
                      payload: Any, audit: dict[str, Any] | None) -> None:
        if self._records is None or not method.mutates(params):
            return
        outcome = payload.code if isinstance(payload, ToolError) else (
            "internal_error" if isinstance(payload, BaseException) else "ok")
        given = method.paths_of(params)
        first = method.path_params[0] if method.path_params else None
        if first in method.params.get("required", ()) and first not in given:
            given = {first: None, **given}  # a move without its source: no path (aliases
        path, *others = given.items() or [(None, None)]  # are never required)
        if outcome != "ok" and "sha256_before" not in (audit or {}):
            named = (audit or {}).get("path")  # a commit's tool names its path
            audit = await self._unchanged(call, path[1] if named is None else named)
            if named is not None:
                audit = {**(audit or {}), "path": named}
        try:
            self._records.append(rid=call.request.id if not call.request.is_notification
                                 else None, method=method.name, path=path[1],
                                 outcome=outcome, audit=audit,
                                 more_paths={} if method.paths_in else {
                                     str(name): given for name, given in others})
        except OSError:
            log.exception("cannot append the audit record")

    async def _unchanged(self, call: Call, path: Any) -> dict[str, Any] | None:
        """The hashes of the file a call refused before looking at it (refused params, a
        limit): a worker reads them, since the dispatcher touches no file."""
        if not isinstance(path, str):
            return None
        deadline = asyncio.get_running_loop().time() + self._timeout
        try:
            ok, payload, _ = await self.run(call, Task(AUDIT_HASHES, {"path": path}),
                                            deadline)
        except ToolError:
            return None
        return payload if ok else None


def _session_key(given: Any, paths: dict[str, str]) -> str | None:
    """The claude session's key of a path given: its normalised form (an empty path has
    none: no file is named)."""
    return paths.get(given) if isinstance(given, str) and given else None


def _styled(method: Method, error: BaseException, *, ran: bool) -> BaseException:
    """A tool set's own form of its errors: the core's names in the tool's words (for an
    error of its run: refused params already carry the schema's names), then the set's
    style (scope's data.code); a failure to give that style is a bug, logged, and the
    error goes out as it was."""
    if not isinstance(error, ToolError):
        return error
    if ran:
        error = in_words(error, method.words)
    if not method.error_style:
        return error
    try:
        return resolve(method.error_style)(error)
    except Exception:
        log.exception("error style %s failed", method.error_style)
        return error
