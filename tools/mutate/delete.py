"""file.delete: remove a regular file or a symlink (never its target, never a directory)."""

from __future__ import annotations

import os
import stat
from typing import Any

from chorus_tools.tools.mutate.atomic import locked_dir, read_entry, split_parent
from chorus_tools.tools.context import ToolContext, note_hashes
from chorus_tools.tools.mutate import keep
from chorus_tools.tools.mutate.quota import charge
from chorus_tools.tools.errors import ToolError, from_os_error
from chorus_tools.tools.confine.policy import refuse_denied_entry
from chorus_tools.tools.confine.sandbox import ROOT, check_regular, names_directory


def delete(ctx: ToolContext, path: str) -> dict[str, Any]:
    """Unlink the last component itself, under its directory's lock, so a concurrent
    patch of the same file either finishes before or finds it gone."""
    rel = ctx.ws.rel(path)
    if rel == ROOT or names_directory(path):
        raise ToolError("is_directory", f"Path names a directory: {path}. file.delete "
                        "removes files and symlinks only; give a file's path.", path=path)
    parent, name = split_parent(rel)
    with locked_dir(ctx, parent, shown=path) as dir_fd:
        refuse_denied_entry(ctx, dir_fd, name, rel, path)
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError as exc:
            raise from_os_error(exc, path) from None
        if stat.S_ISDIR(st.st_mode):
            raise ToolError("is_directory",
                            f"Path is a directory: {path}. file.delete removes files and "
                            "symlinks only.", path=path)
        if not stat.S_ISLNK(st.st_mode):
            check_regular(st, path)
        snap = keep.snapshot(ctx, dir_fd, name, st, rel, path)
        if ctx.record is not None and ctx.auditing:
            removed = _removed_bytes(dir_fd, name, st, path, snap)
            note_hashes(ctx, before=removed, before_known=True, after_known=True,
                        nbytes=st.st_size if removed is None else len(removed))
            if removed is None:
                keep.note_before(ctx, snap)
                ctx.record["sha256_after"] = None
        try:
            os.unlink(name, dir_fd=dir_fd)
            os.fsync(dir_fd)
        except OSError as exc:
            raise from_os_error(exc, path, "write_failed") from None
        keep.commit(ctx, snap, None)
        charge(ctx, -st.st_size if stat.S_ISREG(st.st_mode) else 0, -1, path)
    return {"success": True}


def _removed_bytes(dir_fd: int, name: str, st: os.stat_result, path: str,
                   snap: keep.Snapshot | None) -> bytes | None:
    """What the audit record hashes: a file's content, or a symlink's target text; None
    when the history's snapshot hashed the file already."""
    if stat.S_ISLNK(st.st_mode):
        return os.fsencode(os.readlink(name, dir_fd=dir_fd))
    if snap is not None and snap.sha256 is not None:
        return None
    return read_entry(dir_fd, name, st, path)
