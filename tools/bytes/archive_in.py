"""archive.import: a tar or tar.gz, uploaded into a spool, extracted into a directory all
or nothing (docs/protocol.md, Bytes in and out: PUT /archive).

An archive is untrusted input. The whole stream is read once, entry by entry, before
anything lands, with tarfile's own reader (its `data` extraction filter is the model of
what to refuse): an absolute name, a name or link target that would leave the directory,
a name beneath a symlink of the archive, a device, FIFO or other special entry, a hard link
to anything but a file earlier in the archive, a reserved name, more than
--max-archive-entries entries or --max-archive-bytes expanded (judged from each header,
before its bytes are read: a tar bomb costs nothing), or a stream that ends early refuse
the whole archive. Each file's bytes are staged beside the spool (beneath the reserved temp
prefix, never listed) while they are read, so memory is a chunk.

Only then does anything land, each file through the one write path (a rename of its staged
copy: history, records, --deny, --read-only), directories made and symlinks placed as the
archive has them. A failure while landing puts back what already landed: created entries
removed, replaced files restored from a hard link kept of each before it was replaced."""

from __future__ import annotations

import gzip
import hashlib
import os
import posixpath
import stat
import tarfile
from dataclasses import dataclass, field
from typing import IO, Any

from chorus_tools.tools.bytes.spool import Spool
from chorus_tools.tools.confine.sandbox import ROOT
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError, from_os_error
from chorus_tools.tools.mutate.atomic import (Current, Spooled, is_temp_name, locked_dir,
                                              mutate, split_parent)
from chorus_tools.tools.mutate.dirs import create as make_dir

_CHUNK = 1 << 20
FILE, DIR, LINK = "file", "dir", "symlink"


@dataclass
class Member:
    """One entry to land: a staged file (`staged`, its size and digest), a directory, or
    a symlink (`target`)."""

    kind: str
    mode: int = 0o644
    staged: str = ""
    size: int = 0
    sha256: str = ""
    target: str = ""


@dataclass
class Plan:
    members: dict[str, Member] = field(default_factory=dict)  # by path inside the dir
    entries: int = 0
    expanded: int = 0


def refused(shown: str, why: str, **details: Any) -> ToolError:
    return ToolError("invalid_params", f"The archive for {shown} was refused, nothing was "
                     f"extracted: {why}", param="archive", path=shown, **details)


def stage(ctx: ToolContext, spool: Spool, shown: str) -> Plan:
    """Read the spooled archive once, validating every entry and staging each file's
    bytes beside the spool; refused() at the first entry that may not land."""
    plan = Plan()
    fd = os.open("data", os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=spool.dir_fd)
    with os.fdopen(fd, "rb") as raw:
        compressed = raw.read(2) == b"\x1f\x8b"
        raw.seek(0)
        # gzip's own reader, not tarfile's: it reads every member of a multi-member
        # stream (archive.read's pieces, pigz), tarfile's stops after the first
        source = gzip.GzipFile(fileobj=raw, mode="rb") if compressed else raw
        try:
            with tarfile.open(fileobj=source, mode="r|") as tar:
                for info in tar:
                    _admit(ctx, spool, plan, tar, info, shown)
        except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
            if isinstance(exc, ToolError):
                raise
            raise refused(shown, f"it is not a whole tar or tar.gz stream ({exc}).") \
                from None
    return plan


def _admit(ctx: ToolContext, spool: Spool, plan: Plan, tar: tarfile.TarFile,
           info: tarfile.TarInfo, shown: str) -> None:
    limits = ctx.limits
    plan.entries += 1
    if plan.entries > limits.max_archive_entries:
        raise refused(shown, f"it has more than {limits.max_archive_entries} entries "
                      "(--max-archive-entries).", limit=limits.max_archive_entries)
    name = _inside(info.name, shown)
    if name is None:
        return  # the directory itself ("./")
    for parent in _parents(name):
        if (above := plan.members.get(parent)) is not None and above.kind != DIR:
            raise refused(shown, f"{info.name!r} lies beneath {parent!r}, which the archive "
                          "makes a symlink or a file.", entry=info.name)
    mode = stat.S_IMODE(info.mode) & 0o777
    if info.isdir():
        plan.members[name] = Member(DIR, mode or 0o755)
    elif info.issym():
        if posixpath.isabs(info.linkname) or _inside(posixpath.join(
                posixpath.dirname(name), info.linkname), shown, strict=False) is None:
            raise refused(shown, f"the symlink {info.name!r} points to {info.linkname!r}, "
                          "outside the directory.", entry=info.name)
        plan.members[name] = Member(LINK, target=info.linkname)
    elif info.islnk():
        source = plan.members.get(_inside(info.linkname, shown) or "")
        if source is None or source.kind != FILE:
            raise refused(shown, f"the hard link {info.name!r} names {info.linkname!r}, "
                          "which is no file earlier in the archive.", entry=info.name)
        plan.members[name] = Member(FILE, mode or source.mode, source.staged, source.size,
                                    source.sha256)
    elif info.isreg():
        plan.expanded += info.size
        if plan.expanded > limits.max_archive_bytes:
            raise refused(shown, f"it expands past {limits.max_archive_bytes} bytes "
                          "(--max-archive-bytes).", limit=limits.max_archive_bytes)
        source = tar.extractfile(info)
        assert source is not None
        staged = f"m{plan.entries}"
        plan.members[name] = Member(FILE, mode or 0o644, staged, info.size,
                                    _copy(source, spool.dir_fd, staged, info.size, shown))
    else:
        raise refused(shown, f"{info.name!r} is a device, FIFO or other special entry.",
                      entry=info.name)


