"""archive.read: a directory as a tar (or tar.gz) stream, one bounded piece per call
(docs/protocol.md, Bytes in and out: GET /archive).

A worker holds nothing between calls, so the stream resumes from a cursor: the path of the
entry it stopped in and how many of its bytes were sent. Each call walks the directory as
file.list does (ignore rules unless `include_ignored`, hidden entries included, --deny'd
and reserved temp entries never, symlinks stored as links and never followed), skips what
was sent and writes tar records until about CHUNK bytes are out: a large file spans calls,
so memory is one piece, never a file. tar.gz pieces are each a gzip member: a stream of
members is one gzip file to every reader (`gzip -d`, `tar -xz`, Python's gzip)."""

from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile
from typing import Any

import orjson

from chorus_tools.tools.bytes.payload import encoded
from chorus_tools.tools.bytes.ranges import read_range
from chorus_tools.tools.confine.sandbox import ROOT
from chorus_tools.tools.context import MIB, ToolContext
from chorus_tools.tools.errors import ToolError, from_os_error
from chorus_tools.tools.walk.source import DIR, FILE, SYMLINK
from chorus_tools.tools.walk.walk import Entry, walk_entries

CHUNK = 8 * MIB
BLOCK = tarfile.BLOCKSIZE
FORMATS = ("tar", "tar.gz")


def archive_read(ctx: ToolContext, path: str = ".", format: str = "tar",
                 include_ignored: bool = False, cursor: str | None = None) -> dict[str, Any]:
    if format not in FORMATS:
        raise ToolError("invalid_params", f"'format' must be tar or tar.gz, not {format!r}.",
                        param="format")
    rel = ctx.ws.rel(path, allow_empty=True)
    after, sent, size = _cursor(cursor)
    out = io.BytesIO()
    next_cursor = None
    base = "" if rel in ("", ROOT) else rel + "/"
    for entry in _entries(ctx, rel, path, include_ignored, after):
        name = entry.path[len(base):]
        resumed = entry.path == after
        done = _write(ctx, out, entry, name, sent if resumed else 0,
                      size if resumed else entry.stat.st_size, CHUNK - out.tell())
        if done is not None or out.tell() >= CHUNK:
            next_cursor = orjson.dumps({"path": entry.path, "sent": -1 if done is None else
                                        done, "size": entry.stat.st_size if not resumed
                                        else size}).decode()
            break
    else:
        out.write(b"\0" * (2 * BLOCK))  # the end-of-archive marker
    data = out.getvalue()
    if format == "tar.gz":
        data = gzip.compress(data, compresslevel=6, mtime=0)
    return {"data": encoded(data), "cursor": next_cursor}


def _cursor(cursor: str | None) -> tuple[str | None, int, int]:
    """(the entry a piece stopped in, the bytes of it sent (-1: all of it), the size its
    header announced)."""
    if cursor is None:
        return None, 0, 0
    try:
        found = orjson.loads(cursor)
        return str(found["path"]), int(found["sent"]), int(found["size"])
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        raise ToolError("invalid_params", "'cursor' is not one archive.read returned; "
                        "start again without it.", param="cursor") from None


def _entries(ctx: ToolContext, rel: str, shown: str, include_ignored: bool,
             after: str | None) -> Any:
    """The entries still to send, in path order: those before `after` are skipped, and
    a directory wholly before it is not even entered."""
    def ahead(path: str) -> bool:
        return after is None or not (after > path + "/" and not after.startswith(path + "/"))

    for entry in walk_entries(ctx, rel, include_hidden=True, include_ignored=include_ignored,
                              descend=ahead, shown=shown):
        if after is None or entry.path >= after:  # the one a piece stopped in: again
            yield entry


def _write(ctx: ToolContext, out: io.BytesIO, entry: Entry, name: str, offset: int,
           size: int, room: int) -> int | None:
    """Write `entry` from `offset` of its `size` bytes (-1: nothing left of it); the
    offset to resume at when `room` ran out first, else None."""
    if offset < 0:
        return None
    info = tarfile.TarInfo(name + ("/" if entry.kind == DIR else ""))
    st = entry.stat
    info.mode, info.mtime = stat.S_IMODE(st.st_mode), int(st.st_mtime)
    if entry.kind == DIR:
        info.type = tarfile.DIRTYPE
    elif entry.kind == SYMLINK:
        info.type, info.linkname = tarfile.SYMTYPE, _link_text(ctx, entry.path)
    elif entry.kind == FILE:
        info.size = size
    else:
        return None  # FIFOs, sockets, devices are never archived
    if offset == 0:
        out.write(info.tobuf(tarfile.PAX_FORMAT))
    if entry.kind != FILE:
        return None
    return _content(ctx, out, entry.path, info.size, offset, room)


def _content(ctx: ToolContext, out: io.BytesIO, rel: str, size: int, offset: int,
             room: int) -> int | None:
    """The file's bytes from `offset`, as many as `room` allows; the file as it was when
    its header went out (a file that shrank since is padded with zeros, one that grew is
    cut: the header's size is the record's)."""
    fd, _ = ctx.ws.open_regular(rel)
    try:
        while offset < size:
            want = min(size - offset, max(room, 0), MIB)
            if want <= 0:
                return offset
            data = read_range(fd, offset, want).ljust(want, b"\0")
            out.write(data)
            offset += want
            room -= want
    except OSError as exc:
        raise from_os_error(exc, rel) from None
    finally:
        os.close(fd)
    out.write(b"\0" * (-size % BLOCK))
    return None


def _link_text(ctx: ToolContext, rel: str) -> str:
    parent, _, name = rel.rpartition("/")
    fd = ctx.ws.open_dir(parent or ROOT)
    try:
        return os.readlink(name, dir_fd=fd)
    finally:
        os.close(fd)
