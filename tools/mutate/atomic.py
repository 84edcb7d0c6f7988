"""The one way a file changes: under the directory's lock, through a new file and a rename.

Every mutating tool goes through `mutate` (or `locked_dir` for a plain unlink), so that:
- mutations of files in one directory are serialized across all worker processes by an
  exclusive `flock` on the directory's descriptor (a read-modify-write never loses an
  update); reads never take it;
- new content is written to a hidden temporary file beside the target, fsynced, renamed
  over the target and the directory fsynced: a crash leaves the old content or the new,
  and another hard link to the old inode keeps the old content (the many landings of
  one archive import are synced once, together, by `sync_all`);
- a temporary file left by a killed process is removed by the next mutation in its
  directory (safe: its writer would hold the lock we now hold): tools/mutate/temp_names.py.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import functools
import os
import secrets
import stat
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator

from chorus_tools.tools.context import ToolContext, note_hashes
from chorus_tools.tools.mutate import keep
from chorus_tools.tools.mutate.quota import charge
from chorus_tools.tools.confine.policy import refuse_denied_entry
from chorus_tools.tools.confine.reserved import TEMP_PREFIX, is_temp_name, refuse_reserved
from chorus_tools.tools.mutate.temp_names import remove_stale
from chorus_tools.tools.errors import ToolError, from_os_error
from chorus_tools.tools.confine.sandbox import (ROOT, check_regular, names_directory, open_same,
                                                version_of)

_NEW_FILE_MODE = 0o666  # the kernel applies the umask (and any default ACL)
_RACE_RETRIES = 8
_READ_CHUNK = 1 << 20
FREE_LATER = 64 << 20  # a file this large replaced by a landing is freed off the call's path


ReadCurrent = bool | Callable[[os.stat_result], bool]


@dataclass
class Current:
    """What is at the target now. `data` is None when no file exists (or, with
    read_current=False, when it was not read: then `stat` tells whether a file exists)."""

    rel: str
    data: bytes | None
    stat: os.stat_result | None


@dataclass(frozen=True)
class Spooled:
    """New content already on the workspace's disk: `name` in directory `dir_fd` (an
    upload's spool beneath the reserved temp prefix), `size` bytes whose SHA-256 is
    `sha256`. It lands by a rename, never read into memory."""

    dir_fd: int
    name: str
    size: int
    sha256: str
    # its bytes already count against the quota (an upload's parts were charged as they
    # arrived); False for a file an archive import extracted (tools/bytes/archive_in.py)
    counted: bool = True
    # synced to disk with its directory as it lands; False for a landing among many that
    # the caller makes durable at once with `sync_all` before it answers (an archive
    # import: all or nothing, its journal covers a crash before that)
    sync: bool = True


@dataclass
class Outcome:
    """What mutate did. `stat` is the file after the call (None only when no file existed
    and compute left it so)."""

    created: bool
    written: bool
    stat: os.stat_result | None
    before: bytes | None
    after: bytes | None


def split_parent(rel: str) -> tuple[str, str]:
    """('dir', 'name') of a workspace-relative path; the root's parent is '.'."""
    parent, _, name = rel.rpartition("/")
    return parent or ROOT, name


def mutate(ctx: ToolContext, rel: str, *, shown: str,
           compute: Callable[[Current], bytes | Spooled | None], create_dirs: bool = False,
           expected_version: str | None = None, read_current: ReadCurrent = True,
           mode: int | None = None, known: tuple[str, str] | None = None) -> Outcome:
    """Replace the file at `rel` with compute(current), atomically and serialized.

    `rel` is a normalised workspace path (ctx.ws.rel); `shown` is the client's path for
    messages. compute may raise ToolError (nothing is written) or return None to leave
    the file as it is, or Spooled content to move into place whole. Bytes equal to the
    current content are not written. `mode` sets
    the permission bits (a restore); otherwise an existing file keeps its own.
    `read_current` says whether compute needs the current content (or, as a function of
    the file's stat, whether it does for that file). `known` is (version, SHA-256) of
    content the caller knows the file held (one it landed itself): while the file is
    still at that version, the history and the record take that digest instead of
    reading the file again to hash it (a 1 GiB upload replacing one: 0.6 s)."""
    if names_directory(shown):
        raise ToolError("is_directory", f"The path ends with '/' (or '/.', '/..'), so it "
                        f"names a directory: {shown}. Give a file path without it.",
                        path=shown)
    made: list[str] = []  # directories create_dirs made: gone again if the write fails
    try:
        return _mutate(ctx, rel, made, shown=shown, compute=compute, create_dirs=create_dirs,
                       expected_version=expected_version, read_current=read_current,
                       mode=mode, known=known)
    except ToolError:
        unmake(ctx, made)
        raise


