"""What the history holds in memory of its log (docs/protocol.md, History): where each
change's line is, never the line itself. A long-lived server keeps changes for ever (only
their content is bounded, by --history-bytes), so a change costs a few tens of bytes here:
its line's offset, a link to the previous change of its path, and a slot in two hash
tables of 64-bit keys (a path's hash to its last change; the first 64 bits of a content's
SHA-256 to the last line that kept it). The lines are read back from the log by offset
when a call needs them (rpc/dispatch/history.py).

The keys are hashes, so two paths (or contents) may share one: whoever reads a line
checks it names the path (or the full SHA-256) asked for. Two contents sharing 64 bits of
SHA-256 (about one chance in 10^9 among a million contents) only lose the dedup and the
reading of the older one through this table, never give one for the other.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from chorus_tools.rpc.dispatch.history_packs import Where
from chorus_tools.rpc.dispatch.history_room import logged_path

_MASK = (1 << 64) - 1
_FIRST_READ = 512  # most lines are shorter: one pread


@dataclass(slots=True)
class Entry:
    """One change of a path, as its log line says: what it held before (`sha256` None: no
    file). Read back from the log when a call needs it, never held."""

    id: int
    time: int
    method: str
    path: str
    sha256: str | None
    size: int
    mode: int
    after: str | None  # the path's version once the change was made (None: no file)
    moved_to: str | None = None
    at: Where | None = None  # where its content was kept (None: not kept)

    @classmethod
    def of(cls, offset: int, line: dict[str, Any]) -> Entry:
        at = line.get("at")
        return cls(offset, line["t"], line["m"], logged_path(line, "p"), line["s"],
                   line["b"], line["mo"], line["a"], logged_path(line, "mv"),
                   None if at is None else (*at,))


class U64Map:
    """64-bit keys to int values, open addressing in two arrays: 16 bytes a slot where a
    dict of ints costs about 100 bytes a key. Values are only ever replaced, never
    removed."""

    def __init__(self) -> None:
        self._keys = array("Q", bytes(8 * 16))  # 0: a free slot
        self._vals = array("q", bytes(8 * 16))
        self._used = 0

    def get(self, key: int) -> int | None:
        keys, mask = self._keys, len(self._keys) - 1
        key = key or 1
        i = key & mask
        while keys[i]:
            if keys[i] == key:
                return self._vals[i]
            i = (i + 1) & mask
        return None

    def put(self, key: int, value: int) -> None:
        key = key or 1
        keys, mask = self._keys, len(self._keys) - 1
        i = key & mask
        while keys[i] and keys[i] != key:
            i = (i + 1) & mask
        if not keys[i]:
            keys[i] = key
            self._used += 1
        self._vals[i] = value
        if self._used * 4 > len(keys) * 3:
            self._grow()

    def _grow(self) -> None:
        old = zip(self._keys, self._vals)
        self._keys = array("Q", bytes(16 * len(self._keys)))
        self._vals = array("q", bytes(16 * len(self._vals)))
        self._used = 0
        for key, value in old:
            if key:
                self.put(key, value)


def path_key(path: str) -> int:
    return hash(path) & _MASK


def sha_key(sha: str) -> int:
    return int(sha[:16], 16)


class LogIndex:
    """The offsets of the log's change lines, by path and by content kept."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._changes = array("q")  # each change line's offset, in log order
        self._prev = array("q")  # each change's previous one with its path's key, or -1
        self._last = U64Map()  # path key -> index of its last change
        self._kept = U64Map()  # sha key -> offset of the last line that kept that content

    def add(self, offset: int, path: str, sha: str | None, kept: bool) -> None:
        """A change line read or appended (`kept`: the line says where its content is)."""
        key = path_key(path)
        last = self._last.get(key)
        self._prev.append(-1 if last is None else last)
        self._last.put(key, len(self._changes))
        self._changes.append(offset)
        if kept and sha is not None:
            self._kept.put(sha_key(sha), offset)

    def is_change(self, offset: int) -> bool:
        at = bisect_left(self._changes, offset)
        return at < len(self._changes) and self._changes[at] == offset

    def since(self, offset: int) -> Iterator[int]:
        """The offsets of the changes logged after `offset`, oldest first."""
        for at in range(bisect_right(self._changes, offset), len(self._changes)):
            yield self._changes[at]

    def of_path(self, path: str) -> Iterator[int]:
        """The offsets of the path's changes, newest first, and maybe some of another
        path with the same key (the reader checks)."""
        at = self._last.get(path_key(path))
        while at is not None and at >= 0:
            yield self._changes[at]
            at = self._prev[at]

    def kept_at(self, sha: str) -> int | None:
        """The offset of the last line that kept this content (or one with the same key)."""
        return self._kept.get(sha_key(sha))

    def line(self, offset: int) -> dict[str, Any]:
        """The log line at `offset` (one the index holds: complete, never rewritten)."""
        size = _FIRST_READ
        while True:
            data = os.pread(self._fd, size, offset)
            end = data.find(b"\n")
            if end >= 0:
                return orjson.loads(data[:end])
            if len(data) < size:
                raise ValueError(f"the history's log has no complete line at {offset}")
            size *= 4
