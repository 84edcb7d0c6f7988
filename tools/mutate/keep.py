"""What a mutation hands back for the history (docs/protocol.md, History): the content it
replaced, taken inside the tool's critical section, for the dispatcher to keep outside
the workspace.

The worker cannot write there: its Landlock domain allows writing beneath the workspace
only. So small content (up to INLINE_MAX) goes back inline with the result, and larger
content is streamed, 1 MiB at a time, into a spool file the dispatcher opened in the
history directory before the workers were forked: an inherited descriptor needs no
access check, and neither side ever holds the whole file (a 1 GB overwrite costs the
worker 1 MiB of buffer, not 1 GB). Each worker claims one spool with a POSIX record
lock (per process, released when it dies, so a replacement worker takes it over), and
always appends: the dispatcher copies the range it is told about into its store and
punches it out of the spool, so the two never coordinate beyond the range itself.

A snapshot is taken before the change and committed after it: only committed snapshots
reach the result (`ctx.record["kept"]`), so a call that fails hands back nothing. Taking
one also reserves room on the history's disk for keeping it (tools/mutate/reserve.py):
a full disk refuses the change before anything is written. Content larger than the whole
byte budget (which would be dropped at once) is hashed, never streamed.

A symlink is kept as what it was: its target's text is the content, and its mode
`LINK_MODE` (S_IFLNK) says the content is a link's target, so a rewind or a restore puts
the link back (tools/mutate/restore.py `put_link`), never a file holding that text.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import stat
from dataclasses import dataclass
from typing import Any

from chorus_tools.tools.confine.sandbox import open_same, version_of
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError, from_os_error
from chorus_tools.tools.mutate import reserve
from chorus_tools.tools.walk.fdwalk import fwalk

INLINE_MAX = 1 << 20  # larger content is streamed through the spool
INLINE_TOTAL = 8 << 20  # and so is whatever passes this in one call (a deleted tree)
_CHUNK = 1 << 20
_spool: int | None = None  # this process's claimed spool descriptor
LINK_MODE = stat.S_IFLNK | 0o777  # a kept symlink's mode: its content is the target's text


def is_link(mode: int | None) -> bool:
    """Whether a kept version (its mode) is a symlink's target rather than a file's bytes."""
    return mode is not None and stat.S_ISLNK(mode)


@dataclass
class Snapshot:
    """A path's state before a change: `sha256` None when no regular file was there."""

    path: str
    sha256: str | None = None
    size: int = 0
    mode: int = 0
    data: bytes | None = None  # inline content
    spool: tuple[int, int] | None = None  # (spool index, offset) of streamed content
    unkept: str | None = None  # why the history cannot keep it (--history-full write)


def keeping(ctx: ToolContext) -> bool:
    """Whether this call hands back what it replaces (history on, a recorded mutation)."""
    return ctx.record is not None and ctx.history_spools is not None \
        and not ctx.keeping_paused


def absent(path: str) -> Snapshot:
    """The state of a path that held no file: undone by removing what is there."""
    return Snapshot(path)


def snapshot(ctx: ToolContext, dir_fd: int, name: str, st: os.stat_result | None,
             path: str, shown: str, data: bytes | None = None,
             sha256: str | None = None) -> Snapshot | None:
    """The content of regular file `name` (stat'ed as `st`) in `dir_fd`, hashed and kept
    inline or spooled, under its real path (`path` is the one the call named);
    `data` is its content when the caller read it already, `sha256`
    its digest when the caller knows it (a large file is then not hashed again, nor read
    at all when it is only hashed). None when history is off. A symlink is kept as its
    target's text (LINK_MODE); a special file is not kept (workers cannot recreate it)."""
    if not keeping(ctx):
        return None
    path = ctx.ws.real_entry(dir_fd, name, path)
    if st is None:
        snap = absent(path)
        reserve.claim(ctx, snap, 0, _claim(ctx))
        return snap
    if stat.S_ISLNK(st.st_mode):  # a few bytes: always inline
        return _inline(ctx, Snapshot(path, mode=LINK_MODE),
                       os.fsencode(os.readlink(name, dir_fd=dir_fd)))
    if not stat.S_ISREG(st.st_mode):
        return None
    snap = Snapshot(path, mode=stat.S_IMODE(st.st_mode))
    if data is None and _room(ctx, st.st_size):
        data = _read_small(dir_fd, name, st, shown)
    if data is not None and _room(ctx, len(data)):
        return _inline(ctx, snap, data)
    _stream(ctx, dir_fd, name, st, snap, shown, sha256)
    reserve.claim(ctx, snap, reserve.PAGE, _claim(ctx))
    return snap


def _inline(ctx: ToolContext, snap: Snapshot, data: bytes) -> Snapshot:
    """`snap` with `data` as its content, handed back with the result."""
    snap.sha256, snap.size, snap.data = hashlib.sha256(data).hexdigest(), len(data), data
    ctx.record["inline"] = ctx.record.get("inline", 0) + len(data)  # type: ignore[index]
    reserve.claim(ctx, snap, len(data), _claim(ctx))
    return snap


def ahead(ctx: ToolContext, content: int, paths: list[str], shown: str) -> None:
    """Before a call's first of several changes: room for keeping all of them, or the
    call is refused before any (tools/mutate/reserve.py)."""
    if keeping(ctx):
        reserve.ahead(ctx, content, paths, _claim(ctx), shown)


