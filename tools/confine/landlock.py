"""Landlock, the kernel's unprivileged sandbox: a process gives up every file access it
was not granted beneath a few directories, for itself and every child it starts.

Two domains are built from it: the workers' own (tools/confine/workers.py: read and write beneath
the workspace, read what Python needs) and, nested inside it, the ripgrep child's: it may
read beneath the directory it searches and run its own binary, nothing else (no other file,
no TCP, no signals outside its domain).

ripgrep opens files by path, so a directory swapped for a symlink mid-search could lead it
outside the workspace; under Landlock the kernel refuses any such open. The ruleset is
built in the parent (plain fds); the child only calls `confine`, a few raw syscalls between
fork and exec, where it also asks to be killed with its parent (PR_SET_PDEATHSIG), so a
worker killed to cancel a search takes its ripgrep with it.
"""

from __future__ import annotations

import ctypes
import os
import signal
import stat
import struct


_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_DIR, MAKE_REG = 1 << 4, 1 << 5, 1 << 7, 1 << 8
MAKE_SYM = 1 << 12
REFER, TRUNCATE = 1 << 13, 1 << 14  # ABI 2 and 3
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | 1 << 15  # + IOCTL_DEV
_FS_BITS_BY_ABI = {1: 13, 2: 14, 3: 15, 4: 15, 5: 16}  # number of handled fs rights
_NET_ALL = 0b11  # bind and connect TCP (ABI 4)
_SCOPE_ALL = 0b11  # abstract unix sockets and signals (ABI 6)
LIB_DIRS = ("/lib", "/lib64", "/usr/lib", "/usr/lib64")

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def abi_version() -> int:
    """The kernel's Landlock ABI, 0 when it has none (or it is disabled)."""
    version = _libc.syscall(_SYS_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION)
    return max(int(version), 0)


def create() -> int | None:
    """A new ruleset fd that handles every right this kernel's Landlock knows (so what no
    rule grants is refused), or None when Landlock is missing."""
    abi = abi_version()
    if abi == 0:
        return None
    attr = _RulesetAttr(_handled_fs(abi), _NET_ALL if abi >= 4 else 0,
                        _SCOPE_ALL if abi >= 6 else 0)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    return _check(_libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), size, 0))


def allow(ruleset_fd: int, target: int | str, access: int) -> None:
    """Grant `access` beneath `target` (an fd or a path; a file gets only the rights that
    apply to files), leaving out rights this kernel does not know."""
    fd = os.open(target, os.O_PATH | os.O_CLOEXEC) if isinstance(target, str) else target
    try:
        access &= _handled_fs(abi_version())
        _add(ruleset_fd, fd, access if _is_dir(fd) else access & _FILE_RIGHTS)
    finally:
        if fd is not target:
            os.close(fd)


def restrict_self(ruleset_fd: int) -> None:
    """Enter the ruleset's domain, for good (no_new_privs first, as the kernel requires)."""
    _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
    _check(_libc.syscall(_SYS_RESTRICT_SELF, ruleset_fd, 0))


def ruleset(read_beneath: list[int], binary: str) -> int | None:
    """A ruleset fd allowing reads beneath each fd of `read_beneath` (directories or files)
    and running `binary`; None when Landlock is missing (the server said so at start)."""
    fd = create()
    if fd is None:
        return None
    try:
        for dir_fd in read_beneath:
            allow(fd, dir_fd, READ_FILE | READ_DIR)
        allow(fd, binary, EXECUTE | READ_FILE)
        if not is_static(binary):
            for lib in filter(os.path.isdir, LIB_DIRS):
                allow(fd, lib, EXECUTE | READ_FILE | READ_DIR)
    except BaseException:
        os.close(fd)
        raise
    return fd


def confine(ruleset_fd: int | None, parent_pid: int) -> None:
    """In the child between fork and exec: die with the parent, then enter the ruleset."""
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent died before the line above
        os._exit(1)
    if ruleset_fd is not None:
        restrict_self(ruleset_fd)


def is_static(binary: str) -> bool:
    """True when the ELF file has no program interpreter (needs no shared libraries)."""
    with open(binary, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2:  # only 64-bit ELF is read here
            return False
        phoff, = struct.unpack_from("<Q", head, 32)
        phentsize, phnum = struct.unpack_from("<HH", head, 54)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    return all(struct.unpack_from("<I", table, i * phentsize)[0] != 3 for i in range(phnum))


def _handled_fs(abi: int) -> int:
    return (1 << _FS_BITS_BY_ABI.get(abi, 16)) - 1


def _add(ruleset_fd: int, fd: int, access: int) -> None:
    rule = _PathBeneath(access, fd)
    _check(_libc.syscall(_SYS_ADD_RULE, ruleset_fd, _RULE_PATH_BENEATH, ctypes.byref(rule), 0))


def _is_dir(fd: int) -> bool:
    return stat.S_ISDIR(os.fstat(fd).st_mode)


def _check(result: int) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return int(result)

