"""The history store (docs/protocol.md, History): what every mutation replaced, kept by the
dispatcher in a directory outside the workspace that no tool call can reach (workers have
no access to it at all: tools/confine/workers.py), or in memory where no such directory
exists (rpc/dispatch/history_folder.py).

Layout of the directory:
- `packs/`: the content, appended to pack files, each found by its SHA-256 (an unchanged
  file costs nothing twice; rpc/dispatch/history_packs.py);
- `log.jsonl`: one line per change of a path (the content it held before, the method,
  the time, the path's version after, where the content is kept) and one per checkpoint.
  A line's byte offset is its id: versions are `h-<offset>`, checkpoints `cp-<offset>`.
  Lines are appended under an exclusive flock, so servers sharing the directory never
  interleave or reuse an id. The lines stay on disk: memory holds only where each change's
  line is (rpc/dispatch/history_index.py, a few tens of bytes a change) and the
  checkpoints, and a call reads back the lines it needs by offset;
- `spool/`: where the spool files workers stream large content into are made, and at
  once unlinked (tools/mutate/keep.py);
- `rewind.json`: the journal of a rewind in progress (rpc/dispatch/rewind.py);
- `workspace`: the workspace's path, so a later server can drop the history of a
  workspace that no longer exists (rpc/dispatch/history_home.py). Every server using the
  directory holds a shared flock on it for its life (DiskFolder.held): a directory in use
  is never dropped.

A full disk never loses a change's old content: the worker reserved room for it on the
history's disk before making the change (tools/mutate/reserve.py), and that room is
released here as the content and its log line are written (rpc/dispatch/history_room.py).

The byte budget (`--history-bytes`) counts the packs: past it, the oldest are removed
first. Their log lines stay, so file.history still lists those versions and says they
were evicted.
"""

from __future__ import annotations

import fcntl
import logging
import os
import secrets
import time
from collections.abc import Iterator
from typing import Any

import orjson

from chorus_tools.rpc.dispatch.history_folder import DiskFolder, Folder, MemoryFolder
from chorus_tools.rpc.dispatch.history_index import Entry, LogIndex
from chorus_tools.rpc.dispatch.history_packs import Packs, Where
from chorus_tools.rpc.dispatch.history_room import (Lost, Room, append_line, copy_in,
                                                    errno_name, logged_path, path_field)
from chorus_tools.tools.timefmt import iso_utc

log = logging.getLogger("chorus.history")
_LOAD_CHUNK = 1 << 20  # a long log is read at start a chunk at a time


