"""The dispatcher: owns request ids, concurrency and cancellation, and is the one
place where an outcome becomes a response.

Contract:
- every request gets exactly one response, a notification none, a batch one array of the
  responses of its requests (nothing if it held only notifications);
- requests run concurrently and answer in any order;
- `$/cancelRequest {"id"}` answers the request -32800; `notifications/cancelled
  {"requestId"}` suppresses its response (MCP). A queued request is dropped, a running
  stoppable one (read, list, search, info) has its worker killed; a running mutation
  finishes, so its answer tells the truth about the file;
- a method call goes to the invoker (rpc/dispatch/invoker.py: validate, normalise once,
  order, run, record), and so does an MCP `tools/call`: MCP's methods (`initialize`,
  `tools/call`, ...) are answered by the MCP face (rpc/mcp/face.py), which calls the same
  invoker, never back into the dispatcher. The invoker writes the audit records, keeps
  the `claude` set's read-before-write state and, with the history off, the
  `anthropic` set's undo_edit memory (rpc/dispatch/undo.py; with it on, undo_edit comes
  from the history: rpc/dispatch/history_undo.py), makes watches live and gives a set's
  errors their own form (scope's `data.code`).

Envelopes and batches are checked by rpc/wire/envelope.py; a request is routed by the
registry (`tools.registry.callable_methods`, the selected tool sets) with a dict lookup.
(jsonrpcserver did the routing at first: it measured 87 µs a call, most of it
`inspect.signature` and its Either monads, and 110 ms of start-up importing jsonschema,
against a budget of about 120 µs a request and the spawn-to-first-answer target;
everything else it did, the envelope layer already did.)
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Callable

from chorus_tools.rpc.dispatch.call import Call
from chorus_tools.rpc.dispatch.discover import openrpc_document
from chorus_tools.rpc.dispatch.history_calls import HistoryCalls
from chorus_tools.rpc.dispatch.landed import Landed
from chorus_tools.rpc.dispatch.invoker import Invoker, Jobs
from chorus_tools.rpc.dispatch.records import Records
from chorus_tools.rpc.dispatch.session import ReadVersions, Seen
from chorus_tools.rpc.mcp.face import McpFace
from chorus_tools.rpc.ops.drain import Drain
from chorus_tools.rpc.ops.logs import log_request, requests_log
from chorus_tools.rpc.ops.metrics import Metrics
from chorus_tools.rpc.dispatch.ordering import PathOrder
from chorus_tools.rpc.dispatch.quota import UsageAccount
from chorus_tools.rpc.dispatch.undo import UndoEdits
from chorus_tools.rpc.process.watch_service import OwnWatches, Watches
from chorus_tools.rpc.wire.envelope import (Invalid, Request, error_response, parse,
                                            result_response, valid_id)
from chorus_tools.rpc.dispatch.unknown import advice
from chorus_tools.rpc.wire.errors import METHOD_NOT_FOUND, protocol_error, wire_error
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.method import Method
from chorus_tools.tools.registry import callable_methods

LSP_CANCEL = "$/cancelRequest"
MCP_CANCEL = "notifications/cancelled"
TOOLS_CALL = "tools/call"  # refused while draining as a result (_invoke_tool)
DISCOVER = "rpc.discover"
METRICS = "rpc.metrics"
# the counter and the result's field of the methods that move bytes (a PUT is an upload)
BYTES_MOVED = {"file.read_bytes": ("bytes_read", "length"),
               "file.write_bytes": ("bytes_written", "bytes_written"),
               "file.upload_commit": ("bytes_written", "bytes_written"),
               "archive.import_commit": ("bytes_written", "bytes")}
_NO_TARGET = object()


def _id_key(rid: Any) -> tuple[bool, Any]:
    return isinstance(rid, str), rid


class Dispatcher:
    """Messages in, responses out: admits requests, applies cancels, routes each to the
    invoker or the MCP face, and turns every outcome into its response."""

    def __init__(self, pool: Jobs, *, request_timeout: float,
                 records: Records | None = None,
                 toolsets: tuple[str, ...] = ("native",), read_only: bool = False,
                 watches: Watches | OwnWatches | None = None, roots: tuple[str, ...] = (),
                 history: HistoryCalls | None = None, reads: Seen | None = None,
                 order: PathOrder | None = None, document_bytes: int = 0,
                 metrics: Metrics | None = None, drain: Drain | None = None,
                 quota: UsageAccount | None = None, landed: Landed | None = None) -> None:
        self._toolsets = toolsets
        self._methods = callable_methods(toolsets)
        self._by_tool_name = {m.tool_name: m for m in self._methods.values()}
        self._metrics = metrics  # docs/protocol.md, Running many: shared by the server
        self._drain = drain
        self._invoker = Invoker(pool, self._methods, request_timeout=request_timeout,
                                records=records, watches=watches, roots=roots,
                                history=history,
                                session=ReadVersions(reads) if "claude" in toolsets else None,
                                undo=_undo_memory(toolsets, history),
                                order=order, quota=quota, landed=landed)
        self._inflight: dict[tuple[bool, Any], list[Call]] = {}
        self._mcp = McpFace(toolsets, self._invoke_tool, read_only, document_bytes,
                            self._invoker.refuse)
        self._labels = frozenset((*self._methods, DISCOVER, *McpFace.METHODS,
                                  LSP_CANCEL, MCP_CANCEL))
        self.tasks: set[asyncio.Task] = set()

    def submit(self, body: bytes, reply: Callable[[Any], None],
               step: bool = False) -> asyncio.Task:
        """Handle one framed message in the background; `reply` gets its response.
        Its requests are registered and its cancels applied now, in message order, so a
        cancel finds every request read before it, even one whose task has not run yet.
        `step`: the server's own call for an HTTP transfer in flight (see Call.step)."""
        envelope = parse(body)
        admitted = [self._admit(item, reply, step) for item in envelope.items]
        task = asyncio.get_running_loop().create_task(
            self._answer(envelope.batch, admitted, reply))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task  # done once the message is answered (HTTP waits on it)

    def _admit(self, item: Request | Invalid, reply: Callable[[Any], None],
               step: bool = False) -> Call | Invalid:
        if isinstance(item, Invalid):
            return item
        call = Call(item, reply, step=step)
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
            return self.refused(item.response)
        request = item.request
        metrics, started = self._metrics, time.perf_counter()
        if metrics is not None:
            metrics.begin()
        response: dict[str, Any] | None = None
        try:
            response = await self._call(item)
        finally:
            self._release(item)
            if metrics is not None or requests_log.isEnabledFor(logging.INFO):
                self._count(request, response, time.perf_counter() - started)
        if request.is_notification or item.cancelled == "mcp":
            return None
        return response

    def refused(self, response: dict[str, Any]) -> dict[str, Any]:
        """Count and log a message answered before it was a request (no JSON, no request
        object, or refused by the transport: past --max-message-bytes, a broken frame)
        as `unknown`, so a client sending garbage shows; returns `response`."""
        outcome = _outcome(response)
        if self._metrics is not None:
            self._metrics.begin()
            self._metrics.end("unknown", outcome, 0.0)
        if requests_log.isEnabledFor(logging.INFO):
            log_request(response.get("id"), "unknown", None, outcome, 0.0)
        return response

    def _count(self, request: Request, response: dict[str, Any] | None,
               seconds: float) -> None:
        """Count and log one answered request: its method as a bounded label, its outcome
        `ok` or the error's code (never its message: it may quote file text)."""
        outcome = _outcome(response)
        method = request.method if request.method in self._labels else "unknown"
        if self._metrics is not None:
            self._metrics.end(method, outcome, seconds)
            if outcome == "ok" and isinstance(response, dict):
                self._count_bytes(method, request.params, response.get("result"))
        if requests_log.isEnabledFor(logging.INFO) and not request.is_notification:
            log_request(request.id, method, self._path_of(request), outcome, seconds * 1000)

    def _path_of(self, request: Request) -> Any:
        """The path a request names, for its log line: its method's first path param
        given (file.move's `source`, Read's `file_path`), a tool call's through its tool."""
        params = request.params if isinstance(request.params, dict) else {}
        method = self._methods.get(request.method)
        if request.method == TOOLS_CALL and isinstance(params.get("arguments"), dict):
            method = self._by_tool_name.get(str(params.get("name")))
            params = params["arguments"]
        names = method.path_params if method is not None else ("path",)
        return next((params[n] for n in names if isinstance(params.get(n), str)), None)

    def _count_bytes(self, method: str, params: Any, result: Any) -> None:
        """Bytes of content through the plain JSON-RPC file methods: what a read returned,
        what a write sent, what bytes in and out moved (MCP tools/call and other sets are
        not counted: docs/protocol.md)."""
        assert self._metrics is not None
        if method == "file.read" and isinstance(result, dict):
            content = result.get("content")
            if isinstance(content, str):
                self._metrics.bytes_read += len(content.encode("utf-8", "surrogatepass"))
        elif method == "file.write" and isinstance(params, dict):
            content = params.get("content")
            if isinstance(content, str):
                self._metrics.bytes_written += len(content.encode("utf-8", "surrogatepass"))
        elif method in BYTES_MOVED and isinstance(result, dict):  # bytes in and out
            kind, key = BYTES_MOVED[method]
            if isinstance(moved := result.get(key), int):
                setattr(self._metrics, kind, getattr(self._metrics, kind) + moved)

    def streamed_out(self, nbytes: int) -> None:
        """Bytes a GET /files sent whole (rpc/wire/http_files.py), read as the others."""
        if self._metrics is not None:
            self._metrics.bytes_read += nbytes

    async def _call(self, call: Call) -> dict[str, Any]:
        """Route one request by the registry; every outcome becomes its response here."""
        request = call.request
        if request.method in (LSP_CANCEL, MCP_CANCEL):
            return result_response(request.id, None)
        if self._drain is not None and self._drain.draining and request.method != TOOLS_CALL \
                and not call.step:
            return error_response(request.id, wire_error(await self._refused(call)))
        if request.method == METRICS and request.method in self._methods:
            if request.params:
                return error_response(request.id, _takes_none(METRICS, request.params))
            if self._metrics is not None:
                await self._metrics.settled()
            figures = self._metrics.figures() if self._metrics is not None else {}
            return result_response(request.id, figures)
        if request.method == DISCOVER:
            if request.params:
                return error_response(request.id, _takes_none(DISCOVER, request.params))
            return result_response(request.id, openrpc_document(self._toolsets))
        if request.method in McpFace.METHODS:
            return await self._mcp.answer(call)
        method = self._methods.get(request.method)
        if method is None:
            return error_response(request.id, self._not_found(request.method))
        ok, payload = await self._invoke(call, method, request.params)
        if ok:
            return result_response(request.id, payload)
        return error_response(request.id, wire_error(payload))

    async def _invoke(self, call: Call, method: Method, params: Any) -> tuple[bool, Any]:
        """The invoker's call, a change counted as running while it runs (JSON-RPC's and
        MCP tools/call's alike): the drain waits for changes (rpc/ops/drain.py)."""
        drain = self._drain if method.mutating else None
        if drain is None:
            return await self._invoker.invoke(call, method, params)
        drain.changes += 1
        try:
            return await self._invoker.invoke(call, method, params)
        finally:
            drain.changes -= 1

    async def _invoke_tool(self, call: Call, method: Method,
                           params: Any) -> tuple[bool, Any]:
        """MCP tools/call's invoke: refused while the server drains as a tool failure,
        which the face answers as an isError result (docs/protocol.md, MCP)."""
        if self._drain is not None and self._drain.draining:
            return False, await self._refused(call, method, params)
        return await self._invoke(call, method, params)

    async def _refused(self, call: Call, method: Method | None = None,
                       params: Any = None) -> ToolError:
        """The drain's refusal of a new request, recorded when it names a change."""
        assert self._drain is not None
        refusal = self._drain.refusal()
        if method is None:
            method, params = self._methods.get(call.request.method), call.request.params
        if method is not None:
            await self._invoker.refuse(call, method, params, refusal)
        return refusal

    async def internal(self, method: Method, params: dict[str, Any],
                       rid: str) -> tuple[bool, Any]:
        """A call the server makes of itself (rpc/wire/http_files.py): `method` is none a
        client can name (its result holds descriptors: tools/handing.py), run through
        the invoker as every call is; `rid` names it in the records."""
        call = Call(Request(method.name, params, rid, {}), lambda _: None)
        return await self._invoke(call, method, params)

    def _not_found(self, name: str) -> dict[str, Any]:
        """-32601, with the methods it probably meant (`data.did_you_mean`)."""
        said, suggestions = advice(name, [*self._methods, DISCOVER, *McpFace.METHODS],
                                   self._toolsets,
                                   "rpc.discover")
        extra = {"did_you_mean": suggestions} if suggestions else {}
        return protocol_error(METHOD_NOT_FOUND, f"Method not found: {name!r}. {said}",
                              **extra)

    def _release(self, call: Call) -> None:
        key = _id_key(call.request.id)
        calls = self._inflight.get(key, [])
        if call in calls:
            calls.remove(call)
            if not calls:
                del self._inflight[key]

    def _cancel(self, note: Request) -> None:
        lsp = note.method == LSP_CANCEL
        params = note.params if isinstance(note.params, dict) else {}
        target = params.get("id" if lsp else "requestId", _NO_TARGET)
        if target is _NO_TARGET or not valid_id(target):
            return  # names no request we could hold: ignored, like an unknown id
        for call in self._inflight.get(_id_key(target), []):
            call.cancelled = "lsp" if lsp else "mcp"
            self._invoker.stop(call)


