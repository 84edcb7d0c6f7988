"""The landing journal of an archive import (docs/protocol.md, Bytes in and out): what keeps
an import all or nothing when the worker landing it is killed midway (the request
timeout, a kill -9 of the worker or of the whole server), not only when a write fails.

- Before the first entry lands, the commit writes `landing.json` into its spool and
  fsyncs it: each entry's destination and kind, whether something was there, the old
  symlink's target, and what says an entry holds the archive's content (a file: its size
  and SHA-256; a symlink: its target), and the directories it makes. A file replaced
  keeps its old inode as a second name `o{i}` in the spool, made just before it lands.
- Once every entry is in place and synced, `landing.json` is renamed `landed.json`: the
  commit point; past it, nothing rolls the import back.
- Rolling back puts back, newest first, only what still holds the archive's content (a
  file someone changed since is theirs): a file replaced gets its old inode back (so its
  version is the one it had), one created is removed, a symlink gets its old target or
  is removed; then the directories made are removed when empty. Every change goes
  through the one write path, keeping nothing in the history: the import's own changes
  never reached it, and the workspace ends as it was before.

Who rolls back a killed import: the invoker, in a follow-up job right after the kill
(tools/bytes/archive_in.py `recover`); the server's next start, for a server killed
(tools/bytes/spool.py `recover`); and the expiry of an idle spool, as a last resort.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.encoded import any_json
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.mutate import reserve
from chorus_tools.tools.mutate.atomic import (Current, Spooled, locked_dir, mutate,
                                              put_symlink, read_entry, split_parent,
                                              sync_all, unmake)
from chorus_tools.tools.mutate.restore import current

JOURNAL, LANDED = "landing.json", "landed.json"
FILE, LINK = "file", "symlink"  # the kinds of tools/bytes/archive_check.py that land


@dataclass
class Item:
    """One entry as the journal holds it; `o{index}` is its old inode's name in the spool."""

    rel: str
    kind: str
    existed: bool
    old_link: str | None = None
    sha256: str = ""
    size: int = 0
    target: str = ""

    def row(self) -> tuple[str, str, bool, str | None, str, int, str]:
        """The journal's row, in field order (dataclasses.astuple deep-copies each field:
        a second per 25k entries)."""
        return (self.rel, self.kind, self.existed, self.old_link, self.sha256, self.size,
                self.target)


def write(spool_fd: int, items: list[Item], made: list[str]) -> None:
    """The journal, durable before anything lands: a temp file, fsync, rename, fsync."""
    body = any_json({"made": made, "items": [x.row() for x in items]})  # names not UTF-8
    fd = os.open(JOURNAL + ".new", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
                 | os.O_CLOEXEC, 0o600, dir_fd=spool_fd)
    try:
        view = memoryview(body)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(JOURNAL + ".new", JOURNAL, src_dir_fd=spool_fd, dst_dir_fd=spool_fd)
    os.fsync(spool_fd)


def landed(spool_fd: int) -> None:
    """The commit point: every entry is in place and synced."""
    os.rename(JOURNAL, LANDED, src_dir_fd=spool_fd, dst_dir_fd=spool_fd)
    os.fsync(spool_fd)


def state(dir_fd: int, spool: str = ".") -> str:
    """Of the spool `spool` in `dir_fd`: "landing" (a commit began landing and never
    reached its commit point), "landed", or "" (no commit began landing)."""
    for name, said in ((JOURNAL, "landing"), (LANDED, "landed")):
        try:
            os.stat(f"{spool}/{name}", dir_fd=dir_fd, follow_symlinks=False)
            return said
        except FileNotFoundError:
            continue
    return ""


