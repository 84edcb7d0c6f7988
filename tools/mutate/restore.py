"""The worker's half of the history methods (docs/protocol.md, History): it checks the paths
and changes the files; the dispatcher (rpc/dispatch/history_calls.py) owns the store and
hands the content to put back in with the job, since workers cannot reach the store at
all.

A path named by a history method must lead to its file without a symlink on the way:
history is kept under the path a change really reached, and a symlink swapped in since
could point a restore somewhere else. Such a path is `invalid_params`.
"""

from __future__ import annotations

import os
import stat
from typing import Any

from chorus_tools.tools.confine.sandbox import (ROOT, names_directory, not_a_directory,
                                                version_of)
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError, from_os_error
from chorus_tools.tools.mutate import keep
from chorus_tools.tools.mutate.atomic import (Current, locked_dir, mutate, put_symlink,
                                              split_parent)
from chorus_tools.tools.mutate.delete import delete
from chorus_tools.tools.mutate.quota import charge
from chorus_tools.tools.patch.diagnostics import (Diagnosis, Judge, refuse_introduced,
                                                  with_diagnostics)
from chorus_tools.tools.patch.syntax import HEAD_CHARS
from chorus_tools.tools.read.text import SNIFF_BYTES, binary_mime, decode


def locate(ctx: ToolContext, path: str, limit: int = 20) -> dict[str, Any]:
    """The path the history keys, checked like any other path (a restore's, judged
    before anything else)."""
    return {"path": real_path(ctx, path)}


def listed(ctx: ToolContext, path: str, limit: int = 20) -> dict[str, Any]:
    """file.history: `locate`, and a path ending in '/' names a directory: a file there
    is not_a_directory, as file.read says (docs/protocol.md, Paths)."""
    found = locate(ctx, path)
    if names_directory(path):
        st = current(ctx, found["path"], path)
        if st is not None and not stat.S_ISDIR(st.st_mode):
            raise not_a_directory(path)
    return found


def mark(ctx: ToolContext, label: str = "") -> dict[str, Any]:
    """workspace.checkpoint: nothing to do in the workspace (the options are checked: the
    label goes into the history's log, UTF-8; found by fuzzing, a lone surrogate there
    was internal_error)."""
    try:
        label.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError("invalid_params", "The checkpoint label is not valid Unicode text "
                        "(it holds a lone surrogate). Give a plain text label.",
                        param="label") from None
    return {}


def restore(ctx: ToolContext, path: str, version: str, content: bytes | None = None,
            mode: int | None = None, expected_version: str | None = None) -> dict[str, Any]:
    """Put `content` back at `path` atomically, with its mode (None: a file there keeps
    its own); None: the version is the path holding no file, so what is there is removed.
    A version that was a symlink (keep.LINK_MODE) puts the link back.
    str_replace_editor's undo_edit runs this too (tools/dialects/anthropic.py)."""
    rel = real_path(ctx, path)
    if content is not None and keep.is_link(mode):
        return {"success": True, "version": put_link(ctx, rel, path, content,
                                                     expected_version)}
    if content is not None:
        return _put_back(ctx, rel, path, content, mode, expected_version)
    st = current(ctx, rel, path)
    now = None if st is None else version_of(st)
    if expected_version is not None and now != expected_version:
        raise ToolError("conflict", f"The file changed since you read it: {path}. Read "
                        "it again and redo the restore.", path=path,
                        expected_version=expected_version, current_version=now)
    if st is not None:
        delete(ctx, rel)
    return {"success": True, "version": None}


