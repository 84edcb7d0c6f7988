"""A whole V4A patch applied all or nothing across its files.

Codex applies a patch file by file and leaves the earlier files changed when a later one
fails. Here:
1. plan: every operation is checked and computed in memory, in order, each on the result
   of the ones before (an update after an add of the same file sees the added text):
   confinement, reserved names, directories and special files, binaries, encodings, the
   write limit, and every hunk's place. Any error: nothing was touched.
2. commit: each file's net change is made with the core's atomic write (a new file and a
   rename, under the directory's lock) or an unlink, refusing a file that changed since
   the plan (conflict). If one fails, those already changed are put back as they were
   (created files and the directories made for them removed, deleted files restored)
   and the error says so.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Any

from chorus_tools.tools.confine.sandbox import ROOT, names_directory, version_of
from chorus_tools.tools.context import ToolContext, sha256_hex
from chorus_tools.tools.dialects.codex_edit import edit
from chorus_tools.tools.dialects.v4a import FileOp, parse
from chorus_tools.tools.errors import ToolError, from_os_error
from chorus_tools.tools.mutate.atomic import (
    Current,
    locked_dir,
    mutate,
    refuse_reserved,
    split_parent,
)
from chorus_tools.tools.read.text import SNIFF_BYTES, binary_mime, decode, encode

_LETTER = {"add": "A", "update": "M", "delete": "D"}


@dataclass
class _File:
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


@dataclass
class Plan:
    ctx: ToolContext
    files: dict[str, _File] = field(default_factory=dict)
    report: list[dict[str, Any]] = field(default_factory=list)

    def entry(self, path: str, line: int) -> _File:
        rel = self.ctx.ws.rel(path, param="input")
        if rel == ROOT or names_directory(path):
            raise ToolError("is_directory", f"Patch line {line} names a directory: {path}. "
                            "Give a file path.", path=path, line=line)
        refuse_reserved(rel.rpartition("/")[2], path, param="input")
        if rel not in self.files:
            self.files[rel] = _load(self.ctx, rel, path)
        return self.files[rel]


def apply_patch(ctx: ToolContext, text: str) -> list[dict[str, Any]]:
    """Apply the V4A patch `text`; one {path, action, version} per operation."""
    plan = Plan(ctx)
    record, ctx.record = ctx.record, None  # the core's writes must not fill it one by one
    committed = False
    try:
        for op in parse(text):
            _plan(plan, op)
        versions = _commit(ctx, plan)
        committed = True
    finally:
        ctx.record = record
        _audit(ctx, plan, committed)
    for item in plan.report:
        item["version"] = versions.get(item.pop("rel"))
    return plan.report


def _plan(plan: Plan, op: FileOp) -> None:
    f = plan.entry(op.path, op.line)
    if op.action == "add":
        _writable(f)
        f.after, f.removed = _encoded(op.content, "utf-8", op), False
        _ready_to_create(plan.ctx, f)
        plan.report.append({"path": f.rel, "action": "add", "rel": f.rel})
        return
    if op.action == "delete" and f.present and not f.removed:
        if not f.checked_link:  # a delete removes a symlink itself: know which it is
            f.link, f.checked_link = _link_of(plan.ctx, f.rel, f.shown, None), True
        f.after, f.removed = None, True
        plan.report.append({"path": f.rel, "action": "delete", "rel": f.rel})
        return
    if f.after is None:
        if f.blocked is not None and not f.removed:
            raise f.blocked
        raise ToolError("file_not_found", f"Failed to {op.action} file {op.path} (patch "
                        f"line {op.line}): it does not exist. Check the path, or use "
                        "'*** Add File:' to create it.", path=op.path, line=op.line)
    mime = binary_mime(f.after[:SNIFF_BYTES])
    if mime is not None:
        raise ToolError("binary_file", f"Binary file ({mime}): {op.path} (patch line "
                        f"{op.line}). apply_patch edits text only.", path=op.path,
                        mime_type=mime, size=len(f.after), line=op.line)
    text, encoding = decode(f.after)
    new = _encoded(edit(text, op.hunks, op.path), encoding, op)
    dest = f if op.move_to is None else plan.entry(op.move_to, op.line)
    if dest is not f:
        _writable(dest)
        f.after, f.removed = None, True
        dest.after, dest.removed, dest.moved_mode = new, False, f.mode
        _ready_to_create(plan.ctx, dest)
    dest.after = new
    plan.report.append({"path": dest.rel, "action": "update", "rel": dest.rel,
                        **({"from": f.rel} if dest is not f else {})})


def _encoded(text: str, encoding: str, op: FileOp) -> bytes:
    try:
        return encode(text, encoding)
    except UnicodeEncodeError as exc:
        raise ToolError("invalid_params", f"The text for {op.path} (patch line {op.line}) "
                        f"holds {text[exc.start:exc.end]!r}, which the file's encoding "
                        f"({encoding}) cannot represent.", param="input", path=op.path,
                        line=op.line, encoding=encoding) from None


def _load(ctx: ToolContext, rel: str, shown: str) -> _File:
    """The entry at `rel` as it is: a regular file (through in-workspace symlinks, as a
    write goes), or nothing. A symlink's own text is looked up only when its target
    cannot be read, or a delete needs it (`_link_of`)."""
    try:
        fd, st = ctx.ws.open_regular(rel, shown=shown)
    except ToolError as err:
        link = _link_of(ctx, rel, shown, err)
        if link is None:
            if err.code != "file_not_found":
                raise
            return _File(rel, shown, None, None, None)
        return _File(rel, shown, None, None, link, present=True, blocked=err)
    try:
        data = b"".join(iter(lambda: os.read(fd, 1 << 20), b""))
    finally:
        os.close(fd)
    return _File(rel, shown, data, stat.S_IMODE(st.st_mode), None, after=data, present=True,
                 checked_link=False)


def _link_of(ctx: ToolContext, rel: str, shown: str, err: ToolError | None) -> str | None:
    """The text of the symlink at `rel`, or None when the entry is no symlink (or is
    missing: then `err`, if given, is what reaching it said)."""
    try:
        st = ctx.ws.lstat(rel, shown=shown)
    except ToolError as missing:
        if err is None or missing.code == "file_not_found":
            return None
        raise
    if not stat.S_ISLNK(st.st_mode):
        return None
    parent, name = split_parent(rel)
    fd = ctx.ws.open_dir(parent, shown=shown)
    try:
        return os.readlink(name, dir_fd=fd)
    finally:
        os.close(fd)


def _writable(f: _File) -> None:
    """A symlink whose target cannot be reached is no place to write (a dangling one
    inside the workspace is: the write creates its target)."""
    if f.blocked is not None and f.blocked.code != "file_not_found" and not f.removed:
        raise f.blocked


def _ready_to_create(ctx: ToolContext, f: _File) -> None:
    """The directories a new file needs, checked now: a file in the way is refused."""
    limit = ctx.limits.max_write_bytes
    if f.after is not None and len(f.after) > limit:
        raise ToolError("file_too_large", f"{f.shown} would be {len(f.after)} bytes, over "
                        f"the {limit}-byte write limit.", path=f.shown, size=len(f.after),
                        limit=limit)
    if f.before is not None or f.missing_dirs:
        return
    parts = f.rel.split("/")[:-1]
    for i in range(1, len(parts) + 1):
        prefix = "/".join(parts[:i])
        try:
            st = ctx.ws.lstat(prefix, shown=f.shown)
        except ToolError as err:
            if err.code != "file_not_found":
                raise
            f.missing_dirs = ["/".join(parts[:j]) for j in range(i, len(parts) + 1)]
            return
        if not stat.S_ISDIR(st.st_mode) and not stat.S_ISLNK(st.st_mode):
            raise ToolError("not_a_directory", f"A parent of {f.shown} is a file, not a "
                            f"directory: {prefix}.", path=f.shown)


def _commit(ctx: ToolContext, plan: Plan) -> dict[str, str | None]:
    """Make every file's net change; on a failure undo those made, then raise."""
    done: list[_File] = []
    versions: dict[str, str | None] = {}
    f = None
    try:
        for f in plan.files.values():
            if f.removed and f.present:
                versions[f.rel] = _remove(ctx, f)
            elif f.after == f.before:
                versions[f.rel] = _version(ctx, f)
                continue
            else:
                versions[f.rel] = _write(ctx, f)
            done.append(f)
    except ToolError as err:
        if f is not None:  # a new file's write may have made its directories first
            _remove_dirs(ctx, f)
        undone = _undo(ctx, done)
        raise ToolError(err.code, f"{err.message} Nothing was changed: "
                        + (f"{', '.join(f.shown for f in done)} had been written and "
                           "were restored." if done else "no file had been written yet."),
                        **err.details, restored=[f.rel for f in done],
                        **({"not_restored": undone} if undone else {})) from None
    return versions


