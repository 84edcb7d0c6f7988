"""The MCP face (docs/protocol.md, MCP): the same server, spoken as a Model Context Protocol server.

A client that sends `initialize` is an MCP client; one that never does calls `file.*`
directly, on the same connection. This module only translates: `tools/list` is the
registry's listed methods, and `tools/call` runs a method through the invoker
(rpc/dispatch/invoker.py, the one validation and execution path, which the dispatcher
calls too: nothing here calls back into the dispatcher), then turns its outcome into an MCP
result: `content` for the model, `structuredContent` the exact result, and a tool failure
as `isError: true` carrying the error's message and data, so the model can recover.

Two eras on one connection (rpc/mcp/revision.py): `initialize` picks a handshake version
for the connection; a request naming 2026-07-28 in its `_meta` is served statelessly,
initialized or not, and `server/discover` is answered whenever it comes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any, Awaitable, Callable
from urllib.parse import quote

from chorus_tools.rpc.dispatch.call import Call
from chorus_tools.rpc.dispatch.discover import server_version
from chorus_tools.rpc.dispatch.unknown import advice
from chorus_tools.rpc.wire.envelope import error_response, result_response
from chorus_tools.rpc.wire.errors import (CODES, INVALID_REQUEST, METHOD_NOT_FOUND,
                                          protocol_error, wire_error)
from chorus_tools.rpc.mcp.content import content
from chorus_tools.rpc.mcp.progress import Progress
from chorus_tools.rpc.mcp.revision import (HANDSHAKE_VERSIONS, REMOVED, SUPPORTED,
                                           Unsupported, complete, incomplete_meta,
                                           is_stateless, requested_version)
from chorus_tools.tools.encoded import decoded
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.registry import METHODS, Method, callable_methods, listed_methods

VERSIONS = HANDSHAKE_VERSIONS  # what initialize negotiates, oldest first
CAPABILITIES = {"tools": {"listChanged": False}}
CACHEABLE = frozenset({"server/discover", "tools/list"})
READ, READ_BYTES = "file.read", "file.read_bytes"
DOCUMENTS = frozenset({"application/pdf"})  # binaries file_read gives a model as a resource
OUTPUT_SCHEMA_SINCE = "2025-06-18"  # the first version with outputSchema
# An isError result's structuredContent is the error's data (docs/protocol.md, Errors).
# Clients check it against outputSchema too (the TypeScript SDK, and so the Inspector, even
# when isError), so a tool's outputSchema admits its result or that data.
TOOL_ERROR = {"type": "object", "required": ["error", "message"], "properties": {
    "error": {"enum": [name for name in CODES if name != "cancelled"]},
    "message": {"type": "string"}}}

INSTRUCTIONS = """\
File tools confined to one workspace: paths are relative to its root. Read a file before \
editing it; edits are exact find-and-replace, and a failed find returns the closest text \
as a hint. Write whole files only to create or replace them. Searches take ripgrep \
regexes, listings globs. A failed call changes nothing and says what to do instead."""
CODE_INSTRUCTION = " Find by symbol before reading whole files."  # when code tools are listed


def instructions(toolsets: tuple[str, ...], read_only: bool = False) -> str:
    """`initialize`'s and `server/discover`'s instructions for the tools listed."""
    code = any(m.name.startswith("code.") for m in listed_methods(toolsets, read_only))
    return INSTRUCTIONS + CODE_INSTRUCTION if code else INSTRUCTIONS

# the invoker's (rpc/dispatch/invoker.py): the one path every call takes, on both faces
InvokeFn = Callable[[Call, Method, Any], Awaitable[tuple[bool, Any]]]
# and its record of a call refused before it ran (docs/protocol.md, Audit records)
RefuseFn = Callable[[Call, Method, Any, ToolError], Awaitable[None]]


class McpFace:
    METHODS = frozenset({"initialize", "notifications/initialized", "ping", "tools/list",
                         "tools/call", "server/discover"})

    def __init__(self, toolsets: tuple[str, ...], invoke: InvokeFn,
                 read_only: bool = False, document_bytes: int = 0,
                 refuse: RefuseFn | None = None) -> None:
        self._toolsets = toolsets
        self._refuse = refuse
        # a PDF file_read returns: --max-image-bytes, within --max-chunk-bytes (one read)
        self._document_bytes = document_bytes
        self._read_only = read_only
        self._instructions = instructions(toolsets, read_only)
        self._invoke = invoke
        served = callable_methods(toolsets).values()
        self._by_tool_name = {m.tool_name: m for m in served if m.mcp_tool}
        # orchestrators' methods (bytes, uploads, watches, metrics): no MCP tool, named so
        self._not_tools = {m.tool_name: m.name for m in served if not m.mcp_tool}
        self._version: str | None = None  # None until initialize: the newest is spoken

    async def answer(self, call: Call) -> dict[str, Any]:
        """The response to one MCP request (dropped by the dispatcher for a notification)."""
        request = call.request
        params = request.params if request.params is not None else {}
        if not isinstance(params, dict):
            return _invalid_params(request.id, f"{request.method} takes its parameters as "
                                   "an object.", "params")
        try:
            version = requested_version(params) or self._version or VERSIONS[-1]
        except Unsupported as unsupported:
            return error_response(request.id, unsupported.error())
        if is_stateless(version) and (refused := _refused_by_revision(request.id, request.method,
                                                                     params)):
            return refused
        response = await self._respond(call, params, version)
        if "result" in response and (is_stateless(version)
                                     or request.method == "server/discover"):
            response["result"] = complete(response["result"], _server_info(),
                                          request.method in CACHEABLE)
        return response

    async def _respond(self, call: Call, params: dict[str, Any],
                       version: str) -> dict[str, Any]:
        request = call.request
        if request.method == "initialize" and not request.is_notification:
            # one sent as a notification is never answered: the client was told no
            # version, so it initializes nothing (its real initialize is the first)
            return self._initialize(request.id, params)
        if request.method == "server/discover":
            return result_response(request.id, {
                "supportedVersions": list(SUPPORTED), "capabilities": CAPABILITIES,
                "serverInfo": _server_info(), "instructions": self._instructions})
        if request.method == "tools/list":
            return result_response(request.id, {"tools": _tools(
                self._toolsets, self._read_only, version)})
        if request.method == "tools/call":
            return await self._call_tool(call, params)
        return result_response(request.id, {})  # ping; notifications/initialized

    def _initialize(self, rid: Any, params: dict[str, Any]) -> dict[str, Any]:
        if self._version is not None:
            return error_response(rid, protocol_error(
                INVALID_REQUEST, "Invalid Request: this session is already initialized; "
                "initialize is sent once per connection."))
        asked = params.get("protocolVersion")
        self._version = asked if asked in VERSIONS else VERSIONS[-1]
        return result_response(rid, {
            "protocolVersion": self._version,
            "capabilities": CAPABILITIES, "serverInfo": _server_info(),
            "instructions": self._instructions})

    async def _call_tool(self, call: Call, params: dict[str, Any]) -> dict[str, Any]:
        rid = call.request.id
        name, arguments = params.get("name"), params.get("arguments")
        if not isinstance(name, str):  # a list or object would not even hash
            return _invalid_params(rid, "tools/call needs 'name', a string naming a tool "
                                   f"(got {_kind(name)}). Call tools/list for the tools.",
                                   "name")
        method = self._by_tool_name.get(name)
        if method is None and name in self._not_tools:
            return _invalid_params(rid, f"Unknown tool: {name!r}. {self._not_tools[name]} is "
                                   "an orchestrator's method, not an MCP tool: call it over "
                                   "plain JSON-RPC. Call tools/list for the tools.", "name")
        if method is None:
            said, suggestions = advice(name, self._by_tool_name, self._toolsets,
                                       "tools/list")
            return _invalid_params(rid, f"Unknown tool: {name!r}. {said}", "name",
                                   **({"did_you_mean": suggestions} if suggestions else {}))
        if arguments is not None and not isinstance(arguments, dict):
            refusal = ToolError("invalid_params", f"The arguments of {name} must be an "
                                "object.", param="arguments")
            if self._refuse is not None:  # a change refused is recorded all the same
                await self._refuse(call, method, arguments, refusal)
            return error_response(rid, wire_error(refusal))
        call.progress = _progress(call, params.get("_meta"))
        try:
            ok, payload = await self._invoke(call, method, arguments or {})
            if not ok and (document := self._document(method, payload)) is not None:
                if isinstance(document, ToolError):
                    payload = document
                else:
                    ok, payload = await self._read_document(call, arguments or {}, *document)
        finally:
            if call.progress is not None:
                call.progress.stop()
        if ok and isinstance(payload, Document):
            return result_response(rid, {"content": [payload.block()],
                                         "structuredContent": payload.result(),
                                         "isError": False})
        if ok:  # an Encoded result is read for the blocks, spliced as structuredContent
            return result_response(rid, {"content": content(method.shown_as, decoded(payload),
                                                            method.words),
                                         "structuredContent": payload, "isError": False})
        error = wire_error(payload)
        # after $/cancelRequest: -32800 (docs/protocol.md, Cancellation)
        if error["data"]["error"] == "cancelled":
            return error_response(rid, error)
        return result_response(rid, {"content": [{"type": "text", "text": error["message"]}],
                                     "structuredContent": error["data"], "isError": True})



    def _document(self, method: Method, error: Any) -> tuple[str, int] | ToolError | None:
        """(MIME type, size) of a document `file_read` refused as binary that a model is
        given as an embedded resource instead (docs/protocol.md, Bytes in and out: a
        PDF within --max-image-bytes); past that limit, file_too_large, as an image's."""
        if method.name != READ or not isinstance(error, ToolError) or \
                error.code != "binary_file":
            return None
        mime, size = error.details.get("mime_type"), error.details.get("size")
        if mime not in DOCUMENTS or not isinstance(size, int):
            return None
        if size > self._document_bytes:
            path = error.details.get("path")
            return ToolError("file_too_large", f"Document is {size} bytes, over the "
                             f"{self._document_bytes}-byte limit (--max-image-bytes, "
                             "and --max-chunk-bytes: a document is read in one piece): "
                             f"{path}.", path=path, size=size, limit=self._document_bytes)
        return mime, size

    async def _read_document(self, call: Call, arguments: dict[str, Any], mime: str,
                             size: int) -> tuple[bool, Any]:
        """The document's bytes through the invoker (file.read_bytes: every rule of a
        read holds), as one embedded resource."""
        ok, payload = await self._invoke(call, METHODS[READ_BYTES],
                                         {"path": arguments["path"], "length": max(size, 1)})
        if not ok:
            return ok, payload
        return True, Document(str(arguments["path"]), mime, payload)


