"""The quota's one check, made by every place a change adds to the workspace
(docs/protocol.md, Quotas).

The invoker (rpc/dispatch/quota.py) holds the workspace's one usage account; before a
change runs it puts the room left in the Task (`Room`: used and limit, bytes and files),
and the worker keeps it in `ctx.room`. Only the tool knows what its change adds, so the
adding places (the atomic write, mkdir, a rename onto nothing, an upload part) call
`charge` with their growth before they commit it: the growth of the whole call is summed
in `ctx.grown`, so a multi-file change (apply_patch, rewind) that would cross the quota
half-way fails at that file and puts back what it made, all or nothing. A change that
shrinks is never refused, even over quota. The invoker reads `ctx.grown` back from the
job's record (GROWN) and books it.

`measure` is the fresh count the account starts from: the warm tree's figures when it is
up (tools/warm/answers.py), else a walk of the disk; plus the bytes of uploads still in
parts, which count against the quota as they arrive (their spool's growth is charged by
each part, and a commit that lands it adds only the entry).
"""

from __future__ import annotations

import os
import stat
from typing import NamedTuple

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.confine.sandbox import ROOT

GROWN = "quota_grown"  # the record key the invoker pops: (bytes, files) the call added,
# and the bytes it freed that stay freed even if it fails


class Room(NamedTuple):
    """What the invoker knew when the change began; a limit None is unlimited."""

    used_bytes: int
    limit_bytes: int | None
    used_files: int
    limit_files: int | None


def charge(ctx: ToolContext, nbytes: int, nfiles: int, shown: str, *,
           lasting: bool = False) -> None:
    """Count a change's growth (negative: it shrinks) against the room, before it is
    committed; quota_exceeded when the call's growth so far would pass what is left.
    `lasting`: bytes freed even if the call then fails (a spool removed in any case), so
    the invoker books them whatever the outcome."""
    room = ctx.room
    if room is None:
        return
    grown_bytes, grown_files = ctx.grown[0] + nbytes, ctx.grown[1] + nfiles
    if not ctx.keeping_paused:  # putting a failed call's own changes back always passes
        _refuse(nbytes, grown_bytes, room.used_bytes, room.limit_bytes, "bytes", shown)
        _refuse(nfiles, grown_files, room.used_files, room.limit_files, "files", shown)
    ctx.grown = (grown_bytes, grown_files, ctx.grown[2] + (nbytes if lasting else 0))
    if ctx.record is not None:
        ctx.record[GROWN] = ctx.grown


def ahead(ctx: ToolContext, nbytes: int, nfiles: int, shown: str) -> None:
    """Refuse, before its first file, a change of several files whose whole growth is
    known at its start (a rewind) and would pass the quota: nothing is written, so nothing
    is put back, and no file it planned to change gets a new version (a file put back is
    written again: the history would take it for someone else's change). `charge` still
    counts each file as it lands."""
    room = ctx.room
    if room is None or ctx.keeping_paused:
        return
    _refuse(nbytes, ctx.grown[0] + nbytes, room.used_bytes, room.limit_bytes, "bytes", shown)
    _refuse(nfiles, ctx.grown[1] + nfiles, room.used_files, room.limit_files, "files", shown)


def _refuse(step: int, grown: int, used: int, limit: int | None, quota: str,
            shown: str) -> None:
    if step <= 0 or limit is None or grown <= max(limit - used, 0):
        return
    raise ToolError("quota_exceeded", f"This change would take the workspace past its "
                    f"{quota} quota ({used} used of {limit}, the change needs {grown} "
                    f"more): {shown}. Nothing was written. Free room first (delete or "
                    "shrink files) or make a smaller change.", path=shown, quota=quota,
                    used=used, limit=limit, needed=grown)


def measure(ctx: ToolContext, walk: bool = True) -> dict[str, int] | None:
    """The workspace's usage now: {bytes, files} (regular files' sizes; every entry but
    the root and our temporary files counted as a file). Without `walk`, None when the
    warm tree cannot answer (building, or gone): the invoker keeps its own figures
    rather than walk a large tree on every change."""
    from chorus_tools.tools.warm.client import ask  # the warm process imports us back

    root_fd = ctx.ws.open_dir(ROOT)
    try:
        spooled = _spooled_bytes(root_fd)
    finally:
        os.close(root_fd)
    found = ask(ctx, "usage")
    if found is not None:
        return {"bytes": found["bytes"] + spooled, "files": found["files"]}
    if not walk:
        return None
    total, count = spooled, 0
    stack = [ctx.ws.open_dir(ROOT)]
    while stack:
        fd = stack.pop()
        try:
            total, count = _scan(fd, stack, total, count)
        finally:
            os.close(fd)
    return {"bytes": total, "files": count}


def _spooled_bytes(root_fd: int) -> int:
    """The bytes of uploads still in parts (tools/bytes/spool.py: beneath the reserved
    prefix at the root, which the walk and the warm tree never count as files)."""
    from chorus_tools.tools.bytes.spool import DATA, SPOOL_PREFIX

    total = 0
    for name in os.listdir(root_fd):
        if not name.startswith(SPOOL_PREFIX):
            continue
        try:  # never through a symlink someone put at a spool's name
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                         dir_fd=root_fd)
        except OSError:
            continue
        try:
            total += os.stat(DATA, dir_fd=fd, follow_symlinks=False).st_size
        except OSError:
            pass
        finally:
            os.close(fd)
    return total


def _scan(fd: int, stack: list[int], total: int, count: int) -> tuple[int, int]:
    from chorus_tools.tools.confine.reserved import is_temp_name

    try:
        entries = list(os.scandir(fd))
    except OSError:
        return total, count
    for entry in entries:
        if is_temp_name(entry.name):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        count += 1
        if stat.S_ISREG(st.st_mode):
            total += st.st_size
        elif stat.S_ISDIR(st.st_mode):
            try:
                stack.append(os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
                                     | os.O_CLOEXEC, dir_fd=fd))
            except OSError:
                pass
    return total, count