def snapshot_tree(ctx: ToolContext, dir_fd: int, path: str,
                  shown: str) -> list[tuple[Snapshot, str | None]]:
    """A snapshot of every regular file and symlink beneath the directory open as
    `dir_fd` (at `path`), each with its version; the walk never follows a symlink, and
    lists one to a directory (inside the workspace or out) among `dirs`: kept too."""
    if not keeping(ctx):
        return []
    snaps: list[tuple[Snapshot, str | None]] = []
    for top, dirs, files, top_fd in fwalk(dir_fd):
        base = path if top == "." else f"{path}/{top[2:]}"
        for name in (*files, *dirs):
            try:
                st = os.stat(name, dir_fd=top_fd, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if stat.S_ISDIR(st.st_mode):
                continue
            snap = snapshot(ctx, top_fd, name, st, f"{base}/{name}", shown)
            if snap is not None:
                snaps.append((snap, version_of(st)))
    return snaps


def commit(ctx: ToolContext, snap: Snapshot | None, after: str | None,
           moved_to: str | None = None) -> None:
    """Hand `snap` back with the call's result: the change happened, and the path is now
    at version `after` (None: no file there any more)."""
    if snap is None or ctx.record is None:
        return
    entry: dict[str, Any] = {"path": snap.path, "sha256": snap.sha256, "bytes": snap.size,
                             "mode": snap.mode, "data": snap.data, "spool": snap.spool,
                             "after": after}
    if moved_to is not None:
        entry["moved_to"] = moved_to
    if snap.unkept is not None:
        entry["unkept"] = snap.unkept
    if snap.spool is not None:
        reserve.handed(ctx, *snap.spool)
    ctx.record.setdefault("kept", []).append(entry)


def note_before(ctx: ToolContext, snap: Snapshot | None) -> bool:
    """Fill the audit record's hashes from a snapshot (so a write need not read the old
    file a second time); False when there is none to take them from."""
    if snap is None or snap.sha256 is None or ctx.record is None:
        return False
    ctx.record["sha256_before"] = ctx.record["sha256_after"] = snap.sha256
    return True


def _room(ctx: ToolContext, size: int) -> bool:
    """Whether `size` more bytes may go back inline with this call's result."""
    inline = ctx.record.get("inline", 0) if ctx.record is not None else 0
    return size <= INLINE_MAX and inline + size <= INLINE_TOTAL


def _read_small(dir_fd: int, name: str, st: os.stat_result, shown: str) -> bytes:
    fd = open_same(dir_fd, name, st, shown, doing="keeping its history")
    try:
        chunks = []
        while chunk := os.read(fd, _CHUNK):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise from_os_error(exc, shown) from None
    finally:
        os.close(fd)


def _stream(ctx: ToolContext, dir_fd: int, name: str, st: os.stat_result, snap: Snapshot,
            shown: str, known: str | None = None) -> None:
    """Copy the file into this worker's spool, hashing on the way, 1 MiB at a time; a
    file larger than the whole budget is only hashed (it would be dropped at once), or
    not even read when its digest is `known`."""
    index, spool = _claim(ctx)
    offset = reserve.aligned_end(spool)
    to_spool = st.st_size <= (ctx.history_budget or st.st_size)
    if known is not None and not to_spool:
        snap.sha256, snap.size = known, st.st_size
        return
    if to_spool:
        reserve.pend(ctx, index, offset, st.st_size)
    digest = hashlib.sha256()
    fd = open_same(dir_fd, name, st, shown, doing="keeping its history")
    try:
        while chunk := _read(fd, shown):
            if known is None:
                digest.update(chunk)
            if to_spool:
                to_spool = _spool_chunk(ctx, snap, spool, chunk, offset + snap.size)
            snap.size += len(chunk)
    finally:
        os.close(fd)
    if to_spool:
        reserve.handed(ctx, index, offset)
        reserve.pend(ctx, index, offset, snap.size)
        snap.spool = index, offset
    snap.sha256 = known or digest.hexdigest()


def _read(fd: int, shown: str) -> bytes:
    try:
        return os.read(fd, _CHUNK)
    except OSError as exc:
        raise from_os_error(exc, shown, "write_failed") from None


def _spool_chunk(ctx: ToolContext, snap: Snapshot, spool: int, chunk: bytes, at: int) -> bool:
    """Append a chunk to the spool; False (and the snapshot not kept, or the change
    refused) when the history's disk is full."""
    view = memoryview(chunk)
    while view:
        try:
            written = os.pwrite(spool, view, at)
        except OSError as exc:  # room reserved ahead for this call is given to it first
            if exc.errno in (errno.ENOSPC, errno.EDQUOT) and reserve.give_back(ctx, len(view)):
                continue
            reserve.full(ctx, snap, exc)  # refuses, unless --history-full write
            return False
        view, at = view[written:], at + written
    return True


def _claim(ctx: ToolContext) -> tuple[int, int]:
    """This process's spool: the first one no live worker holds a lock on."""
    global _spool
    spools = ctx.history_spools or ()
    if _spool is not None:
        return spools.index(_spool), _spool
    for index, fd in enumerate(spools):
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0, os.SEEK_SET)
        except OSError:
            continue
        _spool = fd
        return index, fd
    raise ToolError("write_failed", "Every history spool is taken, so the replaced content "
                    "cannot be kept; nothing was changed. Retry in a moment.")
