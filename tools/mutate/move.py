"""file.move: rename a file, symlink or directory inside the workspace with one renameat2.

Both ends are reached through directory descriptors opened beneath the pinned root
(docs/protocol.md, Paths), so the kernel moves an entry from one confined directory to
another; the last component of each end is never followed (a symlink is moved, or replaced,
itself, as `mv` does). Without `overwrite`, RENAME_NOREPLACE makes "is the destination
free?" and the move one step, with no window for another writer. Both directories are held
under their locks (tools.atomic, taken in inode order so two moves never wait on each
other), so a move never interleaves with a write, patch or delete in either.

Decisions of our own where the contract is silent: a move onto itself (the same path after `.`/`..`
handling, or the same file by another name: through a symlink, or a hard link) is
`invalid_params`, as `mv a a` is an error: it is a mistake in the call, and a success
would hide it (rename(2) does nothing there); the root can be neither moved nor replaced
(`invalid_params`).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import stat
from contextlib import ExitStack
from typing import Any

from chorus_tools.tools.mutate.atomic import open_parent, read_entry, split_parent, unmake
from chorus_tools.tools.context import ToolContext, note_hashes
from chorus_tools.tools.mutate import keep
from chorus_tools.tools.mutate.quota import charge
from chorus_tools.tools.confine.deny import denied
from chorus_tools.tools.errors import ToolError, from_os_error
from chorus_tools.tools.confine.policy import denied_beneath, refuse_denied_entry
from chorus_tools.tools.confine.sandbox import ROOT, check_regular, names_directory, version_of

_RENAME_NOREPLACE = 1
_libc = ctypes.CDLL(None, use_errno=True)


def renameat2(src_fd: int, src: str, dst_fd: int, dst: str, flags: int) -> None:
    """The renameat2(2) system call (glibc 2.28+), raising OSError like os.rename."""
    if _libc.renameat2(src_fd, os.fsencode(src), dst_fd, os.fsencode(dst), flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), src)


def move(ctx: ToolContext, source: str, destination: str, overwrite: bool = False,
         create_dirs: bool = True) -> dict[str, Any]:
    """Move `source` to `destination` (the new path itself, never "into" it)."""
    src = _endpoint(ctx, source, "source")
    dst = _endpoint(ctx, destination, "destination")
    if src == dst:
        raise ToolError("invalid_params", f"Source and destination are the same path: "
                        f"{source}. Give a different destination.", param="destination")
    made: list[str] = []  # the destination's parents made for it: gone again if it fails
    try:
        return _move(ctx, src, dst, source, destination, overwrite, create_dirs, made)
    except ToolError:  # refused (a quota reached half-way up the parents) or failed
        unmake(ctx, made)
        raise


def _move(ctx: ToolContext, src: str, dst: str, source: str, destination: str,
          overwrite: bool, create_dirs: bool, made: list[str]) -> dict[str, Any]:
    src_parent, src_name = split_parent(src)
    dst_parent, dst_name = split_parent(dst)
    with ExitStack() as stack:
        src_fd = _enter(stack, _source_parent(ctx, src_parent, source))
        _check_source(ctx, src_fd, src_name, src, source, dst, destination)
        dst_fd = _enter(stack, open_parent(ctx, dst_parent, destination, create_dirs, made))
        _lock_both(src_fd, dst_fd)
        # the history's names for both ends: their real paths (tools/mutate/keep.py)
        real_src = ctx.ws.real_entry(src_fd, src_name, src)
        real_dst = ctx.ws.real_entry(dst_fd, dst_name, dst)
        refuse_denied_entry(ctx, src_fd, src_name, src, source)
        refuse_denied_entry(ctx, dst_fd, dst_name, dst, destination)
        st = _source_stat(src_fd, src_name, source)
        _refuse_same_file(st, dst_fd, dst_name, source, destination)
        _note_audit(ctx, src_fd, src_name, st, source)
        moved, replaced = _keep(ctx, src_fd, src_name, st, src, source, dst_fd, dst_name,
                                dst, destination)
        gone = _replaced(ctx, dst_fd, dst_name) if overwrite else None
        try:
            renameat2(src_fd, src_name, dst_fd, dst_name,
                      0 if overwrite else _RENAME_NOREPLACE)
            os.fsync(dst_fd)
            if src_parent != dst_parent:
                os.fsync(src_fd)
            after = os.stat(dst_name, dir_fd=dst_fd, follow_symlinks=False)
        except OSError as exc:
            raise _move_error(exc, source, destination, overwrite) from None
    version = version_of(after)
    for snap, was in moved:  # every file left its old path for a new one
        new = real_dst + snap.path[len(real_src):]
        keep.commit(ctx, snap, None, moved_to=new)
        if was is not None:
            keep.commit(ctx, keep.absent(new), was)
    keep.commit(ctx, replaced, version)
    if gone is not None:  # the entry replaced left the quota's account
        charge(ctx, -gone.st_size if stat.S_ISREG(gone.st_mode) else 0, -1, destination)
    return {"success": True, "version": version}


def _replaced(ctx: ToolContext, dst_fd: int, dst_name: str) -> os.stat_result | None:
    """What a move with overwrite would replace, looked at only under a quota."""
    if ctx.room is None:
        return None
    try:
        return os.stat(dst_name, dir_fd=dst_fd, follow_symlinks=False)
    except OSError:
        return None


def _keep(ctx: ToolContext, src_fd: int, src_name: str, st: os.stat_result, src: str,
          source: str, dst_fd: int, dst_name: str, dst: str, destination: str
          ) -> tuple[list[tuple[keep.Snapshot, str | None]], keep.Snapshot | None]:
    """The history of a move: the files it takes from their paths (each with its
    version, for a tree), and what it replaces at the destination (for a file)."""
    if not keep.keeping(ctx):
        return [], None
    if stat.S_ISDIR(st.st_mode):
        fd = os.open(src_name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                     dir_fd=src_fd)
        try:
            return keep.snapshot_tree(ctx, fd, src, source), None
        finally:
            os.close(fd)
    snap = keep.snapshot(ctx, src_fd, src_name, st, src, source)
    try:
        dst_st: os.stat_result | None = os.stat(dst_name, dir_fd=dst_fd,
                                                follow_symlinks=False)
    except FileNotFoundError:
        dst_st = None
    except OSError as exc:  # a name too long: what the move itself would be refused for
        raise from_os_error(exc, destination) from None
    return ([(snap, None)] if snap is not None else []), keep.snapshot(
        ctx, dst_fd, dst_name, dst_st, dst, destination)


def _endpoint(ctx: ToolContext, path: str, param: str) -> str:
    rel = ctx.ws.rel(path, param=param)
    if rel == ROOT:
        raise ToolError("invalid_params", f"'{param}' is the workspace root: {path}. The "
                        "root can be neither moved nor replaced; name an entry inside it.",
                        param=param, path=path)
    return rel


def _source_parent(ctx: ToolContext, parent: str, source: str) -> int:
    try:
        return open_parent(ctx, parent, source, False)
    except ToolError as err:
        if err.code != "file_not_found":
            raise
        raise _no_source(source) from None


def _no_source(source: str) -> ToolError:
    return ToolError("file_not_found", f"Source not found: {source}. Check the path with "
                     "file.list.", path=source, param="source")


def _check_source(ctx: ToolContext, src_fd: int, src_name: str, src: str, source: str,
                  dst: str, destination: str) -> None:
    """What can be refused before anything is created (the destination's parents)."""
    st = _source_stat(src_fd, src_name, source)
    is_dir = stat.S_ISDIR(st.st_mode)
    if not (is_dir or stat.S_ISLNK(st.st_mode)):
        # a FIFO, socket or device: the workers may not make one (tools/confine/workers.py),
        # and a rename makes it anew where it lands, so it stays, said the same on any kernel
        check_regular(st, source)
    if dst.startswith(src + "/"):
        if is_dir:
            raise _into_itself(source, destination)
        raise ToolError("not_a_directory", f"A parent of the destination is the file "
                        f"{source}: {destination}.", path=destination)
    if (names_directory(source) or names_directory(destination)) and not is_dir:
        raise ToolError("not_a_directory", f"Not a directory: {source}. A path ending "
                        "with '/' names a directory; drop the '/' to move a file.",
                        path=source)
    if is_dir:
        _refuse_denied_inside(ctx, src_fd, src_name, src, source)


def _enter(stack: ExitStack, fd: int) -> int:
    stack.callback(os.close, fd)  # closing the last descriptor releases its lock
    return fd


def _lock_both(a: int, b: int) -> None:
    """Lock both directories (once if they are one), in inode order."""
    keys = {}
    for fd in (a, b):
        st = os.fstat(fd)
        keys.setdefault((st.st_dev, st.st_ino), fd)
    for _, fd in sorted(keys.items()):
        fcntl.flock(fd, fcntl.LOCK_EX)


def _source_stat(dir_fd: int, name: str, shown: str) -> os.stat_result:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        raise _no_source(shown) from None
    except OSError as exc:
        raise from_os_error(exc, shown) from None


def _refuse_denied_inside(ctx: ToolContext, dir_fd: int, name: str, rel: str,
                          shown: str) -> None:
    """A directory holding a --deny'd path stays where it is: moved, its content could
    come out from under the rule."""
    if not ctx.ws.deny:
        return
    try:
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                     dir_fd=dir_fd)
    except OSError as exc:
        raise from_os_error(exc, shown, "write_failed") from None
    try:
        inside = denied_beneath(ctx, fd, rel)
    finally:
        os.close(fd)
    if inside is not None:
        raise denied(f"{shown} (it holds {inside})")