@dataclass(frozen=True)
class Document:
    """A document file_read returns as an MCP embedded resource (`blob`)."""

    path: str
    mime_type: str
    read: dict[str, Any]  # file.read_bytes' result

    def block(self) -> dict[str, Any]:
        return {"type": "resource", "resource": {
            "uri": "file:///" + quote(self.path.lstrip("/")), "mimeType": self.mime_type,
            "blob": self.read["data"]}}

    def result(self) -> dict[str, Any]:
        return {"document": self.read["data"], "mime_type": self.mime_type,
                "size": self.read["size"], "version": self.read["version"]}


def _refused_by_revision(rid: Any, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """A 2026-07-28 request without the `_meta` the revision requires (-32602), or naming
    a method it removed (-32601)."""
    if lacking := incomplete_meta(params):
        return _invalid_params(rid, f"Invalid params: {lacking}.", "_meta")
    if method in REMOVED:
        return error_response(rid, protocol_error(
            METHOD_NOT_FOUND, f"Method not found: MCP 2026-07-28 has no {method!r} (it "
            "has no handshake): call server/discover, tools/list or tools/call with "
            "_meta, or speak an older version after initialize."))
    return None


@cache
def _server_info() -> dict[str, str]:
    return {"name": "chorus-tools", "version": server_version()}


def _progress(call: Call, meta: Any) -> Progress | None:
    """Progress reporting for a call whose `_meta` carries a progressToken."""
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    # MCP's ProgressToken is a string or any number (2.5 too), never a boolean
    if not isinstance(token, (str, int, float)) or isinstance(token, bool):
        return None
    progress = Progress(token, call.notify)
    progress.start()
    return progress


def _kind(value: Any) -> str:
    """What a client gave instead of a string, in JSON's words."""
    if value is None:
        return "nothing"
    return {bool: "a boolean", int: "a number", float: "a number", list: "an array",
            dict: "an object"}.get(type(value), "no string")


def _invalid_params(rid: Any, message: str, param: str, **details: Any) -> dict[str, Any]:
    return error_response(rid, wire_error(ToolError("invalid_params", message,
                                                    param=param, **details)))


@cache
def _tools(toolsets: tuple[str, ...], read_only: bool,
           version: str) -> list[dict[str, Any]]:
    """tools/list: every listed method of the selected sets, in one page, in the
    registry's order (the same on every call and in every process: clients and model
    prompt caches can keep it)."""
    return [_tool(m, version >= OUTPUT_SCHEMA_SINCE)
            for m in listed_methods(toolsets, read_only)]


def _tool(method: Method, with_output_schema: bool) -> dict[str, Any]:
    tool: dict[str, Any] = {
        "name": method.tool_name,
        "title": method.title or method.tool_name,
        "description": method.description or method.summary,
        "inputSchema": method.params,
        "annotations": {"title": method.title or method.tool_name,
                        "readOnlyHint": not method.mutating,
                        "destructiveHint": method.destructive,
                        "idempotentHint": method.idempotent,
                        "openWorldHint": False}}
    if with_output_schema:
        tool["outputSchema"] = {"type": "object", "anyOf": [method.reply, TOOL_ERROR]}
    return tool
