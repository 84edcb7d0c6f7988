"""The dispatcher: owns request ids, concurrency, deadlines and cancellation, and is the one
place where an outcome becomes a response.

Contract:
- every request gets exactly one response, a notification none, a batch one array of the
  responses of its requests (nothing if it held only notifications);
- requests run concurrently and answer in any order;
- `$/cancelRequest {"id"}` answers the request -32800; `notifications/cancelled
  {"requestId"}` suppresses its response (MCP). A queued request is dropped, a running
  stoppable one (read, list, search, info) has its worker killed; a running mutation
  finishes, so its answer tells the truth about the file;
- a mutating call is recorded (when records are on) before its response is sent;
- MCP's methods (`initialize`, `tools/call`, ...) are answered by the MCP face
  (`rpc.mcp`), which runs tools through `invoke`, the same path as a plain call;
- `workspace.watch` is checked by a worker like any call, then made live by rpc.watch,
  whose notifications go out through the request's own reply channel;
  `workspace.unwatch` is answered here.
- with the `claude` set, the session's read-before-write state (rpc/dispatch/session.py) is kept
  here and passed down to the claude writers; a set's `error_style` gives its errors
  their own form (scope's `data.code`).

Envelopes and batches are checked by `rpc.envelope`; a request is routed by the registry
(`tools.registry.callable_methods`, the selected tool sets) with a dict lookup. (jsonrpcserver did the routing at first: it
measured 87 µs a call, most of it `inspect.signature` and its Either monads, and 110 ms of
start-up importing jsonschema, against a budget of about 120 µs a request and the
spawn-to-first-answer target; everything else it did, the envelope layer already did.)
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any, Callable

from chorus_tools.rpc.dispatch.discover import openrpc_document
from chorus_tools.rpc.wire.envelope import (Invalid, Request, error_response, parse, result_response,
                          valid_id)
from chorus_tools.rpc.wire.errors import METHOD_NOT_FOUND, protocol_error, wire_error
from chorus_tools.rpc.mcp.face import McpFace
from chorus_tools.rpc.dispatch.ordering import PathOrder
from chorus_tools.rpc.process.pool import Job, Pool
from chorus_tools.rpc.mcp.progress import Progress
from chorus_tools.rpc.dispatch.history_calls import HistoryCalls
from chorus_tools.rpc.dispatch.records import Records
from chorus_tools.rpc.dispatch.session import ReadVersions
from chorus_tools.rpc.dispatch.validate import ParamsValidator
from chorus_tools.rpc.process.watch_service import Watches
from chorus_tools.rpc.process.worker import resolve
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.fanout import FanOut
from chorus_tools.tools.registry import Method, callable_methods
from chorus_tools.tools.confine.sandbox import normalize

log = logging.getLogger("chorus.dispatch")

LSP_CANCEL = "$/cancelRequest"
MCP_CANCEL = "notifications/cancelled"
DISCOVER = "rpc.discover"
WATCH, UNWATCH = "workspace.watch", "workspace.unwatch"  # watches live in rpc.watch
_NO_TARGET = object()


@dataclass(eq=False)
class Call:
    """One request in flight: the jobs it waits on and how it was cancelled, if it was."""

    request: Request
    reply: Callable[[Any], None]  # the client's channel: the response, and notifications
    jobs: set[Job] = field(default_factory=set)
    cancelled: str | None = None  # "lsp" or "mcp"
    progress: Progress | None = None  # MCP: the call asked for progress notifications

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """A notification about this call (progress, a watch's changes), sent on its
        channel and so in its framing."""
        self.reply({"jsonrpc": "2.0", "method": method, "params": params})


def _id_key(rid: Any) -> tuple[bool, Any]:
    return isinstance(rid, str), rid


class Dispatcher:
    def __init__(self, pool: Pool, *, request_timeout: float,
                 records: Records | None = None,
                 toolsets: tuple[str, ...] = ("native",), read_only: bool = False,
                 watches: Watches | None = None, roots: tuple[str, ...] = (),
                 history: HistoryCalls | None = None) -> None:
        self._pool = pool
        self._history = history
        self._watches = watches
        self._timeout = request_timeout
        self._records = records
        self._toolsets = toolsets
        self._methods = callable_methods(toolsets)
        self._validator = ParamsValidator(self._methods)
        self._roots = roots
        self._session = ReadVersions(roots) if "claude" in toolsets else None
        self._inflight: dict[tuple[bool, Any], list[Call]] = {}
        self._order = PathOrder()
        self._mcp = McpFace(toolsets, self.invoke, read_only)
        self.tasks: set[asyncio.Task] = set()

    def submit(self, body: bytes, reply: Callable[[Any], None]) -> None:
        """Handle one framed message in the background; `reply` gets its response.
        Its requests are registered and its cancels applied now, in message order, so a
        cancel finds every request read before it, even one whose task has not run yet."""
        envelope = parse(body)
        admitted = [self._admit(item, reply) for item in envelope.items]
        task = asyncio.get_running_loop().create_task(
            self._answer(envelope.batch, admitted, reply))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def _admit(self, item: Request | Invalid, reply: Callable[[Any], None]) -> Call | Invalid:
        if isinstance(item, Invalid):
            return item
        call = Call(item, reply)
        if item.method in (LSP_CANCEL, MCP_CANCEL):
            self._cancel(item)
        elif not item.is_notification:
            self._inflight.setdefault(_id_key(item.id), []).append(call)
        return call

    async def _answer(self, batch: bool, items: list[Call | Invalid],
                      reply: Callable[[Any], None]) -> None:
        if batch:
            answers = [a for a in await asyncio.gather(*map(self._item, items))
                       if a is not None]
            if answers:
                reply(answers)
        elif (answer := await self._item(items[0])) is not None:
            reply(answer)

    async def _item(self, item: Call | Invalid) -> dict[str, Any] | None:
        if isinstance(item, Invalid):
            return item.response
        request = item.request
        try:
            response = await self._call(item)
        finally:
            self._release(item)
        if request.is_notification or item.cancelled == "mcp":
            return None
        return response

    async def _call(self, call: Call) -> dict[str, Any]:
        """Route one request by the registry; every outcome becomes its response here."""
        request = call.request
        if request.method in (LSP_CANCEL, MCP_CANCEL):
            return result_response(request.id, None)
        if request.method == DISCOVER:
            if request.params:
                return error_response(request.id, wire_error(ToolError(
                    "invalid_params", "rpc.discover takes no parameters.",
                    param=next(iter(request.params)) if isinstance(request.params, dict)
                    else "params")))
            return result_response(request.id, openrpc_document(self._toolsets))
        if request.method in McpFace.METHODS:
            return await self._mcp.answer(call)
        method = self._methods.get(request.method)
        if method is None:
            return error_response(request.id, protocol_error(
                METHOD_NOT_FOUND, f"Method not found: {request.method!r}. Call "
                "rpc.discover for the list of methods."))
        ok, payload = await self.invoke(call, method, request.params)
        if ok:
            return result_response(request.id, payload)
        return error_response(request.id, wire_error(payload))

    async def invoke(self, call: Call, method: Method, params: Any) -> tuple[bool, Any]:
        """Validate, run and record one call of `method`: (True, result) or (False, the
        exception). Every face runs its tools through here."""
        try:
            checked = self._validator.check(method, params)
            if method.name == UNWATCH:
                ok, payload, audit = True, self._unwatch(checked["watch_id"]), None
            else:
                ok, payload, audit = await self._execute(call, method, checked)
            if ok and method.name == WATCH:  # the worker checked it; now make it live
                payload = {"watch_id": await self._watches.add(payload, call.notify)}
        except Exception as exc:
            ok, payload, audit = False, exc, None
        await self._record(call, method, params if isinstance(params, dict) else {},
                           payload, audit)
        return ok, (payload if ok else _styled(method, payload))

    def _unwatch(self, watch_id: str) -> dict[str, Any]:
        if not self._watches.remove(watch_id):
            raise ToolError("invalid_params", f"No watch has the id {watch_id!r} (it was "
                            "never made, or already ended). Pass a watch_id that "
                            "workspace.watch returned.", param="watch_id")
        return {"success": True}

    def _release(self, call: Call) -> None:
        key = _id_key(call.request.id)
        calls = self._inflight.get(key, [])
        if call in calls:
            calls.remove(call)
            if not calls:
                del self._inflight[key]

    async def _execute(self, call: Call, method: Method,
                       params: dict[str, Any]) -> tuple[bool, Any, dict[str, Any] | None]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._timeout
        mutates = method.mutates(params)
        keys = list(dict.fromkeys(_path_key(p, self._roots)
                                  for p in method.paths_of(params).values()))
        if not keys and method.path_params:  # an optional path left out: the root
            keys = [_path_key(None, self._roots)]
        entered = [(key, *self._order.enter(key, mutates)) for key in keys]
        try:
            own = {fut for _, _, fut in entered}  # a move never waits on its other path
            before = [f for _, waits, _ in entered for f in waits if f not in own]
            if before:
                _, late = await asyncio.wait(before, timeout=deadline - loop.time())
                if late:
                    raise self._timeout_error()
            # read-before-write state is taken and left in the path's order, so a write
            # pipelined after a read of its file sees that read
            session = self._session
            kwargs = params if session is None else session.prepare(method, params)
            history = self._history
            if history is not None:  # beside the records: see rpc/dispatch/history_calls.py
                kwargs = await history.prepare(method, kwargs, lambda target, job: self._run(
                    call, target, job, deadline, stoppable=False,
                    record=_recording(self._records is not None, True, True)))
            ok, payload, audit = await self._run(
                call, method.target, kwargs, deadline,
                record=_recording(self._records is not None,
                                  history is not None and history.on, mutates),
                stoppable=method.stoppable)
            if history is not None:
                payload = await history.finish(method, params, ok, payload, audit)
            if ok and session is not None:
                session.note(method, params, payload)
        finally:
            for key, _, fut in entered:
                self._order.leave(key, fut)
        if ok and isinstance(payload, FanOut):
            payload = await self._fan_out(call, payload, deadline)
        return ok, payload, audit

    async def _run(self, call: Call, target: str, kwargs: dict[str, Any], deadline: float,
                   *, record: bool | str = False, stoppable: bool = True,
                   batchable: bool = True) -> tuple[bool, Any, Any]:
        if call.cancelled:
            raise _cancelled()
        job = self._pool.submit(target, kwargs, record=record, stoppable=stoppable,
                                batchable=batchable)
        call.jobs.add(job)
        timer = asyncio.get_running_loop().call_at(deadline, self._expire, job)
        try:
            return await job.future
        finally:
            timer.cancel()
            call.jobs.discard(job)

    async def _fan_out(self, call: Call, fan: FanOut, deadline: float) -> dict[str, Any]:
        """Run the parts across the pool; merge the finished prefix until it is enough."""
        merge = resolve(fan.merge)
        runs = [asyncio.ensure_future(self._run(call, fan.part, kwargs, deadline,
                                                batchable=False))
                for kwargs in fan.parts]
        if call.progress is not None and fan.sizes:
            self._count_parts(call.progress, fan, runs)
        results: list[dict[str, Any]] = []
        try:
            for i, run in enumerate(runs):
                ok, payload, _ = await run
                if not ok:
                    raise payload
                results.append(payload)
                merged = merge(fan.args, results, i == len(runs) - 1)
                if merged is not None:
                    return merged
            return merge(fan.args, results, True)
        finally:
            for job in list(call.jobs):
                self._pool.stop(job, _cancelled())
            await asyncio.gather(*runs, return_exceptions=True)

    @staticmethod
    def _count_parts(progress: Progress, fan: FanOut, runs: list[asyncio.Future]) -> None:
        """Report the items of every part that has finished, in whatever order they end."""
        def count(_: asyncio.Future | None = None) -> None:
            progress.advance(sum(size for run, size in zip(runs, fan.sizes) if run.done()),
                             sum(fan.sizes), fan.unit)
        count()
        for run in runs:
            run.add_done_callback(count)

    def _expire(self, job: Job) -> None:
        self._pool.stop(job, self._timeout_error(), force=True)

    def _timeout_error(self) -> ToolError:
        return ToolError(
            "timeout", f"The request ran past the {self._timeout:g} s request timeout and "
            "was stopped. Narrow it (a smaller window, path or pattern) and retry.",
            timeout=self._timeout)

    def _cancel(self, note: Request) -> None:
        lsp = note.method == LSP_CANCEL
        params = note.params if isinstance(note.params, dict) else {}
        target = params.get("id" if lsp else "requestId", _NO_TARGET)
        if target is _NO_TARGET or not valid_id(target):
            return  # names no request we could hold: ignored, like an unknown id
        for call in self._inflight.get(_id_key(target), []):
            call.cancelled = "lsp" if lsp else "mcp"
            for job in list(call.jobs):
                self._pool.stop(job, _cancelled())

    async def _record(self, call: Call, method: Method, params: dict[str, Any],
                      payload: Any, audit: dict[str, Any] | None) -> None:
        if self._records is None or not method.mutates(params):
            return
        outcome = payload.code if isinstance(payload, ToolError) else (
            "internal_error" if isinstance(payload, BaseException) else "ok")
        path, *others = method.paths_of(params).items() or [(None, None)]
        if outcome != "ok" and "sha256_before" not in (audit or {}):
            audit = await self._unchanged(call, path[1])
        try:
            self._records.append(rid=call.request.id if not call.request.is_notification
                                 else None, method=method.name, path=path[1],
                                 outcome=outcome, audit=audit, more_paths=dict(others))
        except OSError:
            log.exception("cannot append the audit record")

    async def _unchanged(self, call: Call, path: Any) -> dict[str, Any] | None:
        """The hashes of the file a call refused before looking at it (refused params, a
        limit): a worker reads them, since the dispatcher touches no file."""
        if not isinstance(path, str):
            return None
        deadline = asyncio.get_running_loop().time() + self._timeout
        try:
            ok, payload, _ = await self._run(call, "chorus_tools.tools.mutate.audit:current_hashes",
                                             {"path": path}, deadline)
        except ToolError:
            return None
        return payload if ok else None


def _recording(records: bool, history: bool, mutates: bool) -> bool | str:
    """What a job's worker fills in: audit hashes and the replaced content (True), the
    replaced content only ("keep": no hashing for records that are off), or nothing."""
    if not mutates or not (records or history):
        return False
    return True if records else "keep"


def _styled(method: Method, error: BaseException) -> BaseException:
    """A tool set's own form of its errors (scope's data.code); a failure to give it is
    a bug, logged, and the error goes out as it was."""
    if not method.error_style or not isinstance(error, ToolError):
        return error
    try:
        return resolve(method.error_style)(error)
    except Exception:
        log.exception("error style %s failed", method.error_style)
        return error


def _cancelled() -> ToolError:
    return ToolError("cancelled", "The request was cancelled by the client.")


def _path_key(path: Any, roots: tuple[str, ...]) -> str:
    """The ordering key of a call: its path, normalised lexically when that is possible."""
    try:
        return normalize(path if path is not None else ".", allow_empty=True, roots=roots)
    except ToolError:
        return str(path)
