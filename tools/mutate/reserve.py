"""Room on the history's disk, taken before a change (docs/protocol.md, History: a full
history): what a change replaces is never lost to a full disk after the change was made.

Before a mutation changes anything, each snapshot of what it replaces reserves blocks in
the worker's spool (a file in the history's directory, so on the history's disk): the
old content held inline, its log lines, a page for the pack's edge, and some slack once
per call. Content streamed into the spool takes its own blocks as it is written. If the
disk cannot give them, the change is refused before anything is written: `write_failed`
with `data.errno` and `data.where: "history"`; or, under `--history-full write`, the
change goes ahead and the reply says the history could not keep it. The dispatcher
releases the reservation as it writes the content and the lines
(rpc/dispatch/history_room.py). Reservations are made a chunk at a time, so a tree of
thousands of files costs a few fallocate calls, not one a file.
"""

from __future__ import annotations

import ctypes
import errno
import os
from contextlib import contextmanager
from typing import Iterator, Protocol

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError


class Snapshot(Protocol):
    """What a reservation is for (tools/mutate/keep.py's Snapshot)."""

    path: str
    data: bytes | None
    unkept: str | None

PAGE = 4096
SLACK = 16 << 10  # once a call: a new pack's first block, the log's edge
_CHUNK = 256 << 10  # taken beyond what is asked, from a call's second snapshot on
_LINE = 256  # a log line but its paths
_PUNCH_HOLE = 0x01 | 0x02  # FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE
_libc = ctypes.CDLL(None, use_errno=True)
_libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
_RESERVED, _HEADROOM, _PENDING = "reserved", "_headroom", "_pending"


