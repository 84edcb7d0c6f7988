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
- a truncated or corrupt stream (tools/bytes/tar_read.py says what it reads), a GNU
  sparse file, and an entry that changes kind (a file, then a directory of the same name).
Modes keep only the owner/group/other read and execute bits and the owner's write bit.
The stream is read once, in order, by tools/bytes/tar_read.py: memory follows one chunk
and the entries' names, never a file's size.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
from dataclasses import dataclass, field
from typing import Any

from chorus_tools.tools.bytes import tar_read
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.confine.reserved import is_temp_name

_CHUNK = 1 << 20
# tar pads its end to a whole record (20 blocks, 10 KiB, by default; a larger blocking
# factor makes more): that padding expands nothing, so it is allowed whatever
# --max-archive-bytes says, and only what goes on past it counts against the limit
_PADDING = 1 << 20
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
    try:
        with tar_read.read_ahead(tar_read.chunks(fd)) as chunks:
            reader = tar_read.Reader(chunks)
            plan = _walk(ctx, reader, spool_fd)
            _drain(reader, ctx.limits.max_archive_bytes)  # to a gzip's trailer and CRC
        return plan
    except tar_read.Corrupt as exc:
        raise ToolError("invalid_params", f"The archive is truncated or corrupt ({exc}); "
                        "nothing was written. Send a whole tar or tar.gz.",
                        param="archive") from None
    finally:
        os.close(fd)


def _drain(reader: tar_read.Reader, limit: int) -> None:
    left = limit + _PADDING
    for chunk in reader.rest():
        left -= len(chunk)
        if left < 0:
            raise ToolError("file_too_large", "The archive goes on past its end marker for "
                            f"more than {limit} bytes (--max-archive-bytes); it was refused "
                            "whole, nothing was written.", param="archive",
                            size=limit + _PADDING - left, limit=limit)


def _walk(ctx: ToolContext, reader: tar_read.Reader, spool_fd: int) -> Plan:
    plan, limits = Plan(), ctx.limits
    count = 0
    for member in reader.headers():
        count += 1
        if count > limits.max_archive_entries:
            raise ToolError("file_too_large", f"The archive holds more than "
                            f"{limits.max_archive_entries} entries (--max-archive-entries); "
                            "it was refused whole, nothing was written.", param="archive",
                            size=count, limit=limits.max_archive_entries)
        name = _name(member.name)
        if name is None:
            continue  # the directory itself ("." or "./")
        _through_link(plan, name)
        entry = _entry(member, name, plan, spool_fd, count)
        if member.isreg():
            plan.expanded += member.size
            if plan.expanded > limits.max_archive_bytes:
                raise ToolError("file_too_large", f"The archive expands to more than "
                                f"{limits.max_archive_bytes} bytes (--max-archive-bytes); it "
                                "was refused whole, nothing was written.", param="archive",
                                size=plan.expanded, limit=limits.max_archive_bytes)
            entry.spooled, entry.size, entry.sha256 = _copy(reader, member, entry.mode,
                                                            spool_fd, count)
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


def _entry(member: tar_read.Header, name: str, plan: Plan, spool_fd: int,
           index: int) -> Entry:
    mode = member.mode & 0o755
    if member.isreg():
        return Entry(name, FILE, mode or 0o644)
    if member.type == tar_read.DIR:
        return Entry(name, DIR, 0o755)
    if member.type == tar_read.SYMLINK:
        target = member.linkname
        if not target or "\0" in target:  # no link can be made of it (ENOENT, ValueError)
            raise refused("is a symlink with an empty target" if not target else
                          "is a symlink whose target has a NUL byte", name, target=target)
        if target.startswith("/"):
            raise refused("is a symlink with an absolute target", name, target=target)
        where = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
        if where == ".." or where.startswith("../"):
            raise refused("is a symlink whose target leaves the directory", name,
                          target=target)
        return Entry(name, LINK, target=target)
    if member.type == tar_read.HARDLINK:
        source = _name(member.linkname)
        earlier = plan.entries.get(source or "")
        if earlier is None or earlier.kind != FILE or earlier.spooled is None:
            raise refused("is a hard link to something other than a file earlier in the "
                          "archive", name, target=member.linkname)
        return Entry(name, FILE, earlier.mode, _copy_spooled(spool_fd, earlier, index),
                     earlier.size, earlier.sha256)
    kind = {b"3": "a character device", b"4": "a block device", b"6": "a FIFO",
            tar_read.SPARSE: "a sparse file"}.get(member.type, f"of tar type {member.type!r}")
    raise refused(f"is {kind}, which is never extracted", name)


def _copy(reader: tar_read.Reader, member: tar_read.Header, mode: int, spool_fd: int,
          index: int) -> tuple[str, int, str]:
    """The entry's bytes into spool file `m{index}`, created with its final mode (a new
    file lands by a rename, as it is); its name, size and SHA-256."""
    name, digest = f"m{index}", hashlib.sha256()
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600, dir_fd=spool_fd)
    try:
        os.fchmod(fd, mode)
        for piece in reader.data(member.size):
            digest.update(piece)
            while piece:
                piece = piece[os.write(fd, piece):]
    finally:
        os.close(fd)
    return name, member.size, digest.hexdigest()


def _copy_spooled(spool_fd: int, earlier: Entry, index: int) -> str:
    name = f"m{index}"
    src = os.open(earlier.spooled or "", os.O_RDONLY | os.O_CLOEXEC, dir_fd=spool_fd)
    dst = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600,
                  dir_fd=spool_fd)
    try:
        os.fchmod(dst, earlier.mode)
        while os.copy_file_range(src, dst, _CHUNK):
            pass
    finally:
        os.close(src)
        os.close(dst)
    return name