def _undo_memory(toolsets: tuple[str, ...], history: HistoryCalls | None) -> UndoEdits | None:
    """The anthropic set's per-session undo memory, needed only with the history off:
    with it on, undo_edit comes from the history (rpc/dispatch/history_undo.py)."""
    on = history is not None and history.on
    return UndoEdits() if "anthropic" in toolsets and not on else None


def _takes_none(name: str, params: Any) -> dict[str, Any]:
    """invalid_params for a method that takes no parameters (rpc.metrics, rpc.discover),
    naming the first one given, as every other refusal of a parameter does."""
    return wire_error(ToolError("invalid_params", f"{name} takes no parameters.",
                                param=next(iter(params)) if isinstance(params, dict)
                                else "params"))


def _outcome(response: dict[str, Any] | None) -> str:
    """A response's outcome label: `ok`, or its error's code (never its message); an MCP
    tool's failure, a result with `isError`, is its error's code too (its data is the
    structuredContent: rpc/mcp/face.py)."""
    if response is None:
        return "internal_error"
    if "error" in response:
        data = response["error"].get("data")
        return data.get("error", "") if isinstance(data, dict) else ""
    result = response.get("result")
    if isinstance(result, dict) and result.get("isError") is True:
        data = result.get("structuredContent")
        return data.get("error", "") if isinstance(data, dict) else ""
    return "ok"
