"""Tool failures as values: a stable code an agent can branch on, plus details.

The codes are the `data.error` names of docs/protocol.md, Errors; the numeric JSON-RPC codes live in
`rpc/`, which alone speaks the protocol.
"""

from __future__ import annotations

import errno
from typing import Any

CODES = (
    "invalid_params",
    "path_outside_workspace",
    "file_not_found",
    "is_directory",
    "not_a_directory",
    "not_a_regular_file",
    "binary_file",
    "file_too_large",
    "already_exists",
    "conflict",
    "permission_denied",
    "find_not_found",
    "find_not_unique",
    "invalid_pattern",
    "write_failed",
    "timeout",
    "worker_crashed",
    "server_busy",
    "not_read",
    "edit_breaks_syntax",
    "unsupported_language",
    "symbol_not_found",
    "symbol_not_unique",
    "cancelled",
    "internal_error",
)


class ToolError(Exception):
    """A failure the client caused or must know about; never a bug."""

    def __init__(self, code: str, message: str, **details: Any) -> None:
        if code not in CODES:
            raise ValueError(f"unknown tool error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    def to_data(self) -> dict[str, Any]:
        return {"error": self.code, "message": self.message, **self.details}

    def __reduce__(self):  # keyword details survive pickling across the worker pipe
        return (_rebuild, (self.code, self.message, self.details))


def _rebuild(code: str, message: str, details: dict[str, Any]) -> ToolError:
    return ToolError(code, message, **details)


_ERRNO_CODES = {
    errno.ENOENT: ("file_not_found", "File not found: {path}"),
    errno.EXDEV: ("path_outside_workspace",
                  "Path resolves outside the workspace (through '..' or a symlink): {path}"),
    errno.ENOTDIR: ("not_a_directory", "A component of the path is not a directory: {path}"),
    errno.EISDIR: ("is_directory", "Path is a directory, not a file: {path}"),
    errno.EACCES: ("permission_denied", "Permission denied by the operating system: {path}"),
    errno.EPERM: ("permission_denied", "Operation not permitted by the operating system: {path}"),
    errno.EROFS: ("permission_denied", "The file system is read-only: {path}"),
    errno.ELOOP: ("file_not_found", "Too many levels of symbolic links: {path}"),
    errno.ENAMETOOLONG: ("invalid_params", "Path or a component of it is too long: {path}"),
    errno.EEXIST: ("already_exists", "File already exists: {path}"),
    errno.EFBIG: ("file_too_large", "File too large for the file system: {path}"),
}


def from_os_error(exc: OSError, path: str, fallback: str = "internal_error") -> ToolError:
    """Turn an OSError into the ToolError an agent can act on; `fallback` for the rest."""
    known = None if exc.errno is None else _ERRNO_CODES.get(exc.errno)
    code, template = known or (fallback, "{path}: {reason}")
    details: dict[str, Any] = {"path": path}
    if code == "invalid_params":
        details["param"] = "path"
    if code == fallback and exc.errno not in _ERRNO_CODES:
        details["errno"] = errno.errorcode.get(exc.errno or 0, str(exc.errno))
    return ToolError(code, template.format(path=path, reason=exc.strerror), **details)
