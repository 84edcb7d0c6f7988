"""An archive put in is untrusted input (docs/protocol.md, Bytes in and out): every entry of
a tar or tar.gz is validated, and every file's bytes copied out beside it in the spool
(beneath the reserved temp prefix), BEFORE anything lands in the workspace.

What is refused, modelled on Python's `tarfile` `data` extraction filter, stricter where
it is cheap to be:
- absolute names, any `..` component, empty names, names with the reserved temp prefix;
- an entry reached through a symlink the same archive made (a symlink chain), and a
  symlink whose target is absolute or resolves outside the directory;
- devices, FIFOs and every other special type; a hard link to anything but a regular file
  earlier in the same archive (it is extracted as a copy of that file);
- more than --max-archive-entries entries, more than --max-archive-bytes declared by the
  headers (a tar bomb is refused at its header, before its bytes are read);
- a truncated or corrupt stream, and an entry that changes kind (a file, then a
  directory of the same name).
Modes keep only the owner/group/other read and execute bits and the owner's write bit.
The stream is read once, in order ("r|" mode): memory follows one chunk and the entries'
names, never a file's size.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import posixpath
import tarfile
import zlib
from dataclasses import dataclass, field
from typing import Any

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.mutate.atomic import is_temp_name

_CHUNK = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b"
FILE, DIR, LINK = "file", "dir", "symlink"


@dataclass
class Entry:
    """One entry that will land: `name` relative to the target directory."""

    name: str
    kind: str
    mode: int = 0o644
    spooled: str | None = None  # the file's bytes, by this name in the spool directory
    size: int = 0
    sha256: str = ""
    target: str = ""  # a symlink's text


@dataclass
class Plan:
    entries: dict[str, Entry] = field(default_factory=dict)
    expanded: int = 0


def refused(why: str, name: str, **details: Any) -> ToolError:
    return ToolError("invalid_params", f"The archive was refused whole, nothing was "
                     f"written: entry {name!r} {why}.", param="archive", entry=name,
                     **details)


def read_plan(ctx: ToolContext, spool_fd: int, data: str) -> Plan:
    """Validate the archive in `data` (in directory `spool_fd`), copying each file's bytes
    to its own file there; the plan of what lands, or a ToolError."""
    fd = os.open(data, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=spool_fd)
    with os.fdopen(fd, "rb") as raw:
        gz = raw.read(2) == _GZIP_MAGIC
        raw.seek(0)
        try:  # GzipFile reads every member of a gzip made of several (as ours are)
            source = gzip.GzipFile(fileobj=raw, mode="rb") if gz else raw
            with tarfile.open(fileobj=source, mode="r|") as tar:
                plan = _walk(ctx, tar, spool_fd)
            if isinstance(source, gzip.GzipFile):  # to the trailer, whose CRC tar never reached
                _drain(source, ctx.limits.max_archive_bytes)
            return plan
        except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
            if isinstance(exc, OSError) and exc.errno is not None:
                raise
            raise ToolError("invalid_params", "The archive is truncated or corrupt "
                            f"({type(exc).__name__}: {exc}); nothing was written. Send a "
                            "whole tar or tar.gz.", param="archive") from None


def _drain(source: gzip.GzipFile, limit: int) -> None:
    left = limit
    while chunk := source.read(_CHUNK):
        left -= len(chunk)
        if left < 0:
            raise ToolError("file_too_large", "The archive goes on past its end marker for "
                            f"more than {limit} bytes (--max-archive-bytes); it was refused "
                            "whole, nothing was written.", param="archive", limit=limit)


def _walk(ctx: ToolContext, tar: tarfile.TarFile, spool_fd: int) -> Plan:
    plan, limits = Plan(), ctx.limits
    count = 0
    for member in tar:
        tar.members.clear()  # type: ignore[attr-defined]  # stream mode keeps every header
        count += 1
        if count > limits.max_archive_entries:
            raise ToolError("file_too_large", f"The archive holds more than "
                            f"{limits.max_archive_entries} entries (--max-archive-entries); "
                            "it was refused whole, nothing was written.", param="archive",
                            limit=limits.max_archive_entries)
        name = _name(member.name)
        if name is None:
            continue  # the directory itself ("." or "./")
        _through_link(plan, name)
        entry = _entry(tar, member, name, plan, spool_fd, count)
        if member.isreg():
            plan.expanded += member.size
            if plan.expanded > limits.max_archive_bytes:
                raise ToolError("file_too_large", f"The archive expands to more than "
                                f"{limits.max_archive_bytes} bytes (--max-archive-bytes); it "
                                "was refused whole, nothing was written.", param="archive",
                                limit=limits.max_archive_bytes)
            entry.spooled, entry.size, entry.sha256 = _copy(tar, member, spool_fd, count)
        earlier = plan.entries.get(name)
        if earlier is not None and earlier.kind != entry.kind:
            raise refused(f"is a {entry.kind} after a {earlier.kind} of the same name", name)
        plan.entries[name] = entry
    return plan


def _name(given: str) -> str | None:
    """The entry's name relative to the directory, or a refusal."""
    if given.startswith("/") or posixpath.isabs(given):
        raise refused("has an absolute name", given)
    parts = [p for p in given.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise refused("has a '..' component", given)
    if any(is_temp_name(p) for p in parts):
        raise refused("uses the reserved name prefix '.chorus-tmp-'", given)
    if "\0" in given:
        raise refused("has a NUL byte", given)
    return "/".join(parts) or None


def _through_link(plan: Plan, name: str) -> None:
    parts = name.split("/")
    for i in range(1, len(parts)):
        above = plan.entries.get("/".join(parts[:i]))
        if above is not None and above.kind != DIR:
            raise refused(f"goes through {above.name!r}, a {above.kind} of the archive", name)


def _entry(tar: tarfile.TarFile, member: tarfile.TarInfo, name: str, plan: Plan,
           spool_fd: int, index: int) -> Entry:
    mode = member.mode & 0o755
    if member.isreg():
        return Entry(name, FILE, mode or 0o644)
    if member.isdir():
        return Entry(name, DIR, 0o755)
    if member.issym():
        target = member.linkname
        if target.startswith("/"):
            raise refused("is a symlink with an absolute target", name, target=target)
        where = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
        if where == ".." or where.startswith("../"):
            raise refused("is a symlink whose target leaves the directory", name,
                          target=target)
        return Entry(name, LINK, target=target)
    if member.islnk():
        source = _name(member.linkname)
        earlier = plan.entries.get(source or "")
        if earlier is None or earlier.kind != FILE or earlier.spooled is None:
            raise refused("is a hard link to something other than a file earlier in the "
                          "archive", name, target=member.linkname)
        return Entry(name, FILE, earlier.mode, _copy_spooled(spool_fd, earlier, index),
                     earlier.size, earlier.sha256)
    kind = {tarfile.CHRTYPE: "a character device", tarfile.BLKTYPE: "a block device",
            tarfile.FIFOTYPE: "a FIFO"}.get(member.type, f"of tar type {member.type!r}")
    raise refused(f"is {kind}, which is never extracted", name)


def _copy(tar: tarfile.TarFile, member: tarfile.TarInfo, spool_fd: int,
          index: int) -> tuple[str, int, str]:
    source = tar.extractfile(member)
    assert source is not None
    name, digest, size = f"m{index}", hashlib.sha256(), 0
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600, dir_fd=spool_fd)
    try:
        while chunk := source.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    if size != member.size:
        raise tarfile.ReadError(f"entry {member.name!r} ends early")
    return name, size, digest.hexdigest()


def _copy_spooled(spool_fd: int, earlier: Entry, index: int) -> str:
    name = f"m{index}"
    src = os.open(earlier.spooled or "", os.O_RDONLY | os.O_CLOEXEC, dir_fd=spool_fd)
    dst = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600,
                  dir_fd=spool_fd)
    try:
        while os.copy_file_range(src, dst, _CHUNK):
            pass
    finally:
        os.close(src)
        os.close(dst)
    return name