def _version(ctx: ToolContext, f: _File) -> str | None:
    """The version of a file the patch leaves as it is."""
    if f.after is None:
        return None
    fd, st = ctx.ws.open_regular(f.rel, shown=f.shown)
    os.close(fd)
    return version_of(st)


def _write(ctx: ToolContext, f: _File) -> str:
    def compute(current: Current) -> bytes:
        if current.data != f.before:
            raise _changed(f)
        return f.after  # type: ignore[return-value]

    out = mutate(ctx, f.rel, shown=f.shown, compute=compute, create_dirs=True)
    if out.created and f.moved_mode is not None:  # a moved file keeps its permission bits
        _chmod(ctx, f.rel, f.shown, f.moved_mode)
        return _version(ctx, f)  # type: ignore[return-value]
    return version_of(out.stat)  # type: ignore[arg-type]


def _remove(ctx: ToolContext, f: _File) -> None:
    parent, name = split_parent(f.rel)
    with locked_dir(ctx, parent, shown=f.shown) as dir_fd:
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if f.link is None and (not stat.S_ISREG(st.st_mode) or st.st_size != len(
                    f.before or b"")):
                raise _changed(f)
            os.unlink(name, dir_fd=dir_fd)
            os.fsync(dir_fd)
        except OSError as exc:
            raise from_os_error(exc, f.shown, "write_failed") from None