def _mutate(ctx: ToolContext, rel: str, made: list[str], *, shown: str,
            compute: Callable[[Current], bytes | Spooled | None], create_dirs: bool,
            expected_version: str | None, read_current: ReadCurrent,
            mode: int | None, known: tuple[str, str] | None) -> Outcome:
    target = rel  # most paths are no symlink: resolve only when the entry turns out one
    for _ in range(_RACE_RETRIES):
        if is_temp_name(target.rpartition("/")[2]):
            target = ctx.ws.resolve_symlinks(target, shown=shown)  # a link may bear it
        if target == ROOT:
            raise _is_directory(shown)
        parent, name = split_parent(target)
        for part in (*parent.split("/"), name):  # nor into one: an upload's spool is one
            refuse_reserved(part, shown)
        with locked_dir(ctx, parent, shown=shown, create=create_dirs, made=made) as dir_fd:
            refuse_denied_entry(ctx, dir_fd, name, target, shown)
            st = _lstat(dir_fd, name, shown)
            if st is None or not stat.S_ISLNK(st.st_mode):
                if st is not None:
                    check_regular(st, shown)
                return _mutate_locked(ctx, dir_fd, name, target, st, shown=shown,
                                      compute=compute, expected_version=expected_version,
                                      read_current=read_current, mode=mode, known=known)
        target = ctx.ws.resolve_symlinks(rel, shown=shown)  # write to what the link names
    raise ToolError("write_failed", f"The path kept changing while writing: {shown}. "
                    "Retry when nothing else is replacing it.", path=shown)


def mutate_held(ctx: ToolContext, dir_fd: int, rel: str, *, shown: str,
                compute: Callable[[Current], bytes | Spooled | None]) -> Outcome:
    """`mutate` of a file in directory `dir_fd`, which the caller holds by `locked_dir`
    (and made: no create_dirs): an archive import lands each directory's files under one
    open, one lock and one sweep of stale temp files, not one per file. A symlink found
    at the name is never written through: write_failed, nothing written."""
    name = split_parent(rel)[1]
    st = _lstat(dir_fd, name, shown)
    if st is not None and stat.S_ISLNK(st.st_mode):
        raise ToolError("write_failed", f"{shown} became a symlink while it was being "
                        "written; nothing was written through it.", path=shown)
    if st is not None:
        check_regular(st, shown)
    return _mutate_locked(ctx, dir_fd, name, rel, st, shown=shown, compute=compute,
                          expected_version=None, read_current=False, mode=None)


