"""The commit half of apply_patch (codex_patch.py plans): every planned file's net change
made with the core's atomic write (a new file and a rename, under the directory's lock) or
an unlink, each refusing a file that changed since the plan (conflict); on a failure the
files already changed are put back as they were (created files and the directories made for
them removed, the very entries replaced or removed renamed back, rewind_undo, so each keeps
its version and a rewind still takes it for this server's; their bytes written back only
where no link could be kept) and the error lists them in `restored` (and any that could
not be, in `not_restored`)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Any

from chorus_tools.tools.confine.sandbox import version_of
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError, from_os_error
from chorus_tools.tools.mutate import keep, reserve, rewind_undo
from chorus_tools.tools.mutate.atomic import Current, locked_dir, mutate, split_parent
from chorus_tools.tools.mutate.quota import charge


@dataclass
class PlannedFile:
    """One path the patch touches: as it was, as the plan leaves it."""

    rel: str
    shown: str
    before: bytes | None
    mode: int | None  # permission bits of the file as it was
    link: str | None  # a symlink's text when the entry is one (a delete removes the link)
    after: bytes | None = None
    present: bool = False  # an entry was there (a file, or a symlink even if unreadable)
    blocked: ToolError | None = None  # why a symlink's target cannot be read or written
    removed: bool = False  # the plan deletes the entry
    checked_link: bool = True  # `link` is known (a readable file's is looked up lazily)
    moved_mode: int | None = None  # the permission bits a move's new destination takes
    missing_dirs: list[str] = field(default_factory=list)  # to make for a new file
    held: str | None = None  # where the entry replaced is kept aside (rewind_undo)


def commit(ctx: ToolContext, files: list[PlannedFile]) -> dict[str, str | None]:
    """Make every file's net change; on a failure undo those made, then raise."""
    done: list[PlannedFile] = []
    versions: dict[str, str | None] = {}
    f = None
    kept: list[str] = []
    if files:  # a full history refuses the patch before its first file, never half way
        keep.ahead(ctx, sum(len(f.before or b"") for f in files), [f.rel for f in files],
                   files[0].shown)
    try:
        for f in sorted(files, key=_room_order) if ctx.room is not None else files:
            if f.removed and f.present:
                _hold(ctx, f, kept, follow=False)
                versions[f.rel] = _remove(ctx, f)
            elif f.after == f.before:
                versions[f.rel] = _version(ctx, f)
                continue
            else:
                if f.before is not None:
                    _hold(ctx, f, kept, follow=True)
                versions[f.rel] = _write(ctx, f)
            done.append(f)
    except ToolError as err:
        if f is not None:  # a new file's write may have made its directories first
            _remove_dirs(ctx, f)
        with reserve.paused(ctx):  # the undo must not fail for want of history room
            undone = _undo(ctx, done)
        details: dict[str, Any] = {**err.details, "restored": [f.rel for f in done]}
        if undone:
            details["not_restored"] = undone
        raise ToolError(err.code, f"{err.message} Nothing was changed: "
                        + (f"{', '.join(f.shown for f in done)} had been written and "
                           "were restored." if done else "no file had been written yet."),
                        quote=err.quote, **details) from None
    finally:
        rewind_undo.drop(ctx, kept)
    return versions


def _hold(ctx: ToolContext, f: PlannedFile, kept: list[str], *, follow: bool) -> None:
    """Hard-link aside the entry the change replaces (a write's lands where a symlink
    leads, `follow`; a removal takes the link itself), named where it really is, so two
    names of one file share it: only the first change of an entry keeps it, and the undo,
    newest first, writes the later ones' bytes back before renaming the first home."""
    try:
        real = rewind_undo.entry(ctx, f.rel, follow)
    except ToolError:
        return
    if real not in kept and rewind_undo.keep(ctx, real):
        kept.append(real)
        f.held = real