def _note_audit(ctx: ToolContext, dir_fd: int, name: str, st: os.stat_result,
                shown: str) -> None:
    """What the record hashes: a file's content, a symlink's text, nothing for a tree;
    the same before and after, since a move changes where, not what."""
    if ctx.record is None or not ctx.auditing:
        return
    if stat.S_ISREG(st.st_mode):
        data: bytes | None = read_entry(dir_fd, name, st, shown)
    elif stat.S_ISLNK(st.st_mode):
        data = os.fsencode(os.readlink(name, dir_fd=dir_fd))
    else:
        data = None
    note_hashes(ctx, before=data, after=data, before_known=True, after_known=True,
                nbytes=0 if data is None else len(data))


def _refuse_same_file(st: os.stat_result, dst_fd: int, dst_name: str, source: str,
                      destination: str) -> None:
    """A move onto itself by another name (a path through a symlinked directory, or a
    hard link of the same file): rename(2) does nothing and succeeds, so the call would
    report a move that left the source where it was."""
    try:
        there = os.stat(dst_name, dir_fd=dst_fd, follow_symlinks=False)
    except OSError:
        return  # nothing there, or what the move itself will be refused for
    if (there.st_dev, there.st_ino) == (st.st_dev, st.st_ino):
        raise ToolError("invalid_params", f"Source and destination are the same file: "
                        f"{source} and {destination} (a path through a symlink, or two "
                        "hard links of one file). Give a different destination.",
                        param="destination", path=destination)


