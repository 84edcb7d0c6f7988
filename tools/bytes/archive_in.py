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

import os
import stat
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from chorus_tools.tools.bytes.archive_check import DIR, FILE, Entry, read_plan, refused
from chorus_tools.tools.bytes import landing
from chorus_tools.tools.bytes.spool import DATA, Meta, Spool
from chorus_tools.tools.confine.sandbox import ROOT, version_of
from chorus_tools.tools.context import EACH_FILE, ToolContext, sha256_hex
from chorus_tools.tools.errors import ToolError, from_os_error
from chorus_tools.tools.mutate import keep
from chorus_tools.tools.mutate.quota import charge
from chorus_tools.tools.mutate.restore import current, link_target
from chorus_tools.tools.mutate.atomic import (Spooled, locked_dir, mutate_held,
                                              put_symlink, split_parent, sync_all)


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
    return {"upload_id": Spool.begin(ctx, Meta(path=path, archive=True))}


def import_commit(ctx: ToolContext, upload_id: str) -> dict[str, Any]:
    with Spool.open(ctx, upload_id) as spool:
        shown = spool.meta.path
        if ctx.record is not None:  # the commit's params name no path: its record does,
            ctx.record["path"] = shown  # a refusal's too (rpc/dispatch/invoker.py)
        spool.committed_as(archive=True)
        try:
            base = ctx.ws.rel(shown)
            plan = read_plan(ctx, spool.dir_fd, DATA)
            spool.release()  # every entry is copied out: the archive itself is done with
            landings, made = _check(ctx, base, list(plan.entries.values()))
            result = _land_all(ctx, spool.dir_fd, landings, made, shown)
        finally:
            spool.discard()
    if ctx.record is not None:
        ctx.record["bytes"] = result["bytes"]
    return result


def _join(base: str, name: str) -> str:
    return name if base == ROOT else f"{base}/{name}"


def _check(ctx: ToolContext, base: str, entries: list[Entry]) -> tuple[list[Landing], list[str]]:
    """Every destination checked before any write; the landings and the directories to
    make (parents first)."""
    dirs: dict[str, bool] = {}  # rel -> exists already (False: one of `made`)
    made: list[str] = []

    def directory(rel: str, name: str) -> None:
        if rel in dirs or rel == ROOT:
            return
        parent = split_parent(rel)[0]
        directory(parent, name.rpartition("/")[0])
        st = None if dirs.get(parent) is False else current(ctx, rel, rel)
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
        st = None if dirs.get(parent) is False else current(ctx, rel, rel)
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
        return Landing(entry, rel, st, link_target(ctx, rel))
    raise refused(f"is a {entry.kind} where the workspace has {_mismatch(st)}", entry.name,
                  path=rel)


def _mismatch(st: os.stat_result) -> str:
    """What the workspace holds where an entry of the other kind would land, and why it
    stays: a file is replaced only by a file (the landing journal keeps a replaced file's
    inode and a replaced link's text, so a link over a file could not be rolled back),
    a link only by a link (a file would be written where it leads)."""
    if stat.S_ISREG(st.st_mode):
        return ("a regular file: an import replaces a file only with a file (rolling the "
                "import back could not give the file back). Delete the file first to put "
                "the symlink there")
    if stat.S_ISLNK(st.st_mode):
        return ("a symlink: the file would be written where the link leads. Delete the "
                "link first to put the file there")
    kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(
        st.st_mode) else "a device"
    return f"{kind}, a special file: an import never replaces one"


def _land_all(ctx: ToolContext, spool_fd: int, landings: list[Landing], made: list[str],
              shown: str) -> dict[str, Any]:
    """Every entry landed by a rename, synced once at the end (all or nothing: the
    journal, written first, lets a killed commit be rolled back: tools/bytes/landing.py)."""
    replaced = [x for x in landings if x.before is not None and x.entry.kind == FILE]
    keep.ahead(ctx, sum(x.before.st_size for x in replaced if x.before), [x.rel for x in
               landings], shown)
    items = [_item(x) for x in landings]
    try:
        landing.write(spool_fd, items, made)
    except OSError as exc:
        raise from_os_error(exc, shown, "write_failed") from None
    written = 0
    each: list[list[Any]] = []  # every entry's record line (docs/protocol.md, Audit records)
    try:
        _make_dirs(ctx, made)
        for parent, run in groupby(enumerate(landings), lambda ix: _parent(ix[1])):
            with locked_dir(ctx, parent, shown=parent) as dir_fd:
                for i, x in run:
                    if x.entry.kind == FILE:
                        _land_file(ctx, spool_fd, dir_fd, x, i)
                        written += x.entry.size
                    else:
                        _land_link(ctx, dir_fd, x)
                    _note(ctx, x, each)
        sync_all(ctx, shown)
        landing.landed(spool_fd)
    except (ToolError, OSError) as exc:
        err = exc if isinstance(exc, ToolError) else from_os_error(exc, shown, "write_failed")
        restored, failed = landing.undo(ctx, spool_fd) or (0, [])
        raise ToolError(err.code, f"{err.message.rstrip('.')}. The archive was not imported: the "
                        f"{restored} entries written before were put back.", quote=err.quote,
                        **{**err.details, "restored": restored, "not_restored": failed}
                        ) from None
    if ctx.record is not None and ctx.auditing and each:
        ctx.record[EACH_FILE] = each
    created = sum(1 for x in landings if x.before is None)
    return {"created": created, "replaced": len(landings) - created, "bytes": written}


