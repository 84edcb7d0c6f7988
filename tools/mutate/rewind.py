"""workspace.rewind's worker half (docs/protocol.md, History): put every planned path back
as it was at the checkpoint, all or nothing.

Each item says what the path must hold (`content`, None: no file), with which mode (a
symlink's, keep.LINK_MODE: `content` is its target, and the link is put back), and at
which version this server last left it (`expected`). A path still at that version is
rewound; one already holding the content is left (a rewind completed after a crash); any
other state is someone else's change: a conflict, left alone unless `force`. If a change
fails, those already made are put back before the error is raised.
"""

from __future__ import annotations

import hashlib
import os
import stat
from typing import Any

from chorus_tools.tools.confine.sandbox import version_of
from chorus_tools.tools.context import ToolContext, sha256_hex
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.mutate import keep, quota, reserve, rewind_shapes, rewind_undo
from chorus_tools.tools.mutate.atomic import locked_dir, mutate, put_symlink, split_parent
from chorus_tools.tools.mutate.delete import delete
from chorus_tools.tools.mutate.restore import current, link_target, put_link, real_path
from chorus_tools.tools.patch.diff import unified_diff

_BINARY_SNIFF = 8192


def rewind(ctx: ToolContext, checkpoint: str, items: list[dict[str, Any]] | None = None,
           force: bool = False, dry_run: bool = False) -> dict[str, Any]:
    todo, conflicts = [], []
    states = [(item, _state(ctx, item)) for item in items or []]
    removed = {i["path"] for i, state in states  # what the rewind deletes
               if i["content"] is None and (state == "ours" or state == "conflict" and force)}
    for item, state in states:
        if state in (rewind_shapes.BLOCKED, rewind_shapes.EMPTIED):
            state = "ours" if rewind_shapes.ours(ctx, item["path"], state, removed) \
                else "conflict"
        if state == "done":
            continue
        if state == "conflict" and not force:
            conflicts.append(item["path"])
            continue
        todo.append(item)
    restored = [i["path"] for i in todo if i["content"] is not None]
    deleted = [i["path"] for i in todo if i["content"] is None]
    diff = _diff(ctx, todo)
    if not dry_run:
        _apply(ctx, todo)
    return {"restored": restored, "deleted": deleted, "diff": diff, "conflicts": conflicts}


def _state(ctx: ToolContext, item: dict[str, Any]) -> str:
    """'done' (already as planned: an earlier rewind, or one a crash cut short),
    'ours' (as this server left it), 'conflict', or a file to put back where this server
    left none but something now stands in its way (rewind_shapes)."""
    path = item["path"]
    back = item["content"] is not None and item["expected"] is None
    try:
        rel = real_path(ctx, path)
    except ToolError as err:
        if err.code == "permission_denied":
            raise
        return _link_now(ctx, item)
    st = current(ctx, rel, path)
    if st is None and back and rewind_shapes.blocked(ctx, rel):
        return rewind_shapes.BLOCKED
    if st is not None and stat.S_ISDIR(st.st_mode) and back:
        return rewind_shapes.EMPTIED
    if st is not None and not stat.S_ISREG(st.st_mode):
        return "conflict"
    content = item["content"]
    if content is None and st is None:
        return "done"
    if content is not None and st is not None and not keep.is_link(item["mode"]) and \
            st.st_size == len(content) and \
            hashlib.sha256(_read(ctx, rel)).hexdigest() == item["sha256"]:
        return "done"
    return "ours" if (None if st is None else version_of(st)) == item["expected"] \
        else "conflict"


def _link_now(ctx: ToolContext, item: dict[str, Any]) -> str:
    """A symlink at the path now (or one on its way: a conflict): 'done' when it is the
    link the checkpoint had, 'ours' while it is the very link this server made (an
    archive import keeps what it replaced, tools/bytes/archive_in.py)."""
    path = item["path"]
    st = current(ctx, path, path)
    if st is None or not stat.S_ISLNK(st.st_mode):
        return "conflict"
    if keep.is_link(item["mode"]) and item["content"] == os.fsencode(link_target(ctx, path)):
        return "done"
    return "ours" if version_of(st) == item["expected"] else "conflict"