def _into_itself(source: str, destination: str) -> ToolError:
    return ToolError("invalid_params", f"Cannot move a directory into itself: {source} "
                     f"-> {destination}. Choose a destination outside {source}.",
                     param="destination", path=destination)


def _move_error(exc: OSError, source: str, destination: str, overwrite: bool) -> ToolError:
    err = exc.errno
    if err == errno.EEXIST and not overwrite:
        return ToolError("already_exists", f"Destination already exists: {destination}. "
                         "Pass overwrite: true to replace it, or choose another name.",
                         path=destination)
    if err in (errno.ENOTEMPTY, errno.EEXIST):
        return ToolError("already_exists", f"Destination is a directory that is not "
                         f"empty: {destination}. Delete it first (dir.delete) or choose "
                         "another name.", path=destination)
    if err == errno.EINVAL:
        return _into_itself(source, destination)
    if err == errno.EISDIR:
        return ToolError("is_directory", f"Destination is a directory: {destination}; a "
                         "file cannot replace it.", path=destination)
    if err == errno.ENOTDIR:
        return ToolError("not_a_directory", f"Destination is not a directory: "
                         f"{destination}; a directory cannot replace a file.",
                         path=destination)
    if err == errno.EXDEV:
        return ToolError("write_failed", f"Cannot move {source} to {destination}: they "
                         "are on different file systems (mount points).", path=source)
    return from_os_error(exc, source, "write_failed")
