"""A whole V4A patch applied all or nothing across its files.

Codex applies a patch file by file and leaves the earlier files changed when a later one
fails. Here:
1. plan (this module): every operation is checked and computed in memory, in order, each
   on the result of the ones before (an update after an add of the same file sees the
   added text): confinement, reserved names, directories and special files, binaries,
   encodings, the write limit, and every hunk's place. Any error: nothing was touched.
2. commit (codex_commit.py): each file's net change, undone on a failure.
One audit record covers the call (docs/protocol.md, Audit records), with every file in `files`.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Any

from chorus_tools.tools.confine.sandbox import ROOT, names_directory
from chorus_tools.tools.context import ToolContext, sha256_hex
from chorus_tools.tools.dialects.codex_commit import PlannedFile, commit
from chorus_tools.tools.dialects.codex_edit import edit
from chorus_tools.tools.dialects.v4a import FileOp, parse
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.patch.diagnostics import Judge, refuse_introduced
from chorus_tools.tools.mutate.restore import link_target
from chorus_tools.tools.read.reencode import encode_edit
from chorus_tools.tools.read.text import SNIFF_BYTES, binary_mime, decode


@dataclass
class Plan:
    ctx: ToolContext
    files: dict[str, PlannedFile] = field(default_factory=dict)
    report: list[dict[str, Any]] = field(default_factory=list)
    judges: dict[str, Judge] = field(default_factory=dict)  # by path: each text parsed once

    def judge(self, f: PlannedFile, text: str) -> Judge:
        if f.rel not in self.judges:
            self.judges[f.rel] = Judge.of(self.ctx, f.rel, text, shown=f.shown)
        return self.judges[f.rel]

    def entry(self, path: str, line: int) -> PlannedFile:
        rel = self.ctx.ws.rel(path, param="input")
        if rel == ROOT or names_directory(path):
            raise ToolError("is_directory", f"Patch line {line} names a directory: {path}. "
                            "Give a file path.", path=path, line=line)
        if rel not in self.files:
            self.files[rel] = _load(self.ctx, rel, path)
        return self.files[rel]


def apply_patch(ctx: ToolContext, text: str) -> list[dict[str, Any]]:
    """Apply the V4A patch `text`; one {path, action, version} per operation."""
    plan = Plan(ctx)
    # the core's writes must not fill the audit hashes one by one, but do hand back what
    # they replace for the history (found missing: a patch's changes could not be undone)
    auditing, ctx.auditing = ctx.auditing, False
    committed = False
    try:
        for op in parse(text):
            _plan(plan, op)
        _diagnose(plan)
        versions = commit(ctx, list(plan.files.values()))
        committed = True
    finally:
        ctx.auditing = auditing
        _audit(ctx, plan, committed)
    for item in plan.report:
        item["version"] = versions.get(item["path"])
    return plan.report


def _plan(plan: Plan, op: FileOp) -> None:
    f = plan.entry(op.path, op.line)
    if op.action == "add":
        _writable(f)
        f.after, f.removed = _encoded(op.content, "utf-8", op), False
        _ready_to_create(plan.ctx, f)
        plan.report.append({"path": f.rel, "action": "add"})
        return
    if op.action == "delete" and f.present and not f.removed:
        if not f.checked_link:  # a delete removes a symlink itself: know which it is
            f.link, f.checked_link = _link_of(plan.ctx, f.rel, f.shown, None), True
        f.after, f.removed = None, True
        plan.report.append({"path": f.rel, "action": "delete"})
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
    new = _encoded(edit(text, op.hunks, op.path, plan.judge(f, text)), encoding, op, text,
                   f.after)
    dest = f if op.move_to is None else plan.entry(op.move_to, op.line)
    if dest is not f:
        _writable(dest)
        f.after, f.removed = None, True
        dest.after, dest.removed, dest.moved_mode = new, False, f.mode
        _ready_to_create(plan.ctx, dest)
    dest.after = new
    plan.report.append({"path": dest.rel, "action": "update",
                        **({"from": f.rel} if dest is not f else {})})


def _diagnose(plan: Plan) -> None:
    """Each written file's diagnostics (docs/protocol.md, Diagnostics) on the report's
    entries for it, its change judged from the file as it was (a moved file's from its
    source) and the other modules as the whole patch leaves them; under --syntax-gate
    all, edit_breaks_syntax for one that brought an error."""
    found: dict[str, dict[str, Any] | None] = {}
    pending = {f.rel: None if f.removed else f.after for f in plan.files.values()
               if f.removed or f.after != f.before}
    for item in plan.report:
        f = plan.files[item["path"]]
        if f.after is None or f.removed:
            continue
        if f.rel not in found:
            source = plan.files[item.get("from", f.rel)]
            before = None if source.before is None else decode(source.before)[0]
            after = decode(f.after)[0]
            judge = plan.judge(f, after)
            judge.sees(pending)
            diagnosis = judge.diagnosis(before, after)
            refuse_introduced(judge, diagnosis, f.shown)
            found[f.rel] = None if diagnosis is None else diagnosis.reply()
        if found[f.rel] is not None:
            item["diagnostics"] = found[f.rel]


def _encoded(text: str, encoding: str, op: FileOp, before: str = "",
             original: bytes | None = None) -> bytes:
    """`text` in the file's encoding; an edit of `before` (`original`'s text) keeps every
    byte it did not change, as file.patch does for a legacy encoding."""
    try:
        return encode_edit(text, encoding, before, original)
    except UnicodeEncodeError as exc:
        raise ToolError("invalid_params", f"The text for {op.path} (patch line {op.line}) "
                        f"holds {text[exc.start:exc.end]!r}, which the file's encoding "
                        f"({encoding}) cannot represent.", param="input", path=op.path,
                        line=op.line, encoding=encoding) from None


def _load(ctx: ToolContext, rel: str, shown: str) -> PlannedFile:
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
            return PlannedFile(rel, shown, None, None, None)
        return PlannedFile(rel, shown, None, None, link, present=True, blocked=err)
    try:
        data = b"".join(iter(lambda: os.read(fd, 1 << 20), b""))
    finally:
        os.close(fd)
    return PlannedFile(rel, shown, data, stat.S_IMODE(st.st_mode), None, after=data, present=True,
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
    return link_target(ctx, rel, shown)


def _writable(f: PlannedFile) -> None:
    """A symlink whose target cannot be reached is no place to write (a dangling one
    inside the workspace is: the write creates its target)."""
    if f.blocked is not None and f.blocked.code != "file_not_found" and not f.removed:
        raise f.blocked


def _ready_to_create(ctx: ToolContext, f: PlannedFile) -> None:
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


def _audit(ctx: ToolContext, plan: Plan, committed: bool) -> None:
    """One record for the call (docs/protocol.md, Audit records): the first file's hashes
    and, in `files`, every file's, with the bytes written in total. A failed patch changed
    nothing."""
    if ctx.record is None or not plan.files:
        return
    files = [{"path": f.rel, "sha256_before": sha256_hex(_was(f)),
              "sha256_after": sha256_hex(f.after if committed else _was(f)),
              "bytes": 0 if not committed else len(f.after) if f.after is not None
              else len(f.before or b"")}  # written, or removed (docs/protocol.md, Audit records)
             for f in plan.files.values()]
    first = files[0]
    ctx.record.update(sha256_before=first["sha256_before"],
                      sha256_after=first["sha256_after"],
                      bytes=sum(f["bytes"] for f in files), files=files)


def _was(f: PlannedFile) -> bytes | None:
    """What the record hashes as the entry before: a deleted symlink's text (as
    file.delete does), else the file's content."""
    return os.fsencode(f.link) if f.link is not None and f.removed else f.before