def pages(size: int) -> int:
    return -(-size // PAGE) * PAGE


def aligned_end(fd: int) -> int:
    """Where the next range of a spool starts: past its end, on a page of its own, so
    freeing one range never touches another's blocks."""
    return pages(os.lseek(fd, 0, os.SEEK_END))


def claim(ctx: ToolContext, snap: Snapshot, content: int, spool: tuple[int, int]) -> None:
    """Reserve room for keeping `snap` (`content` bytes not yet on the history's disk)
    in `spool` (index, descriptor): refused, or marked unkept, when there is none."""
    assert ctx.record is not None
    need = pages(content) + _lines(snap.path)
    first = _RESERVED not in ctx.record
    if first:
        need += SLACK
    if _take(ctx, need):
        return
    extra = 0 if first else _CHUNK  # a call's second snapshot: one of a tree, take more
    try:
        _allocate(ctx, spool, pages(need + extra))
    except OSError as exc:
        full(ctx, snap, exc)
        return
    _take(ctx, need)


def ahead(ctx: ToolContext, content: int, paths: list[str], spool: tuple[int, int],
          shown: str) -> None:
    """Reserve, before the first of several changes, room for keeping all of them: a
    call that changes many files one after another (a patch of several files, a
    rewind) is refused before it changes any, never half way."""
    assert ctx.record is not None
    if not paths:
        return
    need = pages(content) + sum(_lines(p) + PAGE for p in paths) + SLACK
    try:
        _allocate(ctx, spool, pages(need))
    except OSError as exc:
        if ctx.history_full != "write":  # else each change finds out for itself
            raise refusal(exc, shown) from None


def give_back(ctx: ToolContext, size: int) -> bool:
    """Free up to `size` bytes of the reservation not yet taken (its end), so streamed
    content can take them; False when there is none."""
    spools = ctx.history_spools
    room = ctx.record.get(_HEADROOM) if ctx.record is not None else None
    if not room or not room[2] or spools is None:
        return False
    index, offset, length = room
    cut = min(length, pages(size))
    free(spools[index], offset + length - cut, cut)
    ctx.record[_HEADROOM] = (index, offset, length - cut)  # type: ignore[index]
    return True


def _lines(path: str) -> int:
    return 2 * (_LINE + 6 * len(os.fsencode(path)))


def _take(ctx: ToolContext, need: int) -> bool:
    """Take `need` bytes from the front of the reservation not yet taken."""
    assert ctx.record is not None
    room = ctx.record.get(_HEADROOM)
    if room is None or room[2] < need:
        return False
    index, offset, length = room
    need = min(pages(need), length)
    ctx.record[_HEADROOM] = (index, offset + need, length - need)
    return True


def _allocate(ctx: ToolContext, spool: tuple[int, int], length: int) -> None:
    """A new reservation of `length` bytes, which becomes the room not yet taken."""
    assert ctx.record is not None
    index, fd = spool
    offset = aligned_end(fd)
    allocate(fd, offset, length)
    ctx.record.setdefault(_RESERVED, []).append((index, offset, length))
    ctx.record[_HEADROOM] = (index, offset, length)


def allocate(fd: int, offset: int, length: int) -> None:
    """Blocks for that range, taken now (the file grows to cover it)."""
    if _libc.fallocate(fd, 0, offset, length) == 0:
        return
    err = ctypes.get_errno()
    if err != errno.EOPNOTSUPP:
        raise OSError(err, os.strerror(err))
    os.pwrite(fd, bytes(length), offset)  # a file system without fallocate: zeros


def free(fd: int, offset: int, length: int) -> None:
    if length > 0:
        _libc.fallocate(fd, _PUNCH_HOLE, offset, length)


def full(ctx: ToolContext, snap: Snapshot, exc: OSError) -> None:
    """The history's disk cannot take what `snap` needs: refuse the change, or (under
    --history-full write) let it go ahead with `snap` marked as not kept."""
    if ctx.history_full != "write":
        raise refusal(exc, snap.path)
    snap.unkept = errno.errorcode.get(exc.errno or 0, str(exc.errno))
    snap.data = None


def refusal(exc: OSError, path: str) -> ToolError:
    name = errno.errorcode.get(exc.errno or 0, str(exc.errno))
    return ToolError(
        "write_failed", f"The history cannot keep what this change would replace "
        f"({name}: {exc.strerror}), so nothing was changed: {path}. Free space where the "
        "history is kept, or have the server started with --history-full write to change "
        "files the history cannot keep.", path=path, errno=name, where="history")


def pend(ctx: ToolContext, index: int, offset: int, size: int) -> None:
    """Streamed content not yet handed back: freed at the end of the call unless a
    commit hands it to the dispatcher."""
    assert ctx.record is not None
    ctx.record.setdefault(_PENDING, []).append((index, offset, size))


def handed(ctx: ToolContext, index: int, offset: int) -> None:
    assert ctx.record is not None
    pending = ctx.record.get(_PENDING, [])
    pending[:] = [p for p in pending if (p[0], p[1]) != (index, offset)]


def settle(ctx: ToolContext, ok: bool) -> None:
    """At the end of a call: free what the dispatcher will not need (content of changes
    never made; everything when the call failed or kept nothing) and drop the
    bookkeeping from the record that goes back."""
    rec, spools = ctx.record, ctx.history_spools
    if rec is None or spools is None:
        return
    rec.pop(_HEADROOM, None)
    drop = rec.pop(_PENDING, [])
    if not ok or not rec.get("kept"):
        drop += rec.pop(_RESERVED, [])
        drop += [(*e["spool"], e["bytes"]) for e in rec.pop("kept", []) if e["spool"]]
    for index, offset, length in drop:
        free(spools[index], offset, length)


@contextmanager
def paused(ctx: ToolContext) -> Iterator[None]:
    """Changes that put back a failed call's own changes keep nothing (the call's
    snapshots are discarded) and so need no room: they must not fail for want of it."""
    was, ctx.keeping_paused = ctx.keeping_paused, True
    try:
        yield
    finally:
        ctx.keeping_paused = was