class History:
    def __init__(self, directory: str | None, budget: int) -> None:
        """`directory` None: in memory, for this process only."""
        self.folder: Folder = MemoryFolder() if directory is None else DiskFolder.held(directory)
        self.directory = directory
        self.budget = budget
        self._spool_dir = self.folder.sub("spool")
        self._packs = Packs(self.folder, budget)
        self._log = self.folder.open("log.jsonl", os.O_RDWR | os.O_CREAT)
        self._spools: tuple[int, ...] = ()
        self._read_to = 0
        self._partial = b""
        self._index = LogIndex(self._log)
        self.checkpoints: dict[int, str] = {}
        self.checkpoint_times: dict[int, int] = {}

    def spools(self, count: int) -> tuple[int, ...]:
        """`count` spool files for the workers, opened before they are forked. Each is
        unlinked at once: nothing to clean up after a crash, and servers sharing the
        directory never share a spool."""
        fds = []
        for _ in range(count):
            name = f"{os.getpid()}-{secrets.token_hex(8)}"
            fds.append(self._spool_dir.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL))
            self._spool_dir.unlink(name)
        self._spools = tuple(fds)
        return self._spools

    def ready(self) -> None:
        """Before a change: the pack its old content goes to exists and is open (OSError
        when the history's directory cannot take it)."""
        self._packs.ready()

    # the log ------------------------------------------------------------------------

    def load(self) -> None:
        """Read what the log holds beyond what was read (another server's lines too)."""
        size = os.fstat(self._log).st_size
        while self._read_to < size:
            chunk = os.pread(self._log, min(size - self._read_to, _LOAD_CHUNK), self._read_to)
            if not chunk:
                return
            data = self._partial + chunk
            at = self._read_to - len(self._partial)
            end = data.rfind(b"\n") + 1
            for line in data[:end].splitlines(keepends=True):
                self._add(at, orjson.loads(line))
                at += len(line)
            self._partial = data[end:]
            self._read_to += len(chunk)

    def _add(self, offset: int, line: dict[str, Any]) -> None:
        if "cp" in line:
            self.checkpoints[offset] = line["cp"]
            self.checkpoint_times[offset] = line["t"]
            return
        self._index.add(offset, logged_path(line, "p"), line["s"],
                        line.get("at") is not None)

    def _append(self, lines: list[dict[str, Any]], room: Room | None = None) -> int:
        """Append lines under the log's lock; the offset of the first."""
        data = [orjson.dumps(line) + b"\n" for line in lines]
        fcntl.flock(self._log, fcntl.LOCK_EX)
        try:
            self.load()
            offset = self._read_to
            append_line(self._log, offset, b"".join(data), room)
            for line, raw in zip(lines, data):
                self._add(self._read_to, line)
                self._read_to += len(raw)
            return offset
        finally:
            fcntl.flock(self._log, fcntl.LOCK_UN)

    def checkpoint(self, label: str) -> int:
        return self._append([{"t": time.time_ns(), "cp": label}])

    # keeping content ----------------------------------------------------------------

    async def keep(self, method: str, kept: list[dict[str, Any]],
                   reserved: list[tuple[int, int, int]] | None = None) -> list[Lost]:
        """Store what one call replaced and log each change, before it is answered; the
        room the worker reserved is released as it is used. Returns the changes whose
        old content could not be kept after all (the reply says so)."""
        room = Room(self._spools, reserved or [])
        try:
            self.load()
            now = time.time_ns()
            lines, lost = [], []
            for item in kept:
                line = {"t": now, "m": method, "s": item["sha256"], "b": item["bytes"],
                        "mo": item["mode"], "a": item["after"],
                        **path_field("p", item["path"])}
                if item.get("unkept"):
                    lost.append(Lost(item["path"], item["unkept"]))
                elif item["sha256"] is not None:
                    try:
                        line["at"] = await self._store(item, room)
                    except OSError as exc:
                        lost.append(Lost(item["path"], errno_name(exc)))
                if item.get("moved_to") is not None:
                    line.update(path_field("mv", item["moved_to"]))
                lines.append(line)
            if lines:
                try:
                    self._append(lines, room)
                except OSError as exc:
                    return [Lost(item["path"], errno_name(exc)) for item in kept]
            try:
                self._packs.evict()
            except OSError:  # the change and its history are kept: only the budget waits
                log.exception("cannot drop the history's oldest packs")
            return lost
        finally:
            room.release()

    def discard(self, kept: list[dict[str, Any]],
                reserved: list[tuple[int, int, int]] | None = None) -> None:
        """A failed call's spooled content and reserved room: nobody needs them."""
        room = Room(self._spools, reserved or [])
        for item in kept:
            room.free_spooled(item)
        room.release()

    async def _store(self, item: dict[str, Any], room: Room) -> Where | None:
        where = self._where(item["sha256"])
        try:
            held = item["spool"] is not None or item["data"] is not None
            if self._packs.kept(where) and (self._packs.current(where) or not held):
                return where  # kept once: an unchanged file costs nothing twice
            if not held:
                return None  # larger than the whole budget: only hashed
            # kept again, in the newest pack: the budget drops the oldest content first,
            # and the pack that first held it (older) may go before this change's turn
            claimed = self._packs.claim(item["bytes"])
            if claimed is None:
                return None  # larger than the whole budget
            where, fd = claimed
            try:
                await copy_in(item, fd, where[1], room)
            finally:
                os.close(fd)
            return where
        finally:
            room.free_spooled(item)

    def _where(self, sha: str, read: Entry | None = None) -> Where | None:
        """Where the content was last kept (its pack may have been dropped since); `read`:
        a change already read, not read again when it is the line that kept it."""
        offset = self._index.kept_at(sha)
        if offset is None:
            return None
        if read is None or read.id != offset:
            read = Entry.of(offset, self._index.line(offset))
        return read.at if read.sha256 == sha else None

    # reading ------------------------------------------------------------------------

    def read(self, sha: str) -> bytes | None:
        """The content, or None when the budget has dropped it."""
        where = self._where(sha)
        return None if where is None else self._packs.read(where)

    def entry(self, offset: int) -> Entry | None:
        """The change logged at `offset` (a version id's), None if no change was."""
        self.load()
        if not self._index.is_change(offset):
            return None
        return Entry.of(offset, self._index.line(offset))

    def entries_of(self, path: str) -> Iterator[Entry]:
        """The path's changes, newest first, read from the log as they are asked for."""
        self.load()
        for offset in self._index.of_path(path):
            line = self._index.line(offset)
            if logged_path(line, "p") == path:
                yield Entry.of(offset, line)

    def entries_since(self, checkpoint: int) -> Iterator[Entry]:
        """The changes logged after the checkpoint, oldest first."""
        self.load()
        for offset in self._index.since(checkpoint):
            yield Entry.of(offset, self._index.line(offset))

    def stored(self) -> int:
        """Bytes of content kept in the directory (what the budget counts)."""
        return self._packs.stored()

    def versions(self, path: str, limit: int) -> dict[str, Any]:
        """file.history's answer: the path's past contents, newest first."""
        entries = list(self.entries_of(path))
        packs: dict[str, bool] = {}  # pack -> still there, asked once per answer

        def evicted(e: Entry) -> bool:
            where = None if e.sha256 is None else self._where(e.sha256, e)
            if where is None:
                return e.sha256 is not None
            if where[0] not in packs:
                packs[where[0]] = self._packs.kept(where)
            return not packs[where[0]]

        gone = [evicted(e) for e in entries]
        out = []
        for e, was in zip(entries[:limit], gone):
            item: dict[str, Any] = {"version": version_id(e.id), "time": iso_utc(e.time),
                                    "method": e.method, "bytes": e.size, "sha256": e.sha256,
                                    "exists": e.sha256 is not None, "evicted": was}
            if e.moved_to is not None:
                item["moved_to"] = e.moved_to
            out.append(item)
        return {"versions": out, "total": len(entries), "truncated": len(entries) > limit,
                "evicted": sum(gone)}

    def close(self) -> None:
        self._packs.close()
        for fd in (self._log, *self._spools):
            os.close(fd)
        self._spool_dir.close()
        self.folder.close()


def version_id(offset: int) -> str:
    return f"h-{offset:x}"


def checkpoint_id(offset: int) -> str:
    return f"cp-{offset:x}"


def parse_id(text: str, prefix: str) -> int | None:
    """The offset an id names, for the very string the server gave out only: int()
    alone would take `h-0 `, `h-00` or `h-+0` for `h-0` (an id is opaque)."""
    if not text.startswith(prefix):
        return None
    try:
        offset = int(text[len(prefix):], 16)
    except ValueError:
        return None
    return offset if text == f"{prefix}{offset:x}" else None