def _apply(ctx: ToolContext, todo: list[dict[str, Any]]) -> None:
    # each path changed: what it held (a link's text), its mode, and whether that entry
    # itself is kept for the way back (rewind_undo), else its bytes are written again
    done: list[tuple[str, bytes | str | None, int, bool]] = []
    linked: list[str] = []
    changes: list[tuple[str, bytes | str | None, bytes | None]] = []  # for the record
    now = [current(ctx, i["path"], i["path"]) for i in todo]
    planned = sorted(zip(todo, now), key=_growth)
    if todo:  # a full history or the quota refuse it before its first file, not half way
        growth = [_growth(p) for p in planned]
        quota.ahead(ctx, sum(g[0] for g in growth), sum(g[1] for g in growth),
                    todo[0]["path"])
        keep.ahead(ctx, sum(st.st_size for st in now if st is not None),
                   [i["path"] for i in todo], todo[0]["path"])
    try:
        for item, _ in planned:
            path, content = item["path"], item["content"]
            st = current(ctx, path, path)
            if st is not None and stat.S_ISDIR(st.st_mode):  # emptied by the deletions,
                rewind_shapes.clear(ctx, path)  # which come first (_growth); undoing
                st = None  # them makes it again
            before = None if st is None else link_target(ctx, path) \
                if stat.S_ISLNK(st.st_mode) else _read(ctx, path)
            held = st is not None and rewind_undo.keep(ctx, path)
            if held:
                linked.append(path)
            if content is None:
                if st is not None:
                    delete(ctx, path)
            elif keep.is_link(item["mode"]):
                put_link(ctx, path, path, content)
            else:
                if st is not None and stat.S_ISLNK(st.st_mode):  # a file written over
                    delete(ctx, path)  # it would land where the link leads
                mutate(ctx, path, shown=path, compute=lambda _, c=content: c,
                       create_dirs=True, read_current=False, mode=item["mode"])
            done.append((path, before, 0 if st is None else stat.S_IMODE(st.st_mode), held))
            changes.append((path, before, content))
    except ToolError:
        with reserve.paused(ctx):  # all or nothing, even on a full history disk
            for path, before, mode, held in reversed(done):
                _undo(ctx, path, before, mode, held)
        raise
    finally:
        rewind_undo.drop(ctx, linked)
    _audit(ctx, changes)


def _undo(ctx: ToolContext, path: str, before: bytes | str | None, mode: int,
          held: bool) -> None:
    """Put `path` back as it was before the rewind changed it: the very entry when it
    was kept (its version too), else its bytes or link text written again."""
    st = current(ctx, path, path)
    if before is not None and st is not None and stat.S_ISDIR(st.st_mode):
        rewind_shapes.clear(ctx, path)  # made for the files put back beneath it
    if held:
        rewind_undo.put_back(ctx, path)
    elif isinstance(before, str):
        with locked_dir(ctx, split_parent(path)[0], shown=path) as dir_fd:
            put_symlink(dir_fd, split_parent(path)[1], before)
    elif before is None:
        if current(ctx, path, path) is not None:
            delete(ctx, path)
    else:
        mutate(ctx, path, shown=path, compute=lambda _, c=before: c, create_dirs=True,
               read_current=False, mode=mode)


def _audit(ctx: ToolContext, changes: list[tuple[str, bytes | str | None, bytes | None]]
           ) -> None:
    """One record for the call, as apply_patch's (docs/protocol.md, Audit records): every
    path put back in `files` with its hashes and the bytes written (or removed), the total
    in `bytes`; the line's own hashes are null, since a rewind names no file. A symlink
    is hashed by its text, as file.delete does."""
    if ctx.record is None or not ctx.auditing:
        return
    files = []
    for path, before, after in changes:
        was = os.fsencode(before) if isinstance(before, str) else before
        files.append({"path": path, "sha256_before": sha256_hex(was),
                      "sha256_after": sha256_hex(after),
                      "bytes": len(after) if after is not None else len(was or b"")})
    ctx.record.update(sha256_before=None, sha256_after=None,
                      bytes=sum(f["bytes"] for f in files), files=files)


def _growth(planned: tuple[dict[str, Any], os.stat_result | None]) -> tuple[int, int]:
    """What putting one path back adds (bytes, files): the rewind frees room before it
    takes any (docs/protocol.md, Quotas), so one whose end fits the quota passes even when
    its paths' order would pass the quota on the way, and the disk never holds both."""
    item, st = planned
    content = item["content"]
    size = 0 if st is None or not stat.S_ISREG(st.st_mode) else st.st_size
    return ((0 if content is None or keep.is_link(item["mode"]) else len(content)) - size,
            (content is not None) - (st is not None))


def _diff(ctx: ToolContext, todo: list[dict[str, Any]]) -> str:
    """One unified diff of every change, cut at --max-diff-bytes."""
    limit = ctx.limits.max_diff_bytes
    parts: list[str] = []
    size = 0
    for n, item in enumerate(todo):
        path = item["path"]
        st = current(ctx, path, path)
        if st is not None and stat.S_ISDIR(st.st_mode):
            st = None  # a directory the rewind empties and removes: no file there
        now = b"" if st is None else os.fsencode(link_target(ctx, path)) \
            if stat.S_ISLNK(st.st_mode) else _read(ctx, path)  # a link: its text, as git
        then = item["content"] or b""
        if b"\0" in now[:_BINARY_SNIFF] or b"\0" in then[:_BINARY_SNIFF]:
            part = f"Binary files a/{path} and b/{path} differ\n"
        else:
            part = unified_diff(now.decode("utf-8", "replace"), then.decode("utf-8", "replace"),
                                path, created=st is None, limit=limit)
        # a name that is not UTF-8 counts its own bytes (its \udcXX escapes)
        length = len(part.encode("utf-8", "surrogateescape"))
        if size + length > limit:
            parts.append(f"... diff truncated: {len(todo) - n} more files not shown\n")
            break
        parts.append(part)
        size += length
    return "".join(parts)


def _read(ctx: ToolContext, rel: str) -> bytes:
    fd, _ = ctx.ws.open_regular(rel, shown=rel)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
