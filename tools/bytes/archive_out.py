"""Archives out (docs/protocol.md, Bytes in and out): `archive.export` gives a directory as
a tar or tar.gz stream one chunk per call, each call resuming where the cursor it was
given says, so any worker may produce the next chunk and nothing is kept between calls:
memory is one chunk, whatever the tree's size, and nothing is written (so it works under
--read-only, where a spool of the whole archive could not be made).

- The walk is file.list's (tools/walk/): ignore rules as file.list (ignored entries only
  with `include_ignored`), hidden entries included (an orchestrator taking a repository
  out wants its `.gitignore` and `.git` as `tar` would give them), `--deny`'d paths and the
  reserved temp files never, symlinks stored as links and never followed. The history
  lives outside the workspace and is never seen.
- The cursor is the last path fully sent, or a file part-way sent with the version it had:
  a file that changes between two chunks ends the stream with `conflict` (the client has
  a short archive and knows it), as `GET /files` does.
- tar.gz: each chunk is gzip members of its own, deflated in threads while the next tar
  bytes are made (tools/bytes/deflate.py); members concatenated are one gzip stream
  (RFC 1952 2.2), read whole by `gzip -d`, `tar -xz` and Python's gzip.
"""

from __future__ import annotations

import json
import os
import tarfile
from typing import Any

from chorus_tools.tools.bytes.deflate import Chunk
from chorus_tools.tools.bytes.payload import encoded
from chorus_tools.tools.confine.sandbox import ROOT, version_of
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.mutate.restore import link_target
from chorus_tools.tools.walk.walk import walk_entries

CHUNK = 8 << 20  # tar bytes one call produces, at most (plus one header)
_BLOCK = tarfile.BLOCKSIZE
_FORMATS = ("tar", "tar.gz")


def export(ctx: ToolContext, path: str = ".", format: str = "tar.gz",
           include_ignored: bool = False, cursor: str | None = None) -> dict[str, Any]:
    if format not in _FORMATS:
        raise ToolError("invalid_params", f"'format' must be one of {', '.join(_FORMATS)}, "
                        f"not {format!r}.", param="format")
    base = ctx.ws.rel(path)
    state = _cursor(cursor)
    out = Chunk(gzip=format == "tar.gz")
    if state.get("file"):
        _send_file(ctx, state, out)
    more = bool(state.get("file")) or _add_entries(ctx, base, path, include_ignored, state,
                                                   out)
    if not more:
        out.add(bytes(2 * _BLOCK))  # the end-of-archive marker
    return {"data": encoded(out.done()), "cursor": json.dumps(state) if more else None}


def _add_entries(ctx: ToolContext, base: str, shown: str, include_ignored: bool,
                 state: dict[str, Any], out: Chunk) -> bool:
    """Entries after the cursor's path, in walk order, until the chunk is full; whether
    any remain (`state` is then the cursor to resume from)."""
    after = state.get("after", "")
    for entry in walk_entries(ctx, base, include_hidden=True, include_ignored=include_ignored,
                              select=lambda p, _: p > after, shown=shown):
        if out.size >= CHUNK:
            return True
        name = entry.path if base == ROOT else entry.path[len(base) + 1:]
        state.clear()
        state["after"] = entry.path
        if entry.kind == "dir":
            out.add(_header(name + "/", tarfile.DIRTYPE, entry.stat))
        elif entry.kind == "symlink":
            out.add(_header(name, tarfile.SYMTYPE, entry.stat, link_target(ctx, entry.path)))
        elif entry.kind == "file":
            out.add(_header(name, tarfile.REGTYPE, entry.stat))
            state.update(file=entry.path, offset=0, size=entry.stat.st_size,
                         version=version_of(entry.stat))
            _send_file(ctx, state, out)
            if state.get("file"):
                return True
    return False


def _cursor(cursor: str | None) -> dict[str, Any]:
    if cursor is None:
        return {}
    try:
        state = json.loads(cursor)
        if isinstance(state, dict) and isinstance(state.get("after"), str):
            return state
    except ValueError:
        pass
    raise ToolError("invalid_params", "'cursor' is not one archive.export returned: pass "
                    "back the previous reply's cursor unchanged.", param="cursor")


def _header(name: str, kind: bytes, st: os.stat_result, link: str = "") -> bytes:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    info.mode = st.st_mode & 0o7777
    info.mtime = int(st.st_mtime)
    info.size = st.st_size if kind == tarfile.REGTYPE else 0
    return info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape")


def _send_file(ctx: ToolContext, state: dict[str, Any], out: Chunk) -> None:
    """The file in `state` from its offset, until the chunk is full (state then says
    where to resume) or it ends (with its padding; state's "file" is dropped)."""
    rel, offset, size = state["file"], state["offset"], state["size"]
    fd, st = ctx.ws.open_regular(rel, shown=rel)
    try:
        if version_of(st) != state["version"] or st.st_size != size:
            raise ToolError("conflict", f"{rel} changed while the archive was being sent; "
                            "the archive is incomplete. Take it again.", path=rel)
        while offset < size and out.size < CHUNK:
            piece = os.pread(fd, min(CHUNK - out.size, size - offset, 1 << 20), offset)
            if not piece:
                raise ToolError("conflict", f"{rel} shrank while the archive was being "
                                "sent; the archive is incomplete. Take it again.", path=rel)
            out.add(piece)
            offset += len(piece)
    finally:
        os.close(fd)
    state["offset"] = offset
    if offset == size:
        out.add(bytes(-size % _BLOCK))
        del state["file"]
