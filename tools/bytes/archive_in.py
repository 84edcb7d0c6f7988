"""Archives in (docs/protocol.md, Bytes in and out): `archive.import_begin` opens a spool
(tools/bytes/spool.py) whose parts arrive by `file.upload_part` (as `PUT /archive/{dir}`
streams them); `archive.import_commit` validates the whole archive
(tools/bytes/archive_check.py), checks every destination, and only then lands each file by
the one write path (a rename of its spooled bytes), so each is recorded in the call's one
record and kept in history like a write, and `workspace.rewind` to a checkpoint taken
before undoes the import. All or nothing: a write that fails midway puts back every file
already landed (as codex apply_patch does), then the error says so.

Where the workspace disagrees with the archive, the archive is refused before anything is
written: a file or symlink where a directory is needed, a directory where a file goes, a
file over an existing symlink (it would write wherever the link leads), a symlink over a
file. The reply counts files and symlinks `created` and `replaced`, and the `bytes`
written (counts, not lists: an archive may hold a million entries)."""

from __future__ import annotations

import hashlib
import os
import secrets
import stat
from dataclasses import dataclass
from typing import Any

from chorus_tools.tools.bytes.archive_check import DIR, FILE, Entry, read_plan, refused
from chorus_tools.tools.bytes.spool import DATA, Meta, Spool
from chorus_tools.tools.confine.sandbox import ROOT
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError, from_os_error
from chorus_tools.tools.mutate import keep, reserve
from chorus_tools.tools.mutate.quota import charge
from chorus_tools.tools.mutate.restore import current
from chorus_tools.tools.mutate.atomic import (TEMP_PREFIX, Spooled, locked_dir, mutate,
                                              open_parent, split_parent)


@dataclass
class Landing:
    """One entry's destination as the workspace holds it now."""

    entry: Entry
    rel: str
    before: os.stat_result | None
    old_link: str | None = None


def import_begin(ctx: ToolContext, path: str) -> dict[str, Any]:
    """A spool for an archive to extract into directory `path` (made if missing)."""
    rel = ctx.ws.rel(path)
    try:
        os.close(ctx.ws.open_dir(rel, shown=path))
    except ToolError as err:
        if err.code != "file_not_found":
            raise
    return {"upload_id": Spool.begin(ctx, Meta(path=path))}


def import_commit(ctx: ToolContext, upload_id: str) -> dict[str, Any]:
    with Spool.open(ctx, upload_id) as spool:
        shown = spool.meta.path
        try:
            base = ctx.ws.rel(shown)
            plan = read_plan(ctx, spool.dir_fd, DATA)
            landings, made = _check(ctx, base, list(plan.entries.values()))
            result = _land_all(ctx, spool.dir_fd, landings, made, shown)
        finally:
            spool.discard()
    if ctx.record is not None:
        ctx.record["path"] = shown  # the commit's params name no path: its record does
    return result


def _join(base: str, name: str) -> str:
    return name if base == ROOT else f"{base}/{name}"


def _check(ctx: ToolContext, base: str, entries: list[Entry]) -> tuple[list[Landing], list[str]]:
    """Every destination checked before any write; the landings and the directories to
    make (parents first)."""
    dirs: dict[str, bool] = {}  # rel -> exists already
    made: list[str] = []

    def directory(rel: str, name: str) -> None:
        if rel in dirs or rel == ROOT:
            return
        parent = split_parent(rel)[0]
        directory(parent, name.rpartition("/")[0])
        st = None if parent in made else current(ctx, rel, rel)
        if st is not None and not stat.S_ISDIR(st.st_mode):
            raise ToolError("not_a_directory", f"The archive was refused whole, nothing was "
                            f"written: {name!r} needs {rel} to be a directory, and the "
                            "workspace has a file or symlink there.", path=rel, entry=name)
        dirs[rel] = st is not None
        if st is None:
            made.append(rel)

    landings = []
    for entry in entries:
        rel = _join(base, entry.name)
        if ctx.ws.deny.denies(rel):
            raise ToolError("permission_denied", f"The archive was refused whole, nothing "
                            f"was written: {rel} matches the server's --deny rules.",
                            path=rel, entry=entry.name)
        if entry.kind == DIR:
            directory(rel, entry.name)
            continue
        parent = split_parent(rel)[0]
        directory(parent, entry.name.rpartition("/")[0])
        st = None if parent in made else current(ctx, rel, rel)
        landings.append(_landing(ctx, entry, rel, st))
    return landings, made