def _mutate_locked(ctx: ToolContext, dir_fd: int, name: str, target: str,
                   st: os.stat_result | None, *, shown: str,
                   compute: Callable[[Current], bytes | Spooled | None],
                   expected_version: str | None, read_current: ReadCurrent,
                   mode: int | None, known: tuple[str, str] | None = None) -> Outcome:
    auditing = ctx.record is not None and ctx.auditing
    keeping = keep.keeping(ctx)  # the history streams what a write replaces, never holds it
    before = None
    wanted = read_current(st) if callable(read_current) and st is not None else read_current
    digest = known[1] if known and st is not None and version_of(st) == known[0] else None
    if st is not None and (wanted or (auditing and not keeping and digest is None)):
        before = read_entry(dir_fd, name, st, shown)
    snap = keep.snapshot(ctx, dir_fd, name, st, target, shown, before,
                         digest) if keeping else None
    if auditing and not keep.note_before(ctx, snap):
        # until a write succeeds the file is as it was, whatever fails next
        note_hashes(ctx, before=before, after=before, before_known=True, after_known=True,
                    before_sha256=digest, after_sha256=digest)
    if expected_version is not None:
        current_version = None if st is None else version_of(st)
        if current_version != expected_version:
            raise conflict_error(shown, expected_version, current_version)
    new = compute(Current(rel=target, data=before, stat=st))
    if isinstance(new, Spooled):
        _charge_file(ctx, st, 0 if new.counted else new.size, shown)
        after_st = _land(dir_fd, name, st, new, shown)
        keep.commit(ctx, snap, version_of(after_st))
        note_hashes(ctx, after_sha256=new.sha256, nbytes=new.size)
        return Outcome(created=st is None, written=True, stat=after_st, before=before,
                       after=None)
    if new is None or (st is not None and (mode is None or stat.S_IMODE(st.st_mode) == mode)
                       and _same(dir_fd, name, st, before, new, shown)):
        kept = before if new is None else new
        if auditing and (kept is not None or snap is None):
            note_hashes(ctx, after=kept, after_known=True,
                        nbytes=0 if kept is None else len(kept))
        return Outcome(created=False, written=False, stat=st, before=before, after=kept)
    _charge_file(ctx, st, len(new), shown)
    after_st = _replace(dir_fd, name, st, new, shown, mode)
    keep.commit(ctx, snap, version_of(after_st))
    if auditing:
        note_hashes(ctx, after=new, after_known=True, nbytes=len(new))
    return Outcome(created=st is None, written=True, stat=after_st, before=before, after=new)


def _charge_file(ctx: ToolContext, st: os.stat_result | None, size: int,
                 shown: str) -> None:
    """The quota's check of a file about to land over `st` (None: a new file)."""
    if ctx.room is not None:
        charge(ctx, size - (0 if st is None else st.st_size), st is None, shown)


@contextmanager
def locked_dir(ctx: ToolContext, parent: str, *, shown: str, create: bool = False,
               made: list[str] | None = None) -> Iterator[int]:
    """A readable descriptor of directory `parent`, held under its exclusive lock, with
    stale temporary files already removed. `create` makes missing directories (named in
    `made`)."""
    dir_fd = open_parent(ctx, parent, shown, create, made)
    try:
        fcntl.flock(dir_fd, fcntl.LOCK_EX)
        remove_stale(dir_fd)
        yield dir_fd
    finally:
        os.close(dir_fd)  # closing the last descriptor releases the lock


def open_parent(ctx: ToolContext, parent: str, shown: str, create: bool,
                made: list[str] | None = None, *, sync: bool = True) -> int:
    """Open the directory, creating missing ones with mkdirat on descriptors reached
    through the workspace (never through a path string); those made are added to
    `made`, for `unmake` when the change they were made for fails. `sync` False: the
    caller makes them durable with `sync_all`."""
    try:
        return ctx.ws.open_dir(parent, shown=shown)
    except ToolError as err:
        if not create or err.code != "file_not_found":
            raise _parent_error(err, shown) from None
    parts = parent.split("/")
    for part in parts:  # refused before any is made: a refused call changes nothing
        refuse_reserved(part, shown)
    fd = ctx.ws.open_dir(ROOT, shown=shown)
    try:
        for i, part in enumerate(parts):
            prefix = "/".join(parts[:i + 1])
            try:
                child = ctx.ws.open_dir(prefix, shown=shown)
            except ToolError as err:
                if err.code != "file_not_found":
                    raise _parent_error(err, shown) from None
                try:
                    charge(ctx, 0, 1, shown)
                    os.mkdir(part, 0o777, dir_fd=fd)
                    if sync:  # the new directory survives a crash with its file
                        os.fsync(fd)
                    if made is not None:
                        made.append(prefix)
                except FileExistsError:
                    pass  # made by someone else meanwhile, or a dangling symlink
                except OSError as exc:
                    raise from_os_error(exc, shown, "write_failed") from None
                child = ctx.ws.open_dir(prefix, shown=shown)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def unmake(ctx: ToolContext, made: list[str]) -> None:
    """Remove the directories a failed change made, deepest first, each only if still
    empty (another call may have put something in it meanwhile)."""
    for rel in reversed(made):
        parent, name = split_parent(rel)
        try:
            fd = ctx.ws.open_dir(parent, shown=rel)
        except ToolError:
            continue
        try:
            os.rmdir(name, dir_fd=fd)
            charge(ctx, 0, -1, rel)
        except OSError:
            pass
        finally:
            os.close(fd)
    made.clear()