def _put_back(ctx: ToolContext, rel: str, path: str, content: bytes, mode: int | None,
              expected_version: str | None) -> dict[str, Any]:
    """`content` written back, with `diagnostics` for a text file in a language the
    server parses (docs/protocol.md, Diagnostics)."""
    judge = Judge.of(ctx, rel, content[:HEAD_CHARS].decode("utf-8", "replace"), shown=path)
    if judge.language is None or binary_mime(content[:SNIFF_BYTES]):
        judge = None
    found: list[Diagnosis | None] = [None]

    def compute(current: Current) -> bytes:
        if judge is not None:
            found[0] = judge.replaced(current, decode(content)[0])
            refuse_introduced(judge, found[0], path)
        return content

    out = mutate(ctx, rel, shown=path, compute=compute, create_dirs=True,
                 expected_version=expected_version, mode=mode,
                 read_current=False if judge is None else judge.wants)
    assert out.stat is not None  # a file is there once content is written
    return with_diagnostics({"success": True, "version": version_of(out.stat)}, found[0])


def put_link(ctx: ToolContext, rel: str, shown: str, target: bytes,
             expected_version: str | None = None) -> str:
    """The symlink a kept version was (`target`, its text) put back at `rel` in one rename
    over whatever file or link is there, kept in the history itself like any change (so
    the restore or rewind is undone in turn); its version."""
    parent, name = split_parent(rel)
    with locked_dir(ctx, parent, shown=shown, create=True) as dir_fd:
        st = current_in(dir_fd, name)
        now = None if st is None else version_of(st)
        if expected_version is not None and now != expected_version:
            raise ToolError("conflict", f"The file changed since you read it: {shown}. Read "
                            "it again and redo the restore.", path=shown,
                            expected_version=expected_version, current_version=now)
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise ToolError("is_directory", f"{shown} is a directory now; the symlink it "
                            "was cannot replace it.", path=shown)
        snap = keep.snapshot(ctx, dir_fd, name, st, rel, shown)
        charge(ctx, -st.st_size if st is not None and stat.S_ISREG(st.st_mode) else 0,
               int(st is None), shown)
        try:
            put_symlink(dir_fd, name, os.fsdecode(target))
            made = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            os.fsync(dir_fd)
        except OSError as exc:
            raise from_os_error(exc, shown, "write_failed") from None
        keep.commit(ctx, snap, version_of(made))
    return version_of(made)


def current_in(dir_fd: int, name: str) -> os.stat_result | None:
    """The entry `name` in `dir_fd` itself (None if there is none)."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def real_path(ctx: ToolContext, path: str) -> str:
    """`path` normalised, refused if a symlink is on its way (the nearest existing
    directory above it must be where its name says, the entry itself no link). A parent
    missing, or a file at its name (a deleted directory's file), is climbed past: the
    file is not there, its history is."""
    rel = ctx.ws.rel(path)
    if rel == ROOT:
        raise ToolError("is_directory", f"The workspace root is a directory: {path}. Name "
                        "a file.", path=path)
    parent = split_parent(rel)[0]
    while True:
        try:
            fd = ctx.ws.open(parent, os.O_PATH | os.O_DIRECTORY, shown=path)
            break
        except ToolError as err:
            if err.code not in ("file_not_found", "not_a_directory") or parent == ROOT:
                raise
            parent = split_parent(parent)[0]
    try:
        reached = ctx.ws.where(fd, "" if parent == ROOT else parent)
    finally:
        os.close(fd)
    st = current(ctx, rel, path)
    if reached != ("" if parent == ROOT else parent) or (
            st is not None and stat.S_ISLNK(st.st_mode)):
        raise ToolError("invalid_params", f"The path goes through a symlink: {path}. "
                        "History is kept under a file's real path; name it without the "
                        "link.", param="path", path=path)
    return rel


def link_target(ctx: ToolContext, rel: str, shown: str | None = None) -> str:
    """The text of the symlink at `rel` (read beside it, never followed)."""
    parent, name = split_parent(rel)
    fd = ctx.ws.open_dir(parent, shown=shown or rel)
    try:
        return os.readlink(name, dir_fd=fd)
    finally:
        os.close(fd)


def current(ctx: ToolContext, rel: str, shown: str) -> os.stat_result | None:
    """The entry at `rel` itself (None if there is none)."""
    try:
        return ctx.ws.lstat(rel, shown=shown)
    except ToolError as err:
        if err.code in ("file_not_found", "not_a_directory"):
            return None
        raise