def _inside(name: str, shown: str, strict: bool = True) -> str | None:
    """The entry's path relative to the directory, or None for the directory itself;
    refused (when `strict`, else None) for one that would leave it."""
    if "\0" in name:
        raise refused(shown, f"an entry name holds a NUL byte: {name!r}.")
    if posixpath.isabs(name):
        if strict:
            raise refused(shown, f"{name!r} is an absolute name.", entry=name)
        return None
    clean = posixpath.normpath(name)
    if clean == ".":
        return None if strict else "."
    if clean == ".." or clean.startswith("../"):
        if strict:
            raise refused(shown, f"{name!r} would leave the directory.", entry=name)
        return None
    if strict and any(is_temp_name(part) for part in clean.split("/")):
        raise refused(shown, f"{name!r} uses a name reserved for the runtime "
                      "(.chorus-tmp-).", entry=name)
    return clean


def _parents(name: str) -> list[str]:
    parts = name.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def _copy(source: IO[bytes], dir_fd: int, staged: str, size: int, shown: str) -> str:
    digest = hashlib.sha256()
    fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o666, dir_fd=dir_fd)
    try:
        got = 0
        while chunk := source.read(_CHUNK):
            digest.update(chunk)
            got += len(chunk)
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view):]
        if got != size:
            raise refused(shown, "the stream ends inside an entry (truncated).")
    except OSError as exc:
        raise from_os_error(exc, shown, "write_failed") from None
    finally:
        os.close(fd)
    return digest.hexdigest()


@dataclass
class Landing:
    """What landed so far, to put back if a later entry fails."""

    created: list[str] = field(default_factory=list)
    replaced: list[tuple[str, str]] = field(default_factory=list)  # (path, kept link)
    dirs: list[str] = field(default_factory=list)
    bytes: int = 0


def land(ctx: ToolContext, spool: Spool, plan: Plan, base: str) -> Landing:
    """Every member in place, parents first; on a failure, what landed is put back."""
    done = Landing()
    try:
        for name in sorted(plan.members):
            member = plan.members[name]
            rel = name if base == ROOT else f"{base}/{name}"
            if member.kind == DIR:
                if make_dir(ctx, rel)["created"]:
                    done.dirs.append(rel)
            elif member.kind == LINK:
                _place_link(ctx, rel, member.target, done)
            else:
                _place_file(ctx, spool, rel, member, done)
    except BaseException:
        _undo(ctx, spool, done)
        raise
    return done


def _place_file(ctx: ToolContext, spool: Spool, rel: str, member: Member,
                done: Landing) -> None:
    """The staged bytes renamed into place through the one write path; a replaced file is
    first hard-linked beside the spool, so an undo can put it back. The staged copy
    itself stays (a hard link of the archive may land it again): a fresh link lands."""
    n = len(done.created) + len(done.replaced)
    kept, landing = f"old{n}", f"land{n}"
    try:
        os.link(member.staged, landing, src_dir_fd=spool.dir_fd, dst_dir_fd=spool.dir_fd)
    except OSError as exc:
        raise from_os_error(exc, rel, "write_failed") from None

    def compute(current: Current) -> Spooled:
        if current.stat is not None:
            parent, name = split_parent(current.rel)
            fd = ctx.ws.open_dir(parent)
            try:
                os.link(name, kept, src_dir_fd=fd, dst_dir_fd=spool.dir_fd,
                        follow_symlinks=False)
            except OSError as exc:
                raise from_os_error(exc, rel, "write_failed") from None
            finally:
                os.close(fd)
        return Spooled(spool.dir_fd, landing, member.size, member.sha256)

    out = mutate(ctx, rel, shown=rel, compute=compute, create_dirs=True, read_current=False,
                 mode=member.mode)
    if out.created:
        done.created.append(rel)
    else:
        done.replaced.append((rel, kept))
    done.bytes += member.size


def _place_link(ctx: ToolContext, rel: str, target: str, done: Landing) -> None:
    parent, name = split_parent(rel)
    with locked_dir(ctx, parent, shown=rel, create=True) as dir_fd:
        try:
            os.symlink(target, name, dir_fd=dir_fd)
        except FileExistsError:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if not stat.S_ISLNK(st.st_mode) or os.readlink(name, dir_fd=dir_fd) != target:
                raise ToolError("already_exists", f"{rel} exists and is not the symlink the "
                                "archive holds; nothing was extracted. Remove it first.",
                                path=rel) from None
            return
        except OSError as exc:
            raise from_os_error(exc, rel, "write_failed") from None
    done.created.append(rel)


def _undo(ctx: ToolContext, spool: Spool, done: Landing) -> None:
    """Best effort, newest first: what landed goes, what was replaced comes back."""
    for rel, kept in reversed(done.replaced):
        parent, name = split_parent(rel)
        try:
            with locked_dir(ctx, parent, shown=rel) as dir_fd:
                os.rename(kept, name, src_dir_fd=spool.dir_fd, dst_dir_fd=dir_fd)
        except (OSError, ToolError):
            pass
    for rel in reversed(done.created):
        parent, name = split_parent(rel)
        try:
            with locked_dir(ctx, parent, shown=rel) as dir_fd:
                os.unlink(name, dir_fd=dir_fd)
        except (OSError, ToolError):
            pass
    for rel in reversed(done.dirs):
        parent, name = split_parent(rel)
        try:
            fd = ctx.ws.open_dir(parent)
            try:
                os.rmdir(name, dir_fd=fd)
            finally:
                os.close(fd)
        except (OSError, ToolError):
            pass