def _parent_error(err: ToolError, shown: str) -> ToolError:
    """A missing or non-directory parent, said in words an agent can act on."""
    if err.code == "file_not_found":
        return ToolError("file_not_found",
                         f"Parent directory does not exist: {shown}. Check the path; "
                         "file.write with create_dirs: true creates missing parents.",
                         path=shown)
    if err.code == "not_a_directory":
        return ToolError("not_a_directory",
                         f"A parent of the path is a file, not a directory: {shown}.",
                         path=shown)
    return err


def _lstat(dir_fd: int, name: str, shown: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise from_os_error(exc, shown) from None


def read_entry(dir_fd: int, name: str, st: os.stat_result, shown: str) -> bytes:
    """The whole content of the regular file `name` we stat'ed as `st` in `dir_fd`."""
    fd = open_same(dir_fd, name, st, shown, doing="writing")
    chunks = []
    try:
        while chunk := os.read(fd, _READ_CHUNK):
            chunks.append(chunk)
    except OSError as exc:
        raise from_os_error(exc, shown) from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def _same(dir_fd: int, name: str, st: os.stat_result, before: bytes | None, new: bytes,
          shown: str) -> bool:
    """Whether `new` equals the file's content, reading it only when sizes agree."""
    if before is not None:
        return before == new
    return st.st_size == len(new) and read_entry(dir_fd, name, st, shown) == new


def _replace(dir_fd: int, name: str, st: os.stat_result | None, data: bytes,
             shown: str, perm: int | None = None) -> os.stat_result:
    """Temp file, fsync, rename over `name`, fsync the directory. On failure the temp
    file is gone and the target untouched."""
    tmp = TEMP_PREFIX + secrets.token_hex(8)
    mode = 0o600 if st is not None else _NEW_FILE_MODE
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     mode, dir_fd=dir_fd)
    except OSError as exc:
        raise from_os_error(exc, shown, "write_failed") from None
    try:
        try:
            _write_all(fd, data)
            after = _sealed(fd, st, perm)
        finally:
            os.close(fd)
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException as exc:
        _unlink_quietly(dir_fd, tmp)
        if isinstance(exc, OSError):
            raise from_os_error(exc, shown, "write_failed") from None
        raise
    try:
        os.fsync(dir_fd)
    except OSError as exc:
        raise from_os_error(exc, shown, "write_failed") from None
    return after