def _undo(ctx: ToolContext, done: list[_File]) -> list[str]:
    """Put every changed file back as it was, newest change first; the paths that could
    not be (each is tried, whatever the others do)."""
    failed = []
    for f in reversed(done):
        try:
            if f.after is None and f.link is not None:
                _restore_link(ctx, f)
            elif f.before is None:
                made = ctx.ws.resolve_symlinks(f.rel, shown=f.shown)
                _remove(ctx, _File(made, f.shown, f.after, None, None, removed=True))
                _remove_dirs(ctx, f)
            else:
                mutate(ctx, f.rel, shown=f.shown, compute=lambda _, f=f: f.before,
                       create_dirs=True)
                _restore_mode(ctx, f)
        except (ToolError, OSError):
            failed.append(f.rel)
    return failed


def _restore_link(ctx: ToolContext, f: _File) -> None:
    parent, name = split_parent(f.rel)
    with locked_dir(ctx, parent, shown=f.shown) as dir_fd:
        os.symlink(f.link, name, dir_fd=dir_fd)  # type: ignore[arg-type]


def _restore_mode(ctx: ToolContext, f: _File) -> None:
    if f.mode is not None and f.link is None:
        _chmod(ctx, f.rel, f.shown, f.mode)


def _chmod(ctx: ToolContext, rel: str, shown: str, mode: int) -> None:
    parent, name = split_parent(rel)
    with locked_dir(ctx, parent, shown=shown) as dir_fd:
        os.chmod(name, mode, dir_fd=dir_fd, follow_symlinks=False)


def _remove_dirs(ctx: ToolContext, f: _File) -> None:
    for rel in reversed(f.missing_dirs):
        parent, name = split_parent(rel)
        try:
            with locked_dir(ctx, parent, shown=f.shown) as dir_fd:
                os.rmdir(name, dir_fd=dir_fd)
        except (ToolError, OSError):
            return


def _changed(f: _File) -> ToolError:
    return ToolError("conflict", f"{f.shown} changed while the patch was being applied. "
                     "Read it again and send the patch anew.", path=f.shown)


def _audit(ctx: ToolContext, plan: Plan, committed: bool) -> None:
    """One record for the call (SPEC §5): the first file's hashes and, in `files`, every
    file's, with the bytes written in total. A failed patch changed nothing."""
    if ctx.record is None or not plan.files:
        return
    files = [{"path": f.rel, "sha256_before": sha256_hex(_was(f)),
              "sha256_after": sha256_hex(f.after if committed else _was(f)),
              "bytes": 0 if not committed else len(f.after) if f.after is not None
              else len(f.before or b"")}  # written, or removed (SPEC §5)
             for f in plan.files.values()]
    first = files[0]
    ctx.record.update(sha256_before=first["sha256_before"],
                      sha256_after=first["sha256_after"],
                      bytes=sum(f["bytes"] for f in files), files=files)


def _was(f: _File) -> bytes | None:
    """What the record hashes as the entry before: a deleted symlink's text (as
    file.delete does), else the file's content."""
    return os.fsencode(f.link) if f.link is not None and f.removed else f.before
