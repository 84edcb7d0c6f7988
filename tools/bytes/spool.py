"""Spools: bytes arriving in parts, kept beneath the workspace's reserved temp prefix until
they are whole, then landed at their path by the one write path in a single rename.

The contract (uploads in parts and HTTP bodies both use it):
- `Spool.begin` makes a directory `.chorus-tmp-upload-<id>` at the workspace root holding
  `data` (the bytes, written where each part says) and `meta.json` (what the upload is for
  and which ranges arrived). The reserved prefix keeps it out of every listing, search,
  watch and archive; it lives on the workspace's file system, so landing it is a rename,
  and its bytes count as the workspace's.
- Any worker may take the next call: the state is on disk, and every call on a spool holds
  an exclusive `flock` on its directory, so parts sent at once cannot lose each other.
- A spool untouched for `--upload-timeout` is expired: removed by the next spool call of
  any upload (its bytes booked as freed in the quota's account, as an abort's), and its
  id answers `upload_not_found` from then on, like an id that is unknown, committed or
  aborted. An archive import's spool with a landing journal (its commit killed midway) is
  rolled back first (tools/bytes/landing.py); at start, every such spool is.
- Memory follows one part, never the file: parts are written with pwrite, a part that
  overlaps earlier bytes is compared in place.
- The digest runs as the parts arrive: the SHA-256 of the prefix received without a hole
  is carried on by each part that extends it (from the part's own bytes, and from the
  spool for the parts that came early and it now joins), its state saved in meta.json
  (tools/bytes/running.py), so any worker, or one started since, carries it on. The
  commit reads only what the running digest has not seen: nothing when the parts came in
  order, the bytes after the first hole otherwise (or, without libcrypto, all of them).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import secrets
import stat
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Iterator

from chorus_tools.tools.bytes import landing, running
from chorus_tools.tools.bytes.direct import Staging, pwrite_all
from chorus_tools.tools.bytes.payload import verify
from chorus_tools.tools.confine.sandbox import ROOT
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError, from_os_error
from chorus_tools.tools.mutate.atomic import Spooled
from chorus_tools.tools.confine.reserved import TEMP_PREFIX
from chorus_tools.tools.mutate.quota import charge

SPOOL_PREFIX = TEMP_PREFIX + "upload-"
_ID = re.compile(r"[0-9a-f]{32}")
DATA, META = "data", "meta.json"
_CHUNK = 1 << 20
DIRECT_MIN = 4 << 20  # a part this long is written past the page cache (tools/bytes/direct.py)
_STAGING = Staging()  # this process's aligned buffer for those parts
_HASHER: ThreadPoolExecutor | None = None


@dataclass
class Meta:
    """What a spool is for, and which byte ranges [start, end) have arrived."""

    path: str
    size: int | None = None
    sha256: str | None = None
    overwrite: bool = True
    expected_version: str | None = None
    ranges: list[list[int]] = field(default_factory=list)
    # the SHA-256 of the data as the server process wrote it through a handed descriptor
    # (tools/bytes/handoff.py), so the commit need not read it all again; any part
    # written since forgets it
    written_sha256: str | None = None
    # [version, SHA-256] of the file the upload replaces, known to the server process
    # that landed it (rpc/dispatch/landed.py): the commit need not hash it again
    replaces: list[str] | None = None
    # the running digest (tools/bytes/running.py): bytes [0, hashed) are hashed into
    # this saved state, as hex (None: nothing hashed yet)
    hashed: int = 0
    hash_state: str | None = None
    # an archive to extract into `path` (archive.import_begin), not a file to land there:
    # each commit takes only its own kind
    archive: bool = False

    @property
    def received(self) -> int:
        return sum(end - start for start, end in self.ranges)

    def missing(self) -> list[list[int]]:
        """The holes before the announced size (or before the last byte received)."""
        end_of_file = self.size if self.size is not None else (
            self.ranges[-1][1] if self.ranges else 0)
        holes, at = [], 0
        for start, end in self.ranges:
            if start > at:
                holes.append([at, start])
            at = max(at, end)
        if at < end_of_file:
            holes.append([at, end_of_file])
        return holes

    def add(self, start: int, end: int) -> None:
        merged: list[list[int]] = []
        for lo, hi in sorted([*self.ranges, [start, end]]):
            if merged and lo <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], hi)
            else:
                merged.append([lo, hi])
        self.ranges = merged

    def overlaps(self, start: int, end: int) -> Iterator[tuple[int, int]]:
        for lo, hi in self.ranges:
            if lo < end and start < hi:
                yield max(lo, start), min(hi, end)


# the furthest byte a file can have: off_t is signed 64 bits, and pwrite takes no offset
# past it (Python's OverflowError, not an OSError)
MAX_FILE_END = 2 ** 63 - 1


def reachable(end: int, path: str) -> None:
    """file_too_large for an end no file can reach, as the file system's own EFBIG is
    (tools/errors.py), before a quota or a pwrite is asked about the number."""
    if end > MAX_FILE_END:
        raise ToolError("file_too_large", f"{path}: byte {end} lies past the end any file "
                        f"can have ({MAX_FILE_END}): fix 'offset' or 'size'.", path=path,
                        size=end, limit=MAX_FILE_END)


def not_found(upload_id: str) -> ToolError:
    return ToolError("upload_not_found", f"No upload has the id {upload_id!r}: it is "
                     "unknown, already committed or aborted, or expired after "
                     "--upload-timeout untouched. Start again with file.upload_begin.",
                     upload_id=upload_id)


class Spool:
    """One spool, open and locked for the length of a `with` block."""

    def __init__(self, ctx: ToolContext, upload_id: str, dir_fd: int) -> None:
        self.ctx = ctx
        self.upload_id = upload_id
        self.dir_fd = dir_fd
        self.meta = Meta(**json.loads(_read_small(dir_fd, META)))

    @classmethod
    def begin(cls, ctx: ToolContext, meta: Meta) -> str:
        """A new, empty spool for `meta`: its id."""
        expire(ctx)
        upload_id = secrets.token_hex(16)
        root_fd = root_fd_of(ctx)
        try:
            os.mkdir(SPOOL_PREFIX + upload_id, 0o700, dir_fd=root_fd)
            dir_fd = os.open(SPOOL_PREFIX + upload_id, os.O_RDONLY | os.O_DIRECTORY
                             | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=root_fd)
            try:
                os.close(os.open(DATA, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                                 | os.O_CLOEXEC, 0o666, dir_fd=dir_fd))
                _write_meta(dir_fd, meta)
            finally:
                os.close(dir_fd)
        except OSError as exc:
            _remove(root_fd, upload_id)
            raise from_os_error(exc, meta.path, "write_failed") from None
        finally:
            os.close(root_fd)
        return upload_id

    @classmethod
    def open(cls, ctx: ToolContext, upload_id: str) -> "Spool":
        """The spool of `upload_id`, locked; upload_not_found for any id that has none."""
        if not isinstance(upload_id, str) or not _ID.fullmatch(upload_id):
            raise not_found(str(upload_id))
        expire(ctx)
        root_fd = ctx.ws.open_dir(ROOT)
        try:
            dir_fd = os.open(SPOOL_PREFIX + upload_id, os.O_RDONLY | os.O_DIRECTORY
                             | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=root_fd)
        except OSError:
            raise not_found(upload_id) from None
        finally:
            os.close(root_fd)
        fcntl.flock(dir_fd, fcntl.LOCK_EX)
        try:
            return cls(ctx, upload_id, dir_fd)
        except (OSError, ValueError, TypeError):  # removed while we waited for the lock
            os.close(dir_fd)
            raise not_found(upload_id) from None

    def committed_as(self, archive: bool) -> None:
        """invalid_params when the commit called is not the one of this upload's kind: a
        file upload extracted as an archive, an archive landed as a file at its directory's
        path; nothing changes, and the right commit still can."""
        if self.meta.archive != archive:
            began, commit = (("archive.import_begin", "archive.import_commit")
                             if self.meta.archive else
                             ("file.upload_begin", "file.upload_commit"))
            raise ToolError("invalid_params", f"Upload {self.upload_id} was begun by {began} "
                            f"for {self.meta.path}: commit it with {commit}.",
                            param="upload_id", upload_id=self.upload_id)

    def __enter__(self) -> "Spool":
        return self

    def __exit__(self, *_: object) -> None:
        os.close(self.dir_fd)

    def write_part(self, offset: int, data: bytes) -> int:
        """Put `data` at `offset`; bytes already there must be the same. Returns the bytes
        received so far."""
        end = offset + len(data)
        meta = self.meta
        self._within(end)
        fd = self._open_data(os.O_RDWR)
        try:
            for lo, hi in meta.overlaps(offset, end):
                if os.pread(fd, hi - lo, lo) != data[lo - offset:hi - offset]:
                    raise ToolError("invalid_params", f"The part at {offset} overlaps bytes "
                                    f"{lo}-{hi} already received for {meta.path} with other "
                                    "bytes. Resend a part only with the same bytes, or abort "
                                    "the upload.", param="data", overlap=[lo, hi])
            if self.ctx.room is not None:  # parts count against the quota as they arrive
                charge(self.ctx, max(0, end - os.fstat(fd).st_size), 0, meta.path)
            if data:
                meta.add(offset, end)
                meta.written_sha256 = None
                self._write_hashed(fd, offset, data)
        except OSError as exc:
            raise from_os_error(exc, meta.path, "write_failed") from None
        finally:
            os.close(fd)
        self._save()
        return meta.received

    def _write_hashed(self, fd: int, offset: int, data: bytes) -> None:
        """`data` written at `offset` (already counted as received) and carried into the
        running digest; a part of DIRECT_MIN bytes or more is written past the page cache
        while a thread hashes it (`_hashing`), through a descriptor of its own: O_DIRECT
        belongs to the open file, and the hash may read earlier parts through `fd`."""
        if len(data) < DIRECT_MIN:
            pwrite_all(fd, memoryview(data), offset)
            self._hash_on(fd, offset, data)
            return
        hashing = _hashing().submit(self._hash_on, fd, offset, data)
        try:
            direct = self._open_data(os.O_WRONLY)
            try:
                _STAGING.write(direct, data, offset)
            finally:
                os.close(direct)
        finally:
            hashing.result()

    def _hash_on(self, fd: int, offset: int, data: bytes) -> None:
        """Carry the running digest to the end of the prefix received without a hole:
        through `data` (just written at `offset`) where the prefix reaches it, and through
        the spool's bytes for the parts that arrived before their turn."""
        meta = self.meta
        prefix = meta.ranges[0][1] if meta.ranges[0][0] == 0 else 0
        if not running.AVAILABLE or prefix <= meta.hashed:
            return
        state = bytes.fromhex(meta.hash_state) if meta.hash_state else running.fresh()
        at = meta.hashed
        while at < prefix:
            if offset <= at < offset + len(data):  # the prefix holds the whole part
                chunk = data if at == offset else data[at - offset:]
            else:
                chunk = os.pread(fd, min(_CHUNK, prefix - at, *(
                    [offset - at] if at < offset else [])), at)
                if not chunk:
                    break
            state = running.update(state, chunk)
            at += len(chunk)
        meta.hashed, meta.hash_state = at, state.hex()

    def reserve(self, size: int, written_sha256: str | None = None) -> int:
        """The data file made `size` bytes long (grown sparse, or cut to what arrived),
        its growth charged to the quota now, every byte before `size` counted as received;
        the file open for writing. A PUT streamed by the server process
        (tools/bytes/handoff.py) writes those bytes through it, then commits."""
        meta = self.meta
        self._within(size)
        fd = self._open_data(os.O_WRONLY)
        try:
            if self.ctx.room is not None:
                grown = size - os.fstat(fd).st_size
                charge(self.ctx, grown, 0, meta.path, lasting=grown < 0)
            os.ftruncate(fd, size)
        except BaseException as exc:
            os.close(fd)
            if isinstance(exc, OSError):
                raise from_os_error(exc, meta.path, "write_failed") from None
            raise
        meta.ranges = [[0, size]] if size else []
        meta.written_sha256 = written_sha256
        meta.hashed, meta.hash_state = 0, None  # its bytes come through the descriptor
        self._save()
        return fd

    def _within(self, end: int) -> None:
        meta = self.meta
        reachable(end, meta.path)
        if meta.size is not None and end > meta.size:
            raise ToolError("invalid_params", f"The part ends at byte {end}, past the "
                            f"{meta.size} bytes announced for {meta.path}: fix 'offset', or "
                            "begin a new upload with the right size.", param="offset",
                            size=meta.size)

    def whole(self) -> Spooled:
        """The spool as content ready to land, once every byte arrived and the announced
        size and digest hold (verification_failed otherwise)."""
        meta = self.meta
        holes = meta.missing()
        fd = self._open_data(os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
            digest = meta.written_sha256 or _digest(fd, meta)
        finally:
            os.close(fd)
        if holes:
            raise ToolError("verification_failed", f"{meta.path}: bytes {holes[0][0]}-"
                            f"{holes[0][1]} never arrived ({len(holes)} range(s) missing); "
                            "nothing was written. Send those parts, then commit again.",
                            path=meta.path, expected={"size": meta.size},
                            actual={"received": meta.received}, missing=holes[:20])
        verify(meta.path, expected_sha256=meta.sha256, actual_sha256=digest,
               expected_size=meta.size, actual_size=size)
        return Spooled(self.dir_fd, DATA, size, digest)

    def release(self) -> None:
        """Let go of the parts once they are read (an archive whose entries were copied
        out): their bytes leave the disk and the quota's account now, so an import is
        charged what it lands, not that plus the archive it came in."""
        fd = self._open_data(os.O_WRONLY)
        try:
            size = os.fstat(fd).st_size
            os.ftruncate(fd, 0)
        except OSError as exc:
            raise from_os_error(exc, self.meta.path, "write_failed") from None
        finally:
            os.close(fd)
        if self.ctx.room is not None:
            charge(self.ctx, -size, 0, self.meta.path, lasting=True)

    def discard(self) -> None:
        """Remove the spool; what is left of its bytes (all of them for an abort, none once
        committed: they moved to the file) leaves the quota's account. An archive import
        it holds the journal of, never landed whole, is rolled back first (an abort after
        a killed commit: tools/bytes/landing.py)."""
        landing.undo(self.ctx, self.dir_fd)
        if self.ctx.room is not None:
            charge(self.ctx, -_data_size(self.dir_fd), 0, self.meta.path, lasting=True)
        root_fd = root_fd_of(self.ctx)
        try:
            _empty_and_remove(root_fd, self.upload_id, self.dir_fd)
        finally:
            os.close(root_fd)

    def _open_data(self, flags: int) -> int:
        try:
            return os.open(DATA, flags | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self.dir_fd)
        except OSError:
            raise not_found(self.upload_id) from None

    def _save(self) -> None:
        try:
            _write_meta(self.dir_fd, self.meta)
        except OSError as exc:
            raise from_os_error(exc, self.meta.path, "write_failed") from None


def _hashing() -> ThreadPoolExecutor:
    """The thread a big part is hashed in while the caller writes it: SHA-256 through
    ctypes (tools/bytes/running.py) and pwrite both let go of the GIL, so on two CPUs
    the part costs the longer of the two, not their sum (docs/benchmarks.md,
    upload_parts). One thread per process, started by its first big part."""
    global _HASHER
    if _HASHER is None:
        _HASHER = ThreadPoolExecutor(1, "part-sha256")
    return _HASHER


def root_fd_of(ctx: ToolContext) -> int:
    return ctx.ws.open_dir(ROOT)


def expire(ctx: ToolContext, now: float | None = None) -> int:
    """Remove every spool untouched for --upload-timeout whose lock is free; how many."""
    timeout = ctx.limits.upload_timeout
    now = time.time() if now is None else now
    return _sweep(ctx, lambda root_fd, name: _idle_since(root_fd, name) < now - timeout)


def expire_idle(ctx: ToolContext) -> dict[str, int]:
    """The server's own sweep, run on a timer (rpc/dispatch/upload_expiry.py): an upload
    untouched for --upload-timeout is removed on time, not only when the next upload call
    comes. Its bytes leave the quota's account (this runs as a change, with its room)."""
    return {"removed": expire(ctx)}


def recover(ctx: ToolContext, before: float) -> dict[str, int]:
    """At start (the server runs it in the background): every spool an archive import's
    commit left with its landing journal, killed with the server midway, is rolled back
    (tools/bytes/landing.py) and removed. A spool whose lock is held is a commit running
    now, never one killed; nor is one touched since `before`, the server's start: this
    server's own killed commits are its invoker's to recover (a sweep that ran late, on a
    loaded machine, rolled one back first, and the invoker's answer lost `rolled_back`).
    Not under --read-only: that server changes nothing."""
    if ctx.read_only:
        return {"removed": 0}
    return {"removed": _sweep(ctx, lambda root_fd, name: _idle_since(root_fd, name) < before
                              and bool(landing.state(root_fd, name)))}


def _sweep(ctx: ToolContext, take: Callable[[int, str], bool]) -> int:
    """Remove the spools `take(root_fd, name)` chooses whose lock is free; how many."""
    root_fd = root_fd_of(ctx)
    removed = 0
    try:
        for name in os.listdir(root_fd):
            upload_id = name[len(SPOOL_PREFIX):]
            if name.startswith(SPOOL_PREFIX) and _ID.fullmatch(upload_id) and \
                    take(root_fd, name):
                removed += _remove(root_fd, upload_id, wait=False, ctx=ctx)
    finally:
        os.close(root_fd)
    return removed


def _idle_since(root_fd: int, name: str) -> float:
    """When a spool was last touched: its meta saved, or its data written (a streamed PUT
    writes the data through a descriptor for as long as its body takes)."""
    try:
        touched = os.stat(f"{name}/{META}", dir_fd=root_fd, follow_symlinks=False).st_mtime
    except OSError:
        return 0.0  # a spool without its meta was never finished: it may go
    try:
        return max(touched, os.stat(f"{name}/{DATA}", dir_fd=root_fd,
                                    follow_symlinks=False).st_mtime)
    except OSError:
        return touched


def _remove(root_fd: int, upload_id: str, wait: bool = True,
            ctx: ToolContext | None = None) -> int:
    """Remove a spool's directory, under its lock (not waiting for it unless `wait`).
    With the call's `ctx`: an import killed midway is rolled back first, and the bytes
    its parts were charged leave the quota's account as an abort's do."""
    try:
        dir_fd = os.open(SPOOL_PREFIX + upload_id, os.O_RDONLY | os.O_DIRECTORY
                         | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=root_fd)
    except OSError:
        return 0
    try:
        fcntl.flock(dir_fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        freed = 0
        if ctx is not None:
            landing.undo(ctx, dir_fd)
            freed = _data_size(dir_fd)
        removed = _empty_and_remove(root_fd, upload_id, dir_fd)
        if ctx is not None and removed:
            charge(ctx, -freed, 0, SPOOL_PREFIX + upload_id, lasting=True)
        return removed
    except (OSError, ToolError):
        return 0  # in use (another call holds it), already gone, or not rolled back yet
    finally:
        os.close(dir_fd)


def _data_size(dir_fd: int) -> int:
    """The bytes of a spool's parts: what they were charged against the quota."""
    try:
        return os.stat(DATA, dir_fd=dir_fd, follow_symlinks=False).st_size
    except OSError:
        return 0


def _empty_and_remove(root_fd: int, upload_id: str, dir_fd: int) -> int:
    """Remove the spool whose directory `dir_fd` we hold locked."""
    try:
        for entry in os.listdir(dir_fd):
            st = os.stat(entry, dir_fd=dir_fd, follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode):
                os.unlink(entry, dir_fd=dir_fd)
        os.rmdir(SPOOL_PREFIX + upload_id, dir_fd=root_fd)
        return 1
    except OSError:
        return 0


def _digest(fd: int, meta: Meta) -> str:
    """The spool's SHA-256: the running digest carried over what it has not seen yet."""
    if not running.AVAILABLE:
        h = hashlib.sha256()
        offset = 0
        while chunk := os.pread(fd, _CHUNK, offset):
            h.update(chunk)
            offset += len(chunk)
        return h.hexdigest()
    state = bytes.fromhex(meta.hash_state) if meta.hash_state else running.fresh()
    offset = meta.hashed if meta.hash_state else 0
    while chunk := os.pread(fd, _CHUNK, offset):
        state = running.update(state, chunk)
        offset += len(chunk)
    return running.hexdigest(state)


def _read_small(dir_fd: int, name: str) -> bytes:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        return os.read(fd, 1 << 20)
    finally:
        os.close(fd)


def _write_meta(dir_fd: int, meta: Meta) -> None:
    """meta.json replaced whole (a new file and a rename): a reader never sees half."""
    body = json.dumps(meta.__dict__).encode()
    fd = os.open(META + ".new", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
                 | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    try:
        os.write(fd, body)
    finally:
        os.close(fd)
    os.rename(META + ".new", META, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)