def _room_order(f: PlannedFile) -> int:
    """Under a quota, the order the files are changed in: what frees room before what
    takes it (removals, files that shrink, files that grow, new files), so a patch that
    leaves the workspace within its quota, or smaller, never crosses it on the way
    (docs/protocol.md, Quotas). Each path is planned whole, so the order changes only
    which file a failure stops at (without a quota, the patch's own order stays)."""
    if f.removed:
        return 0
    if f.before is None or f.after is None:
        return 3
    return 1 if len(f.after) <= len(f.before) else 2


def _version(ctx: ToolContext, f: PlannedFile) -> str | None:
    """The version of a file the patch leaves as it is."""
    if f.after is None:
        return None
    fd, st = ctx.ws.open_regular(f.rel, shown=f.shown)
    os.close(fd)
    return version_of(st)


def _write(ctx: ToolContext, f: PlannedFile) -> str:
    def compute(current: Current) -> bytes:
        if current.data != f.before:
            raise _changed(f)
        return f.after  # type: ignore[return-value]

    # a moved file keeps its permission bits where it lands new, set by the write itself
    # (a chmod after it would meet a symlink at the name: Linux cannot chmod one)
    mode = f.moved_mode if f.before is None else None
    out = mutate(ctx, f.rel, shown=f.shown, compute=compute, create_dirs=True, mode=mode)
    return version_of(out.stat)  # type: ignore[arg-type]


def _remove(ctx: ToolContext, f: PlannedFile) -> None:
    parent, name = split_parent(f.rel)
    with locked_dir(ctx, parent, shown=f.shown) as dir_fd:
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if f.link is None and (not stat.S_ISREG(st.st_mode) or st.st_size != len(
                    f.before or b"")):
                raise _changed(f)
            snap = keep.snapshot(ctx, dir_fd, name, st, f.rel, f.shown)
            os.unlink(name, dir_fd=dir_fd)
            os.fsync(dir_fd)
        except OSError as exc:
            raise from_os_error(exc, f.shown, "write_failed") from None
        charge(ctx, -st.st_size if stat.S_ISREG(st.st_mode) else 0, -1, f.shown)
        keep.commit(ctx, snap, None)


def _undo(ctx: ToolContext, done: list[PlannedFile]) -> list[str]:
    """Put every changed file back as it was, newest change first; the paths that could
    not be (each is tried, whatever the others do)."""
    failed = []
    for f in reversed(done):
        try:
            if f.held is not None:
                rewind_undo.put_back(ctx, f.held)
            elif f.after is None and f.link is not None:
                _restore_link(ctx, f)
            elif f.before is None:
                made = ctx.ws.resolve_symlinks(f.rel, shown=f.shown)
                _remove(ctx, PlannedFile(made, f.shown, f.after, None, None, removed=True))
                _remove_dirs(ctx, f)
            else:
                mutate(ctx, f.rel, shown=f.shown, compute=lambda _, f=f: f.before,
                       create_dirs=True, read_current=False, mode=f.mode)
        except (ToolError, OSError):
            failed.append(f.rel)
    return failed


def _restore_link(ctx: ToolContext, f: PlannedFile) -> None:
    parent, name = split_parent(f.rel)
    with locked_dir(ctx, parent, shown=f.shown) as dir_fd:
        os.symlink(f.link, name, dir_fd=dir_fd)  # type: ignore[arg-type]
    charge(ctx, 0, 1, f.shown)  # the entry its removal freed, back (an undo: never refused)


def _remove_dirs(ctx: ToolContext, f: PlannedFile) -> None:
    for rel in reversed(f.missing_dirs):
        parent, name = split_parent(rel)
        try:
            with locked_dir(ctx, parent, shown=f.shown) as dir_fd:
                os.rmdir(name, dir_fd=dir_fd)
        except (ToolError, OSError):
            return


def _changed(f: PlannedFile) -> ToolError:
    return ToolError("conflict", f"{f.shown} changed while the patch was being applied. "
                     "Read it again and send the patch anew.", path=f.shown)
