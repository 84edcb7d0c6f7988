"""The history store (docs/protocol.md, History): what every mutation replaced, kept by the
dispatcher in a directory outside the workspace that no tool call can reach (workers have
no access to it at all: tools/confine/workers.py).

Layout of the directory:
- `packs/`: the content, appended to pack files, each found by its SHA-256 (an unchanged
  file costs nothing twice; rpc/dispatch/history_packs.py);
- `log.jsonl`: one line per change of a path (the content it held before, the method,
  the time, the path's version after) and one per checkpoint. A line's byte offset is its
  id: versions are `h-<offset>`, checkpoints `cp-<offset>`. Lines are appended under an
  exclusive flock, so servers sharing the directory never interleave or reuse an id;
- `spool/`: where the spool files workers stream large content into are made, and at
  once unlinked (tools/mutate/keep.py);
- `rewind.json`: the journal of a rewind in progress (rpc/dispatch/rewind.py).

The byte budget (`--history-bytes`) counts the packs: past it, the oldest are removed
first. Their log lines stay, so file.history still lists those versions and says they
were evicted.
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import os
import secrets
import time
from dataclasses import dataclass
from typing import Any

import orjson

from chorus_tools.rpc.dispatch.history_packs import Packs, Where
from chorus_tools.tools.timefmt import iso_utc

_PUNCH_HOLE = 0x01 | 0x02  # FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE
_libc = ctypes.CDLL(None, use_errno=True)
_libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]


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
        os.makedirs(os.path.join(directory, "spool"), mode=0o700, exist_ok=True)
        # every later access goes through these descriptors, so the directory stays
        # reachable after --user drops root (its path may lie beneath /root)
        self.dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self._packs = Packs(self.dir_fd, budget)
        self._log = os.open("log.jsonl", os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC,
                            0o600, dir_fd=self.dir_fd)
        self._spools: tuple[int, ...] = ()
        self._read_to = 0
        self._partial = b""
        self.entries: dict[int, Entry] = {}
        self.by_path: dict[str, list[int]] = {}
        self.checkpoints: dict[int, str] = {}
        self._where: dict[str, Where] = {}  # sha -> where its content is kept

    def spools(self, count: int) -> tuple[int, ...]:
        """`count` spool files for the workers, opened before they are forked. Each is
        unlinked at once: nothing to clean up after a crash, and servers sharing the
        directory never share a spool."""
        fds = []
        for _ in range(count):
            name = f"spool/{os.getpid()}-{secrets.token_hex(8)}"
            fds.append(os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
                               0o600, dir_fd=self.dir_fd))
            os.unlink(name, dir_fd=self.dir_fd)
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

    def _add(self, offset: int, line: dict[str, Any]) -> None:
        if "cp" in line:
            self.checkpoints[offset] = line["cp"]
            return
        entry = Entry(offset, line["t"], line["m"], line["p"], line["s"], line["b"],
                      line["mo"], line["a"], line.get("mv"))
        self.entries[offset] = entry
        self.by_path.setdefault(entry.path, []).append(offset)
        if line.get("at") is not None:
            self._where[entry.sha256] = tuple(line["at"])  # type: ignore[index]

    def _append(self, lines: list[dict[str, Any]]) -> int:
        """Append lines under the log's lock; the offset of the first."""
        fcntl.flock(self._log, fcntl.LOCK_EX)
        try:
            self.load()
            offset = self._read_to
            data = [orjson.dumps(line) + b"\n" for line in lines]
            os.write(self._log, b"".join(data))
            for line, raw in zip(lines, data):
                self._add(self._read_to, line)
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
            line = {"t": now, "m": method, "p": item["path"], "s": item["sha256"],
                    "b": item["bytes"], "mo": item["mode"], "a": item["after"]}
            if item["sha256"] is not None:
                line["at"] = await self._store(item)
            if item.get("moved_to") is not None:
                line["mv"] = item["moved_to"]
            lines.append(line)
        if lines:
            self._append(lines)
        self._packs.evict(self._dropped)

    def discard(self, kept: list[dict[str, Any]]) -> None:
        """A failed call's spooled content: nobody needs it."""
        for item in kept:
            if item.get("spool") is not None:
                self._punch(item)

    async def _store(self, item: dict[str, Any]) -> Where | None:
        where = self._where.get(item["sha256"])
        try:
            if self._packs.kept(where):
                return where
            if item["spool"] is None:
                return self._packs.put(item["data"])
            index, offset = item["spool"]
            return await self._packs.put_range(self._spools[index], offset, item["bytes"])
        finally:
            if item["spool"] is not None:
                self._punch(item)

    def _punch(self, item: dict[str, Any]) -> None:
        """Free the spool's blocks of a range already copied (the file keeps its size:
        the worker appends past it; the kernel frees the space)."""
        index, offset = item["spool"]
        _libc.fallocate(self._spools[index], _PUNCH_HOLE, offset, item["bytes"])

    def _dropped(self, pack: str) -> None:
        for sha in [s for s, w in self._where.items() if w[0] == pack]:
            del self._where[sha]

    # reading ------------------------------------------------------------------------

    def kept(self, sha: str | None) -> bool:
        return sha is not None and self._packs.kept(self._where.get(sha))

    def read(self, sha: str) -> bytes:
        return self._packs.read(self._where[sha])

    def stored(self) -> int:
        """Bytes of content kept (what the budget counts)."""
        return self._packs.stored()

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
        self._packs.close()
        for fd in (self._log, self.dir_fd, *self._spools):
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