def undo(ctx: ToolContext, spool_fd: int) -> tuple[int, list[str]] | None:
    """Roll back the import whose journal this spool holds (its commit failed, or was
    killed): (entries put back, paths that could not be), or None without a journal."""
    try:
        fd = os.open(JOURNAL, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=spool_fd)
    except FileNotFoundError:
        return None
    try:
        body = os.pread(fd, os.fstat(fd).st_size, 0)
    finally:
        os.close(fd)
    journal = json.loads(body)  # read once, after a kill: the parser that reads every name
    with aside(ctx):
        done = roll_back(ctx, spool_fd, [Item(*x) for x in journal["items"]],
                         journal["made"])
    os.unlink(JOURNAL, dir_fd=spool_fd)
    return done


@contextmanager
def aside(ctx: ToolContext) -> Iterator[None]:
    """A rollback keeps nothing in the history, hashes nothing into the call's record (it
    may run inside another call: a spool call finding an idle journal), and books nothing
    in the quota's account: the killed commit's growth never reached it either (a server
    restarted measures afresh)."""
    auditing, room = ctx.auditing, ctx.room
    ctx.auditing, ctx.room = False, None
    try:
        with reserve.paused(ctx):
            yield
    finally:
        ctx.auditing, ctx.room = auditing, room


def roll_back(ctx: ToolContext, spool_fd: int, items: list[Item],
              made: list[str]) -> tuple[int, list[str]]:
    """Put back, newest first, every entry that holds the archive's content (one never
    landed costs an lstat), then remove the directories made that are empty; (entries
    put back, paths that could not be). The caller holds `aside`."""
    restored, failed = 0, []
    for index in range(len(items) - 1, -1, -1):
        item = items[index]
        try:
            restored += _put_back(ctx, spool_fd, item, index)
        except (ToolError, OSError):
            failed.append(item.rel)
    unmake(ctx, list(made))
    if restored:
        sync_all(ctx, items[0].rel)
    return restored, failed


def _put_back(ctx: ToolContext, spool_fd: int, item: Item, index: int) -> bool:
    if item.kind == FILE and item.existed:
        return _file_back(ctx, spool_fd, item, f"o{index}")
    found = current(ctx, item.rel, item.rel)  # a first look without the lock: an entry
    if found is None or stat.S_IFMT(found.st_mode) != (  # never landed waits for none
            stat.S_IFREG if item.kind == FILE else stat.S_IFLNK):
        return False
    parent, name = split_parent(item.rel)
    with locked_dir(ctx, parent, shown=item.rel) as dir_fd:
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        if item.kind == FILE:
            data = read_entry(dir_fd, name, st, item.rel) if _sized(item, st) else None
            if not _holds(item, data):
                return False
            os.unlink(name, dir_fd=dir_fd)
            return True
        if not stat.S_ISLNK(st.st_mode) or os.readlink(name, dir_fd=dir_fd) != item.target:
            return False
        if item.old_link is None:
            os.unlink(name, dir_fd=dir_fd)
            return True
        put_symlink(dir_fd, name, item.old_link)
        return True


def _file_back(ctx: ToolContext, spool_fd: int, item: Item, old: str) -> bool:
    """The old inode renamed back over the archive's file by the one write path (so the
    file is again the version it was), if the archive's file is still there."""
    try:
        old_st = os.stat(old, dir_fd=spool_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False  # killed before this entry landed: its old file never moved
    put = [False]

    def compute(current: Current) -> Spooled | None:
        if not _holds(item, current.data):
            return None
        put[0] = True
        # no digest: a rollback hashes nothing into the record (`aside`)
        return Spooled(spool_fd, old, old_st.st_size, "", counted=False, sync=False)

    mutate(ctx, item.rel, shown=item.rel, compute=compute,
           read_current=lambda st: _sized(item, st))
    return put[0]


def _sized(item: Item, st: os.stat_result) -> bool:
    """Whether the entry may hold the archive's content: a regular file of its size."""
    return stat.S_ISREG(st.st_mode) and st.st_size == item.size


def _holds(item: Item, data: bytes | None) -> bool:
    """The entry's bytes (read only when `_sized`) are the archive's."""
    return data is not None and hashlib.sha256(data).hexdigest() == item.sha256
