"""MCP 2026-07-28 over HTTP (docs/protocol.md, HTTP): the headers that mirror a request's
body are checked against it, and a modern request's protocol errors carry HTTP statuses.

A POST to /mcp is modern when its `MCP-Protocol-Version` header or its `_meta` names a
version that is not one of the handshake versions (2026-07-28, or one this server does
not speak). Such a request must carry a complete `_meta` (-32602), the header equal to
`_meta`'s version, `Mcp-Method` equal to its method and, for `tools/call`, `prompts/get`
and `resources/read`, `Mcp-Name` equal to its `params.name` or `params.uri`, decoded first
when sent as `=?base64?...?=` (else -32020, HeaderMismatch); all of these are 400, and so
is a version this server does not speak (-32022). A modern request's -32601 is 404.
Requests of the handshake versions are checked as before: only a header naming a version
this server does not speak is refused (400, -32022).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from chorus_tools.rpc.mcp.revision import (HANDSHAKE_VERSIONS, HEADER_MISMATCH,
                                           PROTOCOL_VERSION, SUPPORTED,
                                           UNSUPPORTED_PROTOCOL_VERSION, Unsupported,
                                           incomplete_meta)
from chorus_tools.rpc.wire.envelope import error_response
from chorus_tools.rpc.wire.errors import METHOD_NOT_FOUND, wire_error
from chorus_tools.tools.errors import ToolError

HEADER_VERSION = "mcp-protocol-version"
NAMED_BY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
STATUS = {METHOD_NOT_FOUND: 404, HEADER_MISMATCH: 400, UNSUPPORTED_PROTOCOL_VERSION: 400,
          -32021: 400}  # -32021: MissingRequiredClientCapability (no tool here needs one)
_SENTINEL = ("=?base64?", "?=")
_META_KEY = f'"{PROTOCOL_VERSION}"'.encode()


def may_be_modern(headers: dict[str, str], body: bytes) -> bool:
    """Whether a POST may be modern, from its header and a look for the `_meta` key
    (so older clients' bodies are not parsed twice: the dispatcher parses every one)."""
    version = headers.get(HEADER_VERSION)
    return (version is not None and version not in HANDSHAKE_VERSIONS) or _META_KEY in body


def _meta_version(message: Any) -> Any:
    params = message.get("params") if isinstance(message, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get(PROTOCOL_VERSION) if isinstance(meta, dict) else None


def is_modern(headers: dict[str, str], message: Any) -> bool:
    """Whether the request speaks a version past the handshake ones (or an unknown one)."""
    named = [v for v in (headers.get(HEADER_VERSION), _meta_version(message)) if v is not None]
    return any(v not in HANDSHAKE_VERSIONS for v in named)


def refusal(headers: dict[str, str], message: Any) -> dict[str, Any] | None:
    """The error response (with the request's id) refusing a POST to /mcp with 400, or
    None."""
    rid = message.get("id") if isinstance(message, dict) else None
    header = headers.get(HEADER_VERSION)
    if not (isinstance(message, dict) and isinstance(message.get("method"), str)
            and "id" in message):  # the dispatcher refuses a method that is no string
        if header is not None and header not in SUPPORTED:  # a batch, or no request
            return error_response(None, Unsupported(header).error())
        return None
    version = _meta_version(message)
    if header is not None and header not in SUPPORTED and version in (None, header):
        return error_response(rid, Unsupported(header).error())
    if not is_modern(headers, message):
        return None
    if lacking := incomplete_meta(message.get("params")):
        return error_response(rid, wire_error(ToolError(
            "invalid_params", f"Invalid params: {lacking}.", param="_meta")))
    problem = _mismatch(headers, message, version)
    if problem is not None:
        text = (f"Header mismatch: {problem}; the headers mirror the body (MCP 2026-07-28, "
                "Streamable HTTP).")
        return error_response(rid, {"code": HEADER_MISMATCH, "message": text, "data": {
            "error": "header_mismatch", "message": text}})
    if version not in SUPPORTED:
        return error_response(rid, Unsupported(version).error())
    return None


def _mismatch(headers: dict[str, str], message: dict[str, Any], version: Any) -> str | None:
    method = message["method"]
    expected = [("MCP-Protocol-Version", HEADER_VERSION, version),
                ("Mcp-Method", "mcp-method", method)]
    params = message.get("params")
    field = NAMED_BY.get(method)
    if field is not None and isinstance(params, dict) and isinstance(params.get(field), str):
        expected.append(("Mcp-Name", "mcp-name", params[field]))
    for shown, key, value in expected:
        sent = headers.get(key)
        if sent is None:
            return f"the {shown} header is missing (the body says {value!r})"
        decoded = _decoded(sent) if key == "mcp-name" else sent
        if decoded is None:
            return f"the {shown} header {sent!r} is not valid =?base64?...?= encoding"
        if decoded != value:
            return f"the {shown} header {sent!r} does not match the body's {value!r}"
    return None


def _decoded(value: str) -> str | None:
    """A header value as sent, or what its base64 sentinel form carries (None: broken)."""
    start, end = _SENTINEL
    if not (value.startswith(start) and value.endswith(end) and
            len(value) >= len(start) + len(end)):
        return value
    try:
        return base64.b64decode(value[len(start):-len(end)], validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def status(response: Any) -> int:
    """The HTTP status a modern request's response is sent with."""
    error = response.get("error") if isinstance(response, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return STATUS.get(code, 200) if isinstance(code, int) else 200
