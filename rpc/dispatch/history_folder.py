"""Where the history's files are (docs/protocol.md, History: where it lives): a directory on
disk, reached only through descriptors opened at start, or memory.

Memory is the last resort, for a workspace that holds every directory the server could
use (`--workspace /`): no path the agent can name reaches it. Each file is then a memfd
(its pages are the process's own; the byte budget bounds them), and the history lasts as
long as the process. Both kinds answer the same few calls, so the log, the packs, the
spools and a rewind's journal are written by one piece of code whichever holds them.
"""

from __future__ import annotations

import errno
import fcntl
import os
from typing import Protocol

_MFD_CLOEXEC = 1


class Folder(Protocol):
    fd: int  # flock(2) on it serialises the servers sharing the folder

    def open(self, name: str, flags: int, mode: int = 0o600) -> int: ...

    def unlink(self, name: str) -> None: ...

    def names(self) -> list[str]: ...

    def stat(self, name: str) -> os.stat_result: ...

    def rename(self, src: str, dst: str) -> None: ...

    def sub(self, name: str) -> Folder: ...

    def sync(self) -> None: ...

    def close(self) -> None: ...


class DiskFolder:
    """A directory, through its descriptor (so it stays reachable after a --user drop
    even where its path lies beneath /root)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    @classmethod
    def held(cls, path: str) -> DiskFolder:
        """The directory, made if missing and held with a shared flock while this process
        runs. Whoever removes one (rpc/dispatch/history_home.py) does so under the
        exclusive lock, so one removed while this process waited is made afresh."""
        for _ in range(3):
            os.makedirs(path, mode=0o700, exist_ok=True)
            folder = cls(os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))
            fcntl.flock(folder.fd, fcntl.LOCK_SH)
            if os.fstat(folder.fd).st_nlink > 0:
                return folder
            folder.close()
        raise OSError(errno.EBUSY, "the directory keeps being removed", path)

    def open(self, name: str, flags: int, mode: int = 0o600) -> int:
        return os.open(name, flags | os.O_CLOEXEC, mode, dir_fd=self.fd)

    def unlink(self, name: str) -> None:
        os.unlink(name, dir_fd=self.fd)

    def names(self) -> list[str]:
        return os.listdir(self.fd)

    def stat(self, name: str) -> os.stat_result:
        return os.stat(name, dir_fd=self.fd, follow_symlinks=False)

    def rename(self, src: str, dst: str) -> None:
        os.rename(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def sub(self, name: str) -> DiskFolder:
        try:
            os.mkdir(name, 0o700, dir_fd=self.fd)
        except FileExistsError:
            pass
        return DiskFolder(os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
                                  | os.O_CLOEXEC, dir_fd=self.fd))

    def sync(self) -> None:
        os.fsync(self.fd)

    def close(self) -> None:
        os.close(self.fd)


class MemoryFolder:
    """The same calls over memfds held by name. `open` hands out a new descriptor of the
    same open file (callers close theirs), so offsets are shared: every caller here
    reads and writes at explicit offsets."""

    def __init__(self) -> None:
        self.fd = os.memfd_create("chorus-history-lock", _MFD_CLOEXEC)
        self._files: dict[str, int] = {}
        self._subs: dict[str, MemoryFolder] = {}

    def open(self, name: str, flags: int, mode: int = 0o600) -> int:
        fd = self._files.get(name)
        if fd is None:
            if not flags & os.O_CREAT:
                raise FileNotFoundError(2, "No such file", name)
            fd = self._files[name] = os.memfd_create(f"chorus-history-{name}", _MFD_CLOEXEC)
        elif flags & os.O_CREAT and flags & os.O_EXCL:
            raise FileExistsError(17, "File exists", name)
        elif flags & os.O_TRUNC:
            os.ftruncate(fd, 0)
        return os.dup(fd)

    def unlink(self, name: str) -> None:
        os.close(self._take(name))

    def names(self) -> list[str]:
        return list(self._files)

    def stat(self, name: str) -> os.stat_result:
        fd = self._files.get(name)
        if fd is None:
            raise FileNotFoundError(2, "No such file", name)
        return os.fstat(fd)

    def rename(self, src: str, dst: str) -> None:
        fd = self._take(src)
        old = self._files.pop(dst, None)
        if old is not None:
            os.close(old)
        self._files[dst] = fd

    def sub(self, name: str) -> MemoryFolder:
        return self._subs.setdefault(name, MemoryFolder())

    def sync(self) -> None:
        return None

    def close(self) -> None:
        if self.fd < 0:
            return
        for fd in (self.fd, *self._files.values()):
            os.close(fd)
        self.fd = -1
        self._files.clear()
        for sub in self._subs.values():
            sub.close()
        self._subs.clear()

    def _take(self, name: str) -> int:
        fd = self._files.pop(name, None)
        if fd is None:
            raise FileNotFoundError(2, "No such file", name)
        return fd