def _note(ctx: ToolContext, x: Landing, each: list[list[Any]]) -> None:
    """The entry just landed, as its own record line will say it: a file with the hashes
    its write noted (taken, so the next file's start from none), a symlink with its
    text's (as file.delete hashes a link)."""
    rec = ctx.record
    if rec is None or not ctx.auditing:
        return
    if x.entry.kind == FILE:
        each.append([x.rel, x.entry.size, rec.pop("sha256_before", None),
                     rec.pop("sha256_after", None)])
    else:
        each.append([x.rel, 0, sha256_hex(None if x.old_link is None else
                                          os.fsencode(x.old_link)),
                     sha256_hex(os.fsencode(x.entry.target))])


def _make_dirs(ctx: ToolContext, made: list[str]) -> None:
    """The directories the archive needs, parents first: each by one mkdirat in its
    parent (already there or made just before), synced with the rest by sync_all."""
    for rel in made:
        parent, name = split_parent(rel)
        fd = ctx.ws.open_dir(parent, shown=rel)
        try:
            charge(ctx, 0, 1, rel)
            os.mkdir(name, 0o777, dir_fd=fd)
        except FileExistsError:
            pass  # made by someone else meanwhile: landing finds out what it is
        except OSError as exc:
            raise from_os_error(exc, rel, "write_failed") from None
        finally:
            os.close(fd)


def _parent(x: Landing) -> str:
    """The directory an entry lands in. The entries of one directory that follow one
    another in the archive (as tar writes them) land under one open and one lock of it,
    in archive order (what a failure puts back is what landed before it)."""
    return split_parent(x.rel)[0]


def _item(x: Landing) -> landing.Item:
    """What the journal says of an entry (tools/bytes/landing.py)."""
    entry = x.entry
    if entry.kind != FILE:
        return landing.Item(x.rel, landing.LINK, x.before is not None, x.old_link,
                            target=entry.target)
    return landing.Item(x.rel, landing.FILE, x.before is not None, sha256=entry.sha256,
                        size=entry.size)


def _land_file(ctx: ToolContext, spool_fd: int, dir_fd: int, landing: Landing,
               index: int) -> None:
    """One file renamed into directory `dir_fd` (held locked) by the one write path."""
    entry, rel = landing.entry, landing.rel
    assert entry.spooled is not None
    if landing.before is not None:  # a second name for the old inode: the rename leaves
        # it whole, to put back (a new file's spooled copy has its mode already)
        try:
            os.link(split_parent(rel)[1], f"o{index}", src_dir_fd=dir_fd,
                    dst_dir_fd=spool_fd, follow_symlinks=False)
        except OSError as exc:
            raise from_os_error(exc, rel, "write_failed") from None
    content = Spooled(spool_fd, entry.spooled, entry.size, entry.sha256, counted=False,
                      sync=False)
    mutate_held(ctx, dir_fd, rel, shown=rel, compute=lambda _: content)


def _land_link(ctx: ToolContext, dir_fd: int, landing: Landing) -> None:
    """A symlink made beside its name in directory `dir_fd` (held locked) and renamed
    over it, kept in the history as what was there: nothing (a rewind removes the link),
    or the older symlink, its target (a rewind puts it back), while the path is as the
    import left it."""
    name = split_parent(landing.rel)[1]
    if landing.before is None:
        charge(ctx, 0, 1, landing.rel)
    snap = keep.snapshot(ctx, dir_fd, name, landing.before, landing.rel, landing.rel)
    try:
        put_symlink(dir_fd, name, landing.entry.target)
        made = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError as exc:
        raise from_os_error(exc, landing.rel, "write_failed") from None
    keep.commit(ctx, snap, version_of(made))


def recover(ctx: ToolContext, upload_id: str) -> dict[str, Any]:
    """What became of an import whose commit was killed midway (the invoker runs this at
    once, rpc/dispatch/recover.py): what it had landed is rolled back (tools/bytes/
    landing.py) and its spool removed. `rolled_back`, and a sentence saying where the
    workspace stands."""
    try:
        spool = Spool.open(ctx, upload_id)
    except ToolError:
        return {"rolled_back": False, "note": "Its spool is gone: the import had ended "
                "(landed whole, or refused) just before, or was rolled back already; list "
                "the directory before retrying."}
    with spool:
        was = landing.state(spool.dir_fd)
        undone = landing.undo(ctx, spool.dir_fd)
        spool.discard()
    if undone is not None:
        return {"rolled_back": True, "note": f"The import was rolled back: the {undone[0]} "
                "entries it had landed were put back and the directories it made removed, "
                "so nothing of the archive is in the workspace."}
    return {"rolled_back": False, "note": "The import had landed whole just before: every "
            "entry of the archive is in place." if was == "landed" else
            "Nothing of the archive had landed yet."}
