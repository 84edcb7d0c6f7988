"""The workspace: the only door from a tool to the file system.

Every path a client sends is first normalised lexically (a `..` above the root is refused
before the disk is touched), then resolved by the kernel beneath a directory descriptor of
the root that was opened once at start, with `openat2(RESOLVE_BENEATH |
RESOLVE_NO_MAGICLINKS)`. Checking a string and then opening it is a race; letting the
kernel resolve beneath a pinned root is not. Where openat2 is missing, `_walk_open` gives
the same guarantee one component at a time with `O_NOFOLLOW`.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
from typing import Callable

from chorus_tools.tools.confine.deny import DenyRules, denied
from chorus_tools.tools.confine.reserved import refuse_reserved_path
from chorus_tools.tools.errors import ToolError, from_os_error

_SYS_OPENAT2 = 437  # the same number in the generic and the x86_64 syscall tables
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_BENEATH = 0x08
_MAX_SYMLINKS = 40
_PATH_MAX = 4096  # bytes of a path the kernel takes, its final NUL included
ROOT = "."


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _openat2(dir_fd: int, rel: str, flags: int, mode: int) -> int:
    how = _OpenHow(flags | os.O_CLOEXEC, mode if flags & os.O_CREAT else 0,
                   _RESOLVE_BENEATH | _RESOLVE_NO_MAGICLINKS)
    encoded = os.fsencode(rel)
    while True:
        fd = _libc.syscall(_SYS_OPENAT2, dir_fd, encoded, ctypes.byref(how),
                           ctypes.sizeof(how))
        if fd >= 0:
            return fd
        err = ctypes.get_errno()
        if err not in (errno.EAGAIN, errno.EINTR):  # EAGAIN: a rename raced the lookup
            raise OSError(err, os.strerror(err), rel)


def openat2_available() -> bool:
    """True when the running kernel has openat2 (Linux 5.6+) and lets us call it."""
    try:
        os.close(_openat2(os.open("/", os.O_PATH | os.O_DIRECTORY), ".", os.O_PATH, 0))
    except OSError:
        return False
    return True


def _walk_open(root_fd: int, rel: str, flags: int, mode: int) -> int:
    """openat2's guarantee in user space: one component at a time, never following a
    symlink by the kernel, expanding relative ones ourselves and refusing absolute ones."""
    pending = [] if rel == ROOT else rel.split("/")
    pending.reverse()
    stack = [os.dup(root_fd)]
    links = swaps = 0
    try:
        while pending:
            name = pending.pop()
            if name in ("", "."):
                continue
            if name == "..":
                if len(stack) == 1:
                    raise OSError(errno.EXDEV, os.strerror(errno.EXDEV), rel)
                os.close(stack.pop())
                continue
            last = not pending
            try:
                st = os.stat(name, dir_fd=stack[-1], follow_symlinks=False)
            except FileNotFoundError:
                if not (last and flags & os.O_CREAT):
                    raise
                st = None
            try:
                if st is not None and stat.S_ISLNK(st.st_mode) and (
                        not last or not flags & os.O_NOFOLLOW):
                    links += 1
                    target = os.readlink(name, dir_fd=stack[-1])
                    if links > _MAX_SYMLINKS:
                        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), rel)
                    if target.startswith("/"):
                        raise OSError(errno.EXDEV, os.strerror(errno.EXDEV), rel)
                    pending.extend(reversed(target.split("/")))
                    continue
                if last:
                    return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode,
                                   dir_fd=stack[-1])
                stack.append(os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW
                                     | os.O_CLOEXEC, dir_fd=stack[-1]))
            except OSError as exc:
                if swaps >= _MAX_SYMLINKS or not _swapped(exc.errno, st):
                    raise
                swaps += 1  # replaced since we looked (a link became a dir, or back):
                pending.append(name)  # look at it again
        return os.open(".", flags | os.O_CLOEXEC, mode, dir_fd=stack[-1])
    finally:
        for fd in stack:
            os.close(fd)


def _swapped(err: int | None, seen: os.stat_result | None) -> bool:
    """Whether an error contradicts what lstat saw a moment before, so the entry was
    replaced in between (a rename swap) and is worth looking at again: readlink of a
    link that is none (EINVAL), O_DIRECTORY on a directory (ENOTDIR), O_NOFOLLOW on a
    non-link (ELOOP). Errors that what was seen explains are real."""
    mode = 0 if seen is None else seen.st_mode
    return ((err == errno.EINVAL and stat.S_ISLNK(mode))
            or (err == errno.ENOTDIR and stat.S_ISDIR(mode))
            or (err == errno.ELOOP and not stat.S_ISLNK(mode)))


def normalize(path: object, *, param: str = "path", allow_empty: bool = False,
              roots: tuple[str, ...] = ()) -> str:
    """Lexical normalisation: `.`/`..` handling only, nothing decoded or expanded.

    Returns a workspace-relative path ('.' for the root). An absolute path must lie under
    one of `roots` (the workspace's given and resolved absolute forms)."""
    if not isinstance(path, str):
        raise ToolError("invalid_params", f"'{param}' must be a string", param=param)
    if "\0" in path:
        raise ToolError("invalid_params", f"'{param}' contains a NUL byte", param=param)
    try:
        os.fsencode(path)
    except UnicodeEncodeError:
        raise ToolError("invalid_params", f"'{param}' holds a lone surrogate (a \\ud800-style "
                        "escape that is half of a character), which no file name can hold",
                        param=param) from None
    if path == "":
        if allow_empty:
            return ROOT
        raise ToolError("invalid_params", f"'{param}' must not be empty", param=param)
    parts = _resolve_dots(path, param)
    if path.startswith("/"):
        for root in roots:
            root_parts = root.strip("/").split("/") if root != "/" else []
            if parts[:len(root_parts)] == root_parts:
                parts = parts[len(root_parts):]
                break
        else:
            raise _outside(path, param, "an absolute path outside the workspace")
    rel = "/".join(parts) or ROOT
    if len(os.fsencode(rel)) >= _PATH_MAX:  # the kernel refuses it whole, so must every
        # method: a write made one name at a time from its parent could create a file
        # that no read, list or delete could name again
        err = from_os_error(OSError(errno.ENAMETOOLONG, "too long"), path)
        err.details["param"] = param
        raise err
    return rel


def _resolve_dots(path: str, param: str) -> list[str]:
    parts: list[str] = []
    for name in path.split("/"):
        if name in ("", "."):
            continue
        if name != "..":
            parts.append(name)
        elif parts:
            parts.pop()
        elif not path.startswith("/"):
            raise _outside(path, param, "'..' climbs above the workspace root")
    return parts


def _outside(path: str, param: str, why: str) -> ToolError:
    return ToolError("path_outside_workspace",
                     f"Path is outside the workspace ({why}): {path}. "
                     "Use a path relative to the workspace root.", path=path, param=param)


class Workspace:
    """A pinned workspace root and the confined ways to reach what lies beneath it."""

    def __init__(self, root: str, *, use_openat2: bool | None = None,
                 deny: DenyRules | None = None) -> None:
        given = os.path.abspath(root)
        self.deny = deny if deny is not None else DenyRules()
        self.root_fd = os.open(given, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        self.roots = tuple(dict.fromkeys((os.path.normpath(given), os.path.realpath(given))))
        if use_openat2 is None:
            use_openat2 = openat2_available()
        self._open: Callable[[int, str, int, int], int] = _openat2 if use_openat2 else _walk_open
        self.uses_openat2 = use_openat2
        # the running call's paths as the invoker normalised them (tools/task.py), set by
        # the worker around each job: `rel` answers from here instead of normalising again
        self.normalised: dict[str, str] = {}

    def rel(self, path: object, *, param: str = "path", allow_empty: bool = False) -> str:
        """The client's path as a normalised workspace-relative path, or a ToolError: a
        path naming one of the runtime's reserved entries is refused whatever the call."""
        if path and isinstance(path, str) and (known := self.normalised.get(path)):
            rel = known
        else:
            rel = normalize(path, param=param, allow_empty=allow_empty, roots=self.roots)
        refuse_reserved_path(rel, str(path), param)
        return rel

    def open(self, rel: str, flags: int, mode: int = 0o666, *, shown: str | None = None,
             fallback: str = "internal_error") -> int:
        """Open `rel` beneath the root; every OSError becomes the matching ToolError.
        Under --deny, both the path asked for and the one the kernel reached (through
        any symlink) must be allowed."""
        shown = shown if shown is not None else rel
        if self.deny.denies(rel):
            raise denied(shown)
        try:
            fd = self._open(self.root_fd, rel, flags, mode)
        except OSError as exc:
            raise from_os_error(exc, shown, fallback) from None
        if self.deny and self.deny.denies(self.where(fd, rel)):
            os.close(fd)
            raise denied(shown)
        return fd

    def ensure_present(self) -> None:
        """file_not_found when the pinned root directory itself has been deleted (a
        process that must name it, like ripgrep's cwd, cannot run there)."""
        if os.fstat(self.root_fd).st_nlink == 0:
            raise ToolError("file_not_found", "The workspace directory itself was deleted "
                            "while the server runs: nothing beneath it can be reached. "
                            "Restart the server on an existing directory.", path=ROOT)

    def lstat(self, rel: str, *, shown: str | None = None) -> os.stat_result:
        """The entry itself (a symlink is not followed), reached safely."""
        fd = self.open(rel, os.O_PATH | os.O_NOFOLLOW, shown=shown)
        try:
            return os.fstat(fd)
        finally:
            os.close(fd)

    def open_regular(self, rel: str, flags: int = os.O_RDONLY, *,
                     shown: str | None = None) -> tuple[int, os.stat_result]:
        """Open a regular file for I/O. FIFOs, sockets and devices are never opened: the
        entry is first reached with O_PATH, checked, then reopened through that same
        descriptor, so nothing can be swapped in between."""
        shown = rel if shown is None else shown
        path_fd = self.open(rel, os.O_PATH, shown=shown)
        try:
            st = os.fstat(path_fd)
            if names_directory(shown) and not stat.S_ISDIR(st.st_mode):
                raise not_a_directory(shown)  # 'fifo/' too: the path's shape decides first
            check_regular(st, shown)
            fd = os.open(f"/proc/self/fd/{path_fd}", flags | os.O_CLOEXEC)
        except OSError as exc:
            raise from_os_error(exc, shown) from None
        finally:
            os.close(path_fd)
        return fd, st

    def open_dir(self, rel: str, *, shown: str | None = None) -> int:
        """A readable directory descriptor (for listing, fsync and *at calls)."""
        return self.open(rel, os.O_RDONLY | os.O_DIRECTORY, shown=shown)

    def resolve_symlinks(self, rel: str, *, shown: str | None = None) -> str:
        """Follow a chain of symlinks at the last component, lexically, staying inside.

        Writes go to the link's target, so the temporary file must be made beside the
        target, not beside the link."""
        shown = rel if shown is None else shown
        for _ in range(_MAX_SYMLINKS):
            parent, _, name = rel.rpartition("/")
            try:
                fd = self.open(parent or ROOT, os.O_PATH | os.O_DIRECTORY, shown=shown)
            except ToolError as err:
                if err.code == "file_not_found":
                    return rel
                raise
            try:
                target = os.readlink(name, dir_fd=fd)
                parent = self.where(fd, parent)
            except OSError as exc:
                if exc.errno in (errno.EINVAL, errno.ENOENT):  # not a symlink, or absent
                    return rel
                raise from_os_error(exc, shown) from None
            finally:
                os.close(fd)
            if target.startswith("/"):
                raise _outside(shown, "path", "an absolute symlink")
            try:
                rel = normalize(f"{parent}/{target}" if parent else target)
            except ToolError:
                raise _outside(shown, "path", "a symlink that leads above the root") from None
            if rel == ROOT:
                return rel
        raise ToolError("file_not_found", f"Too many levels of symbolic links: {shown}",
                        path=shown)

    def real_entry(self, dir_fd: int, name: str, path: str) -> str:
        """The workspace path of entry `name` of directory `dir_fd`, named `path` by the
        call: `path` itself unless a symlinked directory is on its way (`dl/x` with `dl`
        -> `real` is `real/x`, the only name file.history, file.restore and a rewind know
        it by, and the place --deny judges). The path as named where /proc cannot say."""
        parent = path.rpartition("/")[0]
        where = self.where(dir_fd, parent)
        return path if where == parent else f"{where}/{name}" if where else name

    def where(self, dir_fd: int, lexical: str) -> str:
        """The workspace-relative path `dir_fd` really is ('' for the root), so a link's
        '..' starts from where the link lives, as the kernel's does, even when a parent
        on the way was a symlink, and so --deny judges where an open really led. Used
        for naming only: every access still goes through the root fd. `lexical` when
        /proc cannot say."""
        try:
            root = os.readlink(f"/proc/self/fd/{self.root_fd}").rstrip("/")
            here = os.readlink(f"/proc/self/fd/{dir_fd}")
        except OSError:
            return lexical
        if here == (root or "/"):
            return ""
        return here[len(root) + 1:] if here.startswith(root + "/") else lexical


def names_directory(path: str) -> bool:
    """A client path ending in '/', '/.' or '/..' can only name a directory, whatever
    normalisation makes of it ('a/b/..' must not reach a file 'a', 'f/' not a file 'f')."""
    return path.rpartition("/")[2] in ("", ".", "..")


def not_a_directory(shown: str) -> ToolError:
    return ToolError("not_a_directory",
                     f"Not a directory: {shown}. The path ends with '/' (or '/.', '/..'), "
                     "which names a directory; drop it to name the file.", path=shown)


def check_regular(st: os.stat_result, shown: str) -> None:
    """Refuse directories and special files with the error an agent can act on."""
    if stat.S_ISREG(st.st_mode):
        return
    if stat.S_ISDIR(st.st_mode):
        raise ToolError("is_directory",
                        f"Path is a directory, not a file: {shown}. Use file.list to see "
                        "its entries.", path=shown)
    raise ToolError("not_a_regular_file",
                    f"Not a regular file (a FIFO, socket or device): {shown}. Such files are "
                    "never opened.", path=shown, file_type=file_type_name(st.st_mode))


def file_type_name(mode: int) -> str:
    """The `type` word of file.list and file.info."""
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "other"


def version_of(st: os.stat_result) -> str:
    """An opaque token that changes whenever the file does."""
    return f"{st.st_mtime_ns:x}-{st.st_size:x}-{st.st_ino:x}"


def open_same(dir_fd: int, name: str, st: os.stat_result, shown: str, *, doing: str) -> int:
    """Open for reading the regular file stat'ed as `st` beneath `dir_fd`: never a FIFO,
    never an inode swapped in since (write_failed naming what was being done)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=dir_fd)
    except OSError as exc:
        raise from_os_error(exc, shown) from None
    now = os.fstat(fd)
    if (now.st_ino, now.st_dev) != (st.st_ino, st.st_dev) or not stat.S_ISREG(now.st_mode):
        os.close(fd)
        raise ToolError("write_failed", f"The file was replaced while {doing}: {shown}. "
                        "Retry.", path=shown)
    return fd
