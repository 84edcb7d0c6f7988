"""The symbol index's records kept on disk (`--index-cache DIR`, docs/protocol.md, "Code
by structure"): a server started again on the same code, or many servers on copies of one
repository, read a file's record instead of parsing the file again.

A record (tools/warm/refs.py's `Local`) is a pure function of the file's bytes, its
grammar and our extraction code, so it is filed under a hash of exactly those: the bytes
(never the path), the grammar, and a *format key* made once per process from our
version, tree-sitter's and every grammar package's version, the byte order, and the text
of the code that builds a record (tools/code/, refs.py, this module). Whatever changes the
answer changes the key, so a stale or foreign record is never looked up at all.

Each record is one file, `DIR/<2 hex>/<38 hex>` (fan-out by the key's first byte), written
to a temporary name and renamed (two servers writing the same key write the same bytes;
a reader sees one whole file or none), mode 0600 in 0700 directories, opened relative to
a descriptor of DIR that the server opened at start, never following a symlink. A record
carries its key, its length and a checksum of its body: one that is truncated, corrupt,
foreign or no regular file is a miss and is removed, never an error and never an answer.

The directory is bounded (`--index-cache-bytes`, its blocks on disk): a server that wrote
records prunes the least recently used (a hit refreshes a record's time at most once an
hour) once its index is built. Only the warm process and its helpers reach DIR: Landlock
grants it to their domain alone (tools/confine/workers.py), never to the workers.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import struct
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from chorus_tools import tools
from chorus_tools.tools.code.languages import grammar_packages

if TYPE_CHECKING:  # numpy and the parsers load in the warm process only, not at start
    from chorus_tools.tools.warm.refs import Local

MAGIC = b"chrc1"
# magic, the record's key, its body's length, the body's checksum (blake2b, 16 bytes)
_FRAME = struct.Struct("<5s20sQ16s")
_KEY_BYTES = 20
_COUNTS = struct.Struct("<?II")  # markdown, number of local names, their bytes
TOUCH_EVERY = 3600  # seconds: a hit older than this refreshes the record's time
STALE_TEMP = 3600  # seconds: a temporary file this old was left by a killed writer
KEEP_SHARE = 0.9  # a prune leaves the directory at this share of its bound
# what a record is made by: a change to any of these files changes every key
_CODE = ("code", "warm/refs.py", "warm/record_cache.py")


def format_key() -> bytes:
    """The key of everything besides a file's bytes and grammar that its record depends
    on (module doc), made once per process (about 20 ms: package metadata, ~40 files)."""
    import importlib.metadata  # the warm process's, never the server's start
    digest = hashlib.blake2b(digest_size=_KEY_BYTES)
    digest.update(f"{MAGIC!r} {sys.byteorder}\n".encode())
    for package in ("chorus-tools", "tree-sitter", *grammar_packages()):
        try:
            version = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            version = "?"
        digest.update(f"{package}={version}\n".encode())
    top = Path(tools.__file__).parent
    for part in _CODE:
        found = sorted(top.joinpath(part).rglob("*")) if top.joinpath(part).is_dir() \
            else [top / part]
        for file in found:
            if file.is_file() and file.suffix in (".py", ".scm"):
                digest.update(f"{file.relative_to(top)}\n".encode())
                digest.update(file.read_bytes())
    return digest.digest()


class RecordCache:
    """The records under one directory, reached through `fd` (an O_PATH descriptor of it
    opened at start), bounded to `limit` bytes on disk."""

    def __init__(self, directory: str, fd: int, limit: int) -> None:
        self.directory = directory
        self.fd = fd
        self.limit = limit
        self._format: bytes | None = None
        self.stored = 0  # records this process wrote: it prunes only then

    def prepare(self) -> bytes:
        """The format key, made on first use (in the warm process, under its domain)."""
        if self._format is None:
            self._format = format_key()
        return self._format

    def key(self, data: bytes, grammar: str) -> bytes:
        """The key of the record of `data` read as `grammar`."""
        digest = hashlib.blake2b(self.prepare(), digest_size=_KEY_BYTES)
        digest.update(grammar.encode())
        digest.update(b"\0")
        digest.update(data)
        return digest.digest()

    def get(self, key: bytes) -> Local | None:
        """The record filed under `key`, or None (a miss; a broken record is removed)."""
        place, name = _place(key)
        dir_fd = self._dir(place, create=False)
        if dir_fd is None:
            return None
        try:
            try:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                             dir_fd=dir_fd)
            except OSError as exc:
                if exc.errno == errno.ELOOP:  # a symlink planted in its place
                    _remove(dir_fd, name)
                return None
            try:
                st = os.fstat(fd)
                data = _read(fd, st.st_size) if stat.S_ISREG(st.st_mode) else b""
            finally:
                os.close(fd)
            found = decode(key, data)
            if found is None:
                _remove(dir_fd, name)
            elif time.time() - st.st_mtime > TOUCH_EVERY:
                try:  # recently used: the prune keeps it
                    os.utime(name, dir_fd=dir_fd, follow_symlinks=False)
                except OSError:
                    pass
            return found
        finally:
            os.close(dir_fd)

    def put(self, key: bytes, found: Local) -> None:
        """File `found` under `key`; best effort (a full disk or a vanished directory
        only means the next server parses again)."""
        data = encode(key, found)
        place, name = _place(key)
        if data is None or (dir_fd := self._dir(place, create=True)) is None:
            return
        temp = f".{name}.{os.getpid()}"
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            self.stored += 1
        except OSError:
            _remove(dir_fd, temp)
        finally:
            os.close(dir_fd)

    def _dir(self, place: str, create: bool) -> int | None:
        """A descriptor of the fan-out directory `place` (made if `create`), never through
        a symlink: anything else found there is removed. None when there is none."""
        for _ in range(3):
            try:
                return os.open(place, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW
                               | os.O_CLOEXEC, dir_fd=self.fd)
            except FileNotFoundError:
                if not create:
                    return None
                try:
                    os.mkdir(place, 0o700, dir_fd=self.fd)
                except OSError:
                    pass  # made meanwhile by another server: open it
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    return None
                _remove(self.fd, place)  # a symlink or a file in its place
        return None

    def prune(self) -> int:
        """Remove the least recently used records while the directory's blocks exceed
        the bound (down to KEEP_SHARE of it), and temporary files killed writers left;
        the bytes removed. Entries that are not ours are left alone."""
        entries: list[tuple[float, int, str, str]] = []
        now = time.time()
        for place in _names(self.fd):
            dir_fd = self._dir(place, create=False) if len(place) == 2 else None
            if dir_fd is None:
                continue
            try:
                for entry in _names(dir_fd):
                    try:
                        st = os.stat(entry, dir_fd=dir_fd, follow_symlinks=False)
                    except OSError:
                        continue
                    if entry.startswith(".") and now - st.st_mtime > STALE_TEMP:
                        _remove(dir_fd, entry)
                    else:
                        entries.append((st.st_mtime, st.st_blocks * 512, place, entry))
            finally:
                os.close(dir_fd)
        total = sum(size for _, size, _, _ in entries)
        removed = 0
        for _, size, place, entry in sorted(entries) if total > self.limit else ():
            if total - removed <= self.limit * KEEP_SHARE:
                break
            dir_fd = self._dir(place, create=False)
            if dir_fd is not None:
                _remove(dir_fd, entry)
                os.close(dir_fd)
            removed += size
        return removed


def _remove(dir_fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def _place(key: bytes) -> tuple[str, str]:
    text = key.hex()
    return text[:2], text[2:]


def _read(fd: int, size: int) -> bytes:
    chunks, left = [], size + 1  # one byte more: a file that grew is no record
    while left > 0 and (chunk := os.read(fd, left)):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _names(dir_fd: int) -> list[str]:
    """The names in the directory `dir_fd` is, [] when it cannot be read."""
    try:
        fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return []
    try:
        return os.listdir(fd)
    finally:
        os.close(fd)


def encode(key: bytes, found: Local) -> bytes | None:
    """A record's file: the frame (key, length, checksum) and the body: whether it is
    prose, its local names (their count and bytes: NUL-separated UTF-8), its header, the
    rest. None when a name holds a NUL (a heading could): such a record is not kept."""
    if any("\0" in name for name in found.names):
        return None
    names = "\0".join(found.names).encode("utf-8", "surrogateescape")
    body = b"".join([_COUNTS.pack(found.markdown, len(found.names), len(names)), found.head,
                     names, found.rest])
    return _FRAME.pack(MAGIC, key, len(body), _checksum(body)) + body


def decode(key: bytes, data: bytes) -> Local | None:
    """The record in `data`, a file filed under `key`; None unless it is whole and ours."""
    from chorus_tools.tools.warm.refs import HEAD, Local  # loaded by then: the index's
    if len(data) < _FRAME.size + _COUNTS.size + HEAD.size:
        return None
    magic, own, length, checksum = _FRAME.unpack_from(data)
    body = memoryview(data)[_FRAME.size:]
    if magic != MAGIC or own != key or length != len(body) or checksum != _checksum(body):
        return None
    markdown, count, size = _COUNTS.unpack_from(body)
    at = _FRAME.size + _COUNTS.size + HEAD.size
    if at + size > len(data):
        return None
    names = data[at:at + size].decode("utf-8", "surrogateescape").split("\0") if count else []
    if len(names) != count:
        return None
    return Local(names, data[at - HEAD.size:at], data[at + size:], markdown)


def _checksum(body: bytes | memoryview) -> bytes:
    return hashlib.blake2b(body, digest_size=16).digest()


class CacheError(Exception):
    """--index-cache cannot be used as given: the message says why (the start fails)."""


def open_cache(directory: str, limit: int, uid: int, gid: int) -> RecordCache:
    """The cache at `directory` (made, mode 0700, if missing) for the user the server
    serves as (`uid`, `gid`: --user's, handed the directory and its fan-out directories
    when started as root). It must be a directory that user owns and no one else may
    write: its records are trusted as parses."""
    shown = f"--index-cache {directory!r}"
    try:
        os.makedirs(directory, 0o700, exist_ok=True)
        fd = os.open(directory, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise CacheError(f"{shown}: {exc.strerror}") from None
    st = os.fstat(fd)
    if st.st_uid != uid and st.st_uid == os.geteuid():  # made by root for --user
        for place in [".", *(p for p in _names(fd) if len(p) == 2)]:
            try:
                os.chown(place, uid, gid, dir_fd=fd, follow_symlinks=False)
            except OSError:
                pass
        st = os.fstat(fd)
    if st.st_uid != uid or st.st_mode & 0o022:
        os.close(fd)
        raise CacheError(f"{shown} must be owned by uid {uid}, the user the server runs "
                         f"as, and writable by it alone (it is uid {st.st_uid}, mode "
                         f"{stat.S_IMODE(st.st_mode):o}): its records are trusted as "
                         "parses")
    return RecordCache(os.path.abspath(directory), fd, limit)