def _land(dir_fd: int, name: str, st: os.stat_result | None, spooled: Spooled,
          shown: str) -> os.stat_result:
    """The spooled file renamed over `name` (taking the old file's owner and mode), the
    directory fsynced; across file systems (a mount inside the workspace) it is copied
    into a temp file beside `name` first. On failure the target is untouched."""
    try:
        if st is None and not spooled.sync:  # nothing to seal: no owner, mode or fsync
            after = os.stat(spooled.name, dir_fd=spooled.dir_fd, follow_symlinks=False)
            if not stat.S_ISREG(after.st_mode):
                raise OSError(errno.ELOOP, "the spooled content is no regular file")
        else:
            fd = os.open(spooled.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC,
                         dir_fd=spooled.dir_fd)  # enough to chown, chmod, fsync
            try:
                after = _sealed(fd, st, sync=spooled.sync)
            finally:
                os.close(fd)
        held = _hold(dir_fd, name, st)
        try:
            os.rename(spooled.name, name, src_dir_fd=spooled.dir_fd, dst_dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            return _copy_over(dir_fd, name, st, spooled, shown)
        finally:
            _free_later(held)
        if spooled.sync:
            os.fsync(dir_fd)
    except OSError as exc:
        raise from_os_error(exc, shown, "write_failed") from None
    return after


def _hold(dir_fd: int, name: str, st: os.stat_result | None) -> int | None:
    """A reference to the large file a landing is about to replace, so that the rename
    drops only its name: the file system frees its blocks when the reference goes
    (`_free_later`), not inside the rename the caller waits for (ext4 took 0.14 s for a
    GiB). None for a small file or none (nothing worth the thread)."""
    if st is None or st.st_size < FREE_LATER:
        return None
    try:
        return os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return None


def _free_later(fd: int | None) -> None:
    """Drop the reference `_hold` took, in a thread: the replaced file's blocks are freed
    while the call answers (a crash meanwhile leaves an orphan the file system frees at
    mount; the new file is durable already)."""
    if fd is not None:
        threading.Thread(target=os.close, args=(fd,), name="free-replaced",
                         daemon=True).start()


def _copy_over(dir_fd: int, name: str, st: os.stat_result | None, spooled: Spooled,
               shown: str) -> os.stat_result:
    """A spool on another file system than `name`'s, copied in chunks then renamed."""
    src = os.open(spooled.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC,
                  dir_fd=spooled.dir_fd)
    tmp = TEMP_PREFIX + secrets.token_hex(8)
    try:
        dst = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                      | os.O_CLOEXEC, 0o600 if st is not None else _NEW_FILE_MODE,
                      dir_fd=dir_fd)
        try:
            while chunk := os.read(src, _READ_CHUNK):
                _write_all(dst, chunk)
            after = _sealed(dst, st, sync=spooled.sync)
        finally:
            os.close(dst)
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        _unlink_quietly(dir_fd, tmp)
        raise
    finally:
        os.close(src)
    if spooled.sync:
        os.fsync(dir_fd)
    return after


def put_symlink(dir_fd: int, name: str, target: str) -> None:
    """A symlink `name` -> `target` in the directory we hold locked, made beside its name
    and renamed over it: a reader sees the old entry or the new link, never neither."""
    temp = TEMP_PREFIX + secrets.token_hex(8)
    os.symlink(target, temp, dir_fd=dir_fd)
    try:
        os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError:
        _unlink_quietly(dir_fd, temp)
        raise


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _sealed(fd: int, st: os.stat_result | None, perm: int | None = None, *,
            sync: bool = True) -> os.stat_result:
    """New content made ready to replace `st`'s file: its owner and mode (or `perm`),
    synced to disk (unless its caller syncs a batch at once); the new inode's stat."""
    if st is not None:
        _keep_owner_and_mode(fd, st)
    if perm is not None:
        os.fchmod(fd, perm)
    if sync:
        os.fsync(fd)
    return os.fstat(fd)


def sync_all(ctx: ToolContext, shown: str) -> None:
    """Make every landing made without `sync` durable at once: one syncfs(2) of the
    workspace's file system (its files' data and every directory's entries), where a
    landing each would cost two fsyncs. A file system mounted inside the workspace is
    another one: os.sync() covers it too, on the rare kernels without syncfs."""
    fd = ctx.ws.open_dir(ROOT, shown=shown)
    try:
        if _libc().syncfs(fd) != 0:
            raise from_os_error(OSError(ctypes.get_errno(), "syncfs failed"), shown,
                                "write_failed")
    except AttributeError:
        os.sync()
    finally:
        os.close(fd)


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _keep_owner_and_mode(fd: int, st: os.stat_result) -> None:
    """The new inode takes the old one's owner (when we may) and permission bits."""
    if (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
        try:
            os.fchown(fd, st.st_uid, st.st_gid)
        except PermissionError:
            pass  # only root may give a file away; the content still goes in
    os.fchmod(fd, stat.S_IMODE(st.st_mode))


def _unlink_quietly(dir_fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def _is_directory(shown: str) -> ToolError:
    return ToolError("is_directory", f"Path is a directory, not a file: {shown}. Give a "
                     "file path inside it.", path=shown)


def conflict_error(shown: str, expected: str, current: str | None) -> ToolError:
    now = "no longer exists" if current is None else f"is now at version {current}"
    return ToolError("conflict",
                     f"The file changed since you read it: {shown} {now}, you expected "
                     f"version {expected}. Read it again and redo your change.",
                     path=shown, expected_version=expected, current_version=current)
