"""file.info: what a path is, and for a file what its content is (binary or text, how it
is encoded, how many lines).

`type`, `is_symlink` and `symlink_target` describe the entry itself, reached without
following it. Every other field describes what the entry leads to, resolved beneath the
workspace root like any other access; a link that leads outside, or nowhere, gives null
for those fields instead of an error, since the link itself exists and can be described.

Decisions of our own where the contract is silent: `mime_type`, `is_binary`, `encoding` and
`lines` are null for directories and special files (never opened), and for a file the OS
refuses to open for reading; `mime_type` of a text file comes from its name (Python's
built-in table, so the same on every machine) when that names a text type, else
"text/plain"; `path` is the normalised workspace-relative path ("." for the root).
"""

from __future__ import annotations

import functools
import mimetypes
import os
import stat
from typing import Any

from chorus_tools.tools.read import text
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError, from_os_error
from chorus_tools.tools.confine.sandbox import (file_type_name, names_directory, not_a_directory,
                                               version_of)
from chorus_tools.tools.timefmt import iso_utc

_TEXTUAL = ("application/json", "application/xml", "application/javascript",
            "application/x-sh", "application/x-tex", "application/toml",
            "application/yaml")
_UNRESOLVED = ("file_not_found", "path_outside_workspace", "not_a_directory")


def info(ctx: ToolContext, path: str) -> dict[str, Any]:
    """Describe a path: the entry itself, then what it points to (inside the workspace)."""
    rel = ctx.ws.rel(path)
    entry = ctx.ws.lstat(rel, shown=path)
    result: dict[str, Any] = {
        "path": rel, "type": file_type_name(entry.st_mode),
        "size": None, "modified": None, "mode": None,
        "is_symlink": False, "symlink_target": None, "mime_type": None,
        "is_binary": None, "encoding": None, "lines": None, "version": None,
    }
    st: os.stat_result | None = entry
    if stat.S_ISLNK(entry.st_mode):
        result["is_symlink"] = True
        result["symlink_target"] = _readlink(ctx, rel, path)
        st = _follow(ctx, rel, path)
    if names_directory(path) and st is not None and not stat.S_ISDIR(st.st_mode):
        raise not_a_directory(path)
    if st is None:
        return result
    result.update(size=st.st_size, modified=iso_utc(st.st_mtime_ns),
                  mode=f"{stat.S_IMODE(st.st_mode):04o}", version=version_of(st))
    if stat.S_ISREG(st.st_mode):
        result.update(_content(ctx, rel, path, _own_name(ctx, rel, path, entry)))
    return result


def _own_name(ctx: ToolContext, rel: str, path: str, entry: os.stat_result) -> str:
    """The path whose name suggests a mime type: a link's target rather than the link."""
    if not stat.S_ISLNK(entry.st_mode):
        return rel
    try:
        return ctx.ws.resolve_symlinks(rel, shown=path)
    except ToolError:
        return rel


def _readlink(ctx: ToolContext, rel: str, path: str) -> str:
    """The link's text, read through an O_PATH descriptor of the link itself."""
    fd = ctx.ws.open(rel, os.O_PATH | os.O_NOFOLLOW, shown=path)
    try:
        return os.readlink("", dir_fd=fd)
    except OSError as exc:
        raise from_os_error(exc, path) from None
    finally:
        os.close(fd)


def _follow(ctx: ToolContext, rel: str, path: str) -> os.stat_result | None:
    """What a symlink leads to, or None when that is outside the workspace or missing."""
    try:
        fd = ctx.ws.open(rel, os.O_PATH, shown=path)
    except ToolError as err:
        if err.code in _UNRESOLVED:
            return None
        raise
    try:
        return os.fstat(fd)
    finally:
        os.close(fd)


def _content(ctx: ToolContext, rel: str, path: str, named: str) -> dict[str, Any]:
    """Binary or text, and for text its encoding and line count (one pass, remembered
    per version and shared with file.read).
    `named` is the file's own path (a link's target), whose name suggests a mime type."""
    try:
        fd, st = ctx.ws.open_regular(rel, shown=path)
    except ToolError as err:
        if err.code == "permission_denied" or err.code in _UNRESOLVED:
            return {}  # replaced or unreadable since the stat: nothing more to say
        raise
    try:
        head = os.pread(fd, text.SNIFF_BYTES, 0)
        mime = text.binary_mime(head)
        if mime is not None:
            return {"mime_type": mime, "is_binary": True}
        lines = ctx.line_counts.lines(fd, st, head)
    finally:
        os.close(fd)
    return {"mime_type": _text_mime(named), "is_binary": False, "encoding": lines.encoding,
            "lines": lines.total, **({"invalid_bytes": lines.invalid} if lines.invalid else {})}


@functools.cache
def _names() -> mimetypes.MimeTypes:
    """Python's built-in table only, built on first use. A MimeTypes object uses no system
    file, but its constructor first runs the module's global init(), which reads
    /etc/mime.types (refused under the workers' Landlock): the documented `inited` flag
    says it already ran."""
    mimetypes.inited = True
    return mimetypes.MimeTypes(filenames=())


def _text_mime(rel: str) -> str:
    guess, _ = _names().guess_type(rel.rpartition("/")[2], strict=False)
    if guess and (guess.startswith("text/") or guess in _TEXTUAL):
        return guess
    return "text/plain"