def _landing(ctx: ToolContext, entry: Entry, rel: str, st: os.stat_result | None) -> Landing:
    if st is None:
        return Landing(entry, rel, None)
    if stat.S_ISDIR(st.st_mode):
        raise ToolError("is_directory", f"The archive was refused whole, nothing was "
                        f"written: {rel} is a directory in the workspace and a "
                        f"{entry.kind} in the archive.", path=rel, entry=entry.name)
    if entry.kind == FILE and stat.S_ISREG(st.st_mode):
        return Landing(entry, rel, st)
    if entry.kind != FILE and stat.S_ISLNK(st.st_mode):
        parent, name = split_parent(rel)
        fd = ctx.ws.open_dir(parent, shown=rel)
        try:
            return Landing(entry, rel, st, os.readlink(name, dir_fd=fd))
        finally:
            os.close(fd)
    raise refused(f"is a {entry.kind} where the workspace has a "
                  f"{'symlink' if stat.S_ISLNK(st.st_mode) else 'special file'}", entry.name,
                  path=rel)


def _land_all(ctx: ToolContext, spool_fd: int, landings: list[Landing], made: list[str],
              shown: str) -> dict[str, Any]:
    replaced = [x for x in landings if x.before is not None and x.entry.kind == FILE]
    keep.ahead(ctx, sum(x.before.st_size for x in replaced if x.before), [x.rel for x in
               landings], shown)
    done: list[Landing] = []
    written = 0
    try:
        for rel in made:
            os.close(open_parent(ctx, rel, rel, create=True))
        for i, landing in enumerate(landings):
            if landing.entry.kind == FILE:
                _land_file(ctx, spool_fd, landing, i)
                written += landing.entry.size
            else:
                _land_link(ctx, landing)
            done.append(landing)
    except ToolError as err:
        with reserve.paused(ctx):
            failed = _undo(ctx, spool_fd, done, made)
        raise ToolError(err.code, f"{err.message} The archive was not imported: the "
                        f"{len(done)} entries written before were put back.", quote=err.quote,
                        **{**err.details, "restored": len(done), "not_restored": failed}
                        ) from None
    created = sum(1 for x in landings if x.before is None)
    return {"created": created, "replaced": len(landings) - created, "bytes": written}


def _land_file(ctx: ToolContext, spool_fd: int, landing: Landing, index: int) -> None:
    entry, rel = landing.entry, landing.rel
    assert entry.spooled is not None
    if landing.before is None:
        os.chmod(entry.spooled, entry.mode, dir_fd=spool_fd)
    else:  # a second name for the old inode: the rename leaves it whole, to put back
        parent, name = split_parent(rel)
        with locked_dir(ctx, parent, shown=rel) as dir_fd:
            try:
                os.link(name, f"o{index}", src_dir_fd=dir_fd, dst_dir_fd=spool_fd,
                        follow_symlinks=False)
            except OSError as exc:
                raise from_os_error(exc, rel, "write_failed") from None
    content = Spooled(spool_fd, entry.spooled, entry.size, entry.sha256, counted=False)
    mutate(ctx, rel, shown=rel, compute=lambda _: content, create_dirs=True,
           read_current=False)


def _land_link(ctx: ToolContext, landing: Landing) -> None:
    """A symlink made beside its name and renamed over it. Not kept in history (only
    regular files are): a rewind leaves it."""
    parent, name = split_parent(landing.rel)
    with locked_dir(ctx, parent, shown=landing.rel, create=True) as dir_fd:
        temp = TEMP_PREFIX + secrets.token_hex(8)
        if landing.before is None:
            charge(ctx, 0, 1, landing.rel)
        try:
            os.symlink(landing.entry.target, temp, dir_fd=dir_fd)
            os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except OSError as exc:
            raise from_os_error(exc, landing.rel, "write_failed") from None


def _undo(ctx: ToolContext, spool_fd: int, done: list[Landing], made: list[str]) -> list[str]:
    """Put every landed entry back as it was, newest first; the paths that could not be."""
    failed = []
    for i, landing in reversed(list(enumerate(done))):
        try:
            _put_back(ctx, spool_fd, landing, i)
        except (ToolError, OSError):
            failed.append(landing.rel)
    for rel in reversed(made):
        parent, name = split_parent(rel)
        try:
            with locked_dir(ctx, parent, shown=rel) as dir_fd:
                os.rmdir(name, dir_fd=dir_fd)
        except (ToolError, OSError):
            pass  # not empty: something else put a file there meanwhile
    return failed


def _put_back(ctx: ToolContext, spool_fd: int, landing: Landing, index: int) -> None:
    parent, name = split_parent(landing.rel)
    if landing.entry.kind == FILE and landing.before is not None:
        old = f"o{index}"
        with os.fdopen(os.open(old, os.O_RDONLY | os.O_CLOEXEC, dir_fd=spool_fd), "rb") as f:
            digest = hashlib.file_digest(f, "sha256").hexdigest()
        content = Spooled(spool_fd, old, landing.before.st_size, digest, counted=False)
        mutate(ctx, landing.rel, shown=landing.rel, compute=lambda _: content)
        return
    with locked_dir(ctx, parent, shown=landing.rel) as dir_fd:
        if landing.old_link is not None:
            temp = TEMP_PREFIX + secrets.token_hex(8)
            os.symlink(landing.old_link, temp, dir_fd=dir_fd)
            os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        else:
            os.unlink(name, dir_fd=dir_fd)
