"""The error model on the wire (docs/protocol.md, Errors), and the one place an exception becomes a
JSON-RPC error object."""

from __future__ import annotations

import logging
from typing import Any

from chorus_tools.tools.errors import ToolError

log = logging.getLogger("chorus.rpc")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601

CODES: dict[str, int] = {
    "invalid_params": -32602,
    "path_outside_workspace": -32001,
    "file_not_found": -32002,
    "is_directory": -32003,
    "not_a_directory": -32004,
    "not_a_regular_file": -32005,
    "binary_file": -32006,
    "file_too_large": -32007,
    "already_exists": -32008,
    "conflict": -32009,
    "permission_denied": -32010,
    "find_not_found": -32011,
    "find_not_unique": -32012,
    "invalid_pattern": -32013,
    "write_failed": -32014,
    "timeout": -32015,
    "worker_crashed": -32016,
    "server_busy": -32017,
    "not_read": -32018,
    "edit_breaks_syntax": -32019,
    "unsupported_language": -32023,
    "symbol_not_found": -32024,
    "symbol_not_unique": -32025,
    "quota_exceeded": -32026,
    "shutting_down": -32027,
    "upload_not_found": -32028,
    "verification_failed": -32029,
    "cancelled": -32800,
    "internal_error": -32603,
}

_PROTOCOL_NAMES = {PARSE_ERROR: "parse_error", INVALID_REQUEST: "invalid_request",
                   METHOD_NOT_FOUND: "method_not_found"}


def protocol_error(code: int, message: str, **details: Any) -> dict[str, Any]:
    """An error object for a message that never reached a method."""
    return {"code": code, "message": message,
            "data": {"error": _PROTOCOL_NAMES[code], "message": message, **details}}


def wire_error(exc: BaseException) -> dict[str, Any]:
    """Any exception as a JSON-RPC error object: a ToolError keeps its code and details;
    anything else is a bug, logged with its traceback and reported as internal_error."""
    if not isinstance(exc, ToolError):
        log.error("internal error", exc_info=exc)
        exc = ToolError("internal_error",
                        f"Internal error in chorus-tools (a bug, not your input): "
                        f"{type(exc).__name__}: {exc}. Details are in the server's log.")
    return {"code": CODES[exc.code], "message": exc.text, "data": exc.to_data()}
