"""The history store (SPEC §10): what every mutation replaced, kept by the dispatcher in a
directory outside the workspace that no tool call can reach (workers have no access to it
at all: tools/confine/workers.py).

Layout of the directory:
- `objects/<sha256>`: content, one file per distinct content (an unchanged file costs
  nothing twice);
- `log.jsonl`: one line per change of a path (the content it held before, the method,
  the time, the path's version after) and one per checkpoint. A line's byte offset is its
  id: versions are `h-<offset>`, checkpoints `cp-<offset>`. Lines are appended under an
  exclusive flock, so servers sharing the directory never interleave or reuse an id;
- `spool/<n>`: where workers stream large content (tools/mutate/keep.py);
- `rewind.json`: the journal of a rewind in progress (rpc/dispatch/rewind.py).

The byte budget (`--history-bytes`) counts the objects: past it, the least recently kept
are removed first. Their log lines stay, so file.history still lists those versions and
says they were evicted.
"""

from __future__ import annotations

import asyncio
import ctypes
import fcntl
import hashlib
import os
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import orjson

from chorus_tools.tools.timefmt import iso_utc

_PUNCH_HOLE = 0x01 | 0x02  # FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE
_libc = ctypes.CDLL(None, use_errno=True)
_libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
_COPY_CHUNK = 1 << 30


def default_directory(workspace: str) -> str:
    """The user's state directory, one subdirectory per workspace (its resolved path's
    hash), as XDG asks: $XDG_STATE_HOME, else ~/.local/state."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state")
    key = hashlib.sha256(os.fsencode(os.path.realpath(workspace))).hexdigest()[:16]
    return os.path.join(base, "chorus-tools", "history", key)


@dataclass
class Entry:
    """One change of a path: what it held before (`sha256` None: no file)."""

    id: int
    time: int
    method: str
    path: str
    sha256: str | None
    size: int
    mode: int
    after: str | None  # the path's version once the change was made (None: no file)
    moved_to: str | None = None


class History:
    def __init__(self, directory: str, budget: int) -> None:
        os.makedirs(os.path.join(directory, "objects"), mode=0o700, exist_ok=True)
        os.makedirs(os.path.join(directory, "spool"), mode=0o700, exist_ok=True)
        self._budget = budget
        # every later access goes through these descriptors, so the directory stays
        # reachable after --user drops root (its path may lie beneath /root)
        self.dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self._objects = os.open("objects", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC,
                                dir_fd=self.dir_fd)
        self._log = os.open("log.jsonl", os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC,
                            0o600, dir_fd=self.dir_fd)
        self._spools: tuple[int, ...] = ()
        self._read_to = 0
        self._partial = b""
        self.entries: dict[int, Entry] = {}
        self.by_path: dict[str, list[int]] = {}
        self.checkpoints: dict[int, str] = {}
        self._kept: OrderedDict[str, int] = OrderedDict()  # sha -> size, oldest first
        self._total = 0

    def spools(self, count: int) -> tuple[int, ...]:
        """`count` empty spool files for the workers, opened before they are forked."""
        fds = []
        for n in range(count):
            fd = os.open(f"spool/{n}", os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC,
                         0o600, dir_fd=self.dir_fd)
            fds.append(fd)
        self._spools = tuple(fds)
        return self._spools

    # the log ------------------------------------------------------------------------

    def load(self) -> None:
        """Read what the log holds beyond what was read (another server's lines too)."""
        size = os.fstat(self._log).st_size
        if size <= self._read_to:
            return
        data = self._partial + os.pread(self._log, size - self._read_to, self._read_to)
        at = self._read_to - len(self._partial)
        end = data.rfind(b"\n") + 1
        for line in data[:end].splitlines(keepends=True):
            self._add(at, orjson.loads(line))
            at += len(line)
        self._partial = data[end:]
        self._read_to = size
        for sha in [sha for sha, n in self._kept.items() if n < 0]:
            try:
                self._kept[sha] = os.stat(sha, dir_fd=self._objects).st_size
                self._total += self._kept[sha]
            except FileNotFoundError:
                del self._kept[sha]

    def _add(self, offset: int, line: dict[str, Any], ours: bool = False) -> None:
        if "cp" in line:
            self.checkpoints[offset] = line["cp"]
            return
        entry = Entry(offset, line["t"], line["m"], line["p"], line["s"], line["b"],
                      line["mo"], line["a"], line.get("mv"))
        self.entries[offset] = entry
        self.by_path.setdefault(entry.path, []).append(offset)
        if entry.sha256 is not None and not ours:  # its size is looked up once the lines are read
            self._kept.setdefault(entry.sha256, -1)
            self._kept.move_to_end(entry.sha256)

    def _append(self, lines: list[dict[str, Any]]) -> int:
        """Append lines under the log's lock; the offset of the first."""
        fcntl.flock(self._log, fcntl.LOCK_EX)
        try:
            self.load()
            offset = self._read_to
            data = [orjson.dumps(line) + b"\n" for line in lines]
            os.write(self._log, b"".join(data))
            for line, raw in zip(lines, data):
                self._add(self._read_to, line, ours=True)  # its content is stored already
                self._read_to += len(raw)
            return offset
        finally:
            fcntl.flock(self._log, fcntl.LOCK_UN)

    def checkpoint(self, label: str) -> int:
        return self._append([{"t": time.time_ns(), "cp": label}])

    # keeping content ----------------------------------------------------------------

    async def keep(self, method: str, kept: list[dict[str, Any]]) -> None:
        """Store what one call replaced and log each change, before it is answered."""
        self.load()
        now = time.time_ns()
        lines = []
        for item in kept:
            sha = item["sha256"]
            if sha is not None:
                await self._store(item)
            line = {"t": now, "m": method, "p": item["path"], "s": sha, "b": item["bytes"],
                    "mo": item["mode"], "a": item["after"]}
            if item.get("moved_to") is not None:
                line["mv"] = item["moved_to"]
            lines.append(line)
        if lines:
            self._append(lines)
        self._evict()

    def discard(self, kept: list[dict[str, Any]]) -> None:
        """A failed call's spooled content: nobody needs it."""
        for item in kept:
            if item.get("spool") is not None:
                self._punch(item)

    async def _store(self, item: dict[str, Any]) -> None:
        sha, size = item["sha256"], item["bytes"]
        if sha in self._kept:
            self._kept.move_to_end(sha)
            if item["spool"] is not None:
                self._punch(item)
            return
        if size > self._budget:  # can never fit: logged, listed as evicted
            if item["spool"] is not None:
                self._punch(item)
            return
        if item["spool"] is not None:
            await asyncio.to_thread(self._write_spooled, item)
        else:
            self._write_object(sha, lambda fd: _write_all(fd, item["data"]))
        self._kept[sha] = size
        self._total += size

    def _write_spooled(self, item: dict[str, Any]) -> None:
        index, offset = item["spool"]
        spool = self._spools[index]

        def copy(fd: int) -> None:
            done = 0
            while done < item["bytes"]:
                n = os.copy_file_range(spool, fd, min(_COPY_CHUNK, item["bytes"] - done),
                                       offset + done)
                if n == 0:
                    raise OSError("the spool ended early")
                done += n
        try:
            self._write_object(item["sha256"], copy)
        finally:
            self._punch(item)

    def _write_object(self, sha: str, fill: Any) -> None:
        tmp = f"tmp-{secrets.token_hex(8)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600,
                     dir_fd=self._objects)
        try:
            try:
                fill(fd)
            finally:
                os.close(fd)
            os.rename(tmp, sha, src_dir_fd=self._objects, dst_dir_fd=self._objects)
        except BaseException:
            os.unlink(tmp, dir_fd=self._objects)
            raise

    def _punch(self, item: dict[str, Any]) -> None:
        """Free the spool's blocks of a range already copied (the file keeps its size:
        the worker appends past it; the kernel frees the space)."""
        index, offset = item["spool"]
        _libc.fallocate(self._spools[index], _PUNCH_HOLE, offset, item["bytes"])

    def _evict(self) -> None:
        while self._total > self._budget and self._kept:
            sha, size = self._kept.popitem(last=False)
            self._total -= size
            try:
                os.unlink(sha, dir_fd=self._objects)
            except FileNotFoundError:
                pass

    # reading ------------------------------------------------------------------------

    def kept(self, sha: str | None) -> bool:
        return sha is not None and self._kept.get(sha, -1) >= 0

    def read(self, sha: str) -> bytes:
        fd = os.open(sha, os.O_RDONLY | os.O_CLOEXEC, dir_fd=self._objects)
        try:
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def versions(self, path: str, limit: int) -> dict[str, Any]:
        """file.history's answer: the path's past contents, newest first."""
        self.load()
        ids = self.by_path.get(path, [])
        out = []
        for offset in reversed(ids[-limit:] if limit else []):
            e = self.entries[offset]
            item: dict[str, Any] = {"version": version_id(offset), "time": iso_utc(e.time),
                                    "method": e.method, "bytes": e.size, "sha256": e.sha256,
                                    "exists": e.sha256 is not None,
                                    "evicted": e.sha256 is not None and not self.kept(e.sha256)}
            if e.moved_to is not None:
                item["moved_to"] = e.moved_to
            out.append(item)
        evicted = sum(1 for o in ids if self.entries[o].sha256 is not None
                      and not self.kept(self.entries[o].sha256))
        return {"versions": out, "total": len(ids), "truncated": len(ids) > limit,
                "evicted": evicted}

    def close(self) -> None:
        for fd in (self._objects, self._log, self.dir_fd, *self._spools):
            os.close(fd)


def give_history(directory: str, user: Any) -> None:
    """Hand the history directory to the user a root server drops to (--user)."""
    for top, dirs, files in os.walk(directory):
        for name in [top, *(os.path.join(top, n) for n in dirs + files)]:
            os.chown(name, user.pw_uid, user.pw_gid, follow_symlinks=False)


def version_id(offset: int) -> str:
    return f"h-{offset:x}"


def checkpoint_id(offset: int) -> str:
    return f"cp-{offset:x}"


def parse_id(text: str, prefix: str) -> int | None:
    if not text.startswith(prefix):
        return None
    try:
        return int(text[len(prefix):], 16)
    except ValueError:
        return None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
