"""Which files' contents the index holds, read in the background as the tree reports them.

A file is known by a small id (reused once it is gone) so the index stays a dense bit
matrix (tools/warm/content_index.py). Until its content is read, and from the moment the
tree reports it changed, a file is *unknown*: always a candidate. Files the index does not
read stay unknown for good: over MAX_FILE_BYTES, more than one link (another link may
write it unseen), or unreadable.

A file written in the last SETTLE seconds is read once it has settled: a burst of writes
to one file (an agent's edits, a build's output) is read once, after it, not once a write
beside each write; until then it is unknown, as every changed file is. A file the tree
finds with an older time is read at once.

The index's width is chosen once the tree is built, from what is left of the memory
budget; if too little is left the index stays off and every search runs unindexed.
"""

from __future__ import annotations

import os
import time
from typing import Iterable

import numpy as np
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.warm.content_index import ContentIndex

MAX_FILE_BYTES = 2 * 1024 * 1024
MIN_WIDTH, MAX_WIDTH = 256, 8192  # below: too many false candidates to be worth it
SETTLE = 0.2  # seconds
HEADROOM = 0.6  # of the budget left after the tree, for the index's matrix (the rest:
# the replies kept, a listing being built)


class Content:
    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self.ids: dict[str, int] = {}
        self.paths: list[str | None] = []
        self.free: list[int] = []
        self.queue: dict[str, float] = {}  # files to read, oldest change first: when due
        self.index: ContentIndex | None = None
        self.indexed_bytes = 0
        self._sizes: dict[int, int] = {}  # bytes indexed per id, for indexed_bytes
        self.reason: str | None = None

    def changed(self, path: str, st: os.stat_result | None) -> None:
        """The tree saw a file appear or change (`st`) or go (None)."""
        if st is None:
            self._forget(path)
            return
        fid = self.ids.get(path)
        if fid is None:
            fid = self.ids[path] = self.free.pop() if self.free else len(self.paths)
            if fid == len(self.paths):
                self.paths.append(path)
            self.paths[fid] = path
        self._unindexed(fid)
        self.queue.pop(path, None)  # its place in the queue: its latest change
        recent = time.time() - st.st_mtime < SETTLE
        self.queue[path] = time.monotonic() + (SETTLE if recent else 0.0)

    def start(self, files: int, memory_left: int) -> None:
        """Size the index for the built tree, or leave it off (with the reason)."""
        capacity = max(1024, files * 5 // 4)
        width = MAX_WIDTH
        while width >= MIN_WIDTH and width * capacity // 8 > memory_left * HEADROOM:
            width //= 2
        if width < MIN_WIDTH:
            self.reason = (f"the index of {files} files does not fit in what --index-memory "
                           "leaves after the tree; searches run unindexed")
            self.queue.clear()
            return
        index = self.index = ContentIndex(width, capacity)
        for fid, path in enumerate(self.paths):
            if path is not None:
                index.unknown(fid)

    def step(self, seconds: float) -> bool:
        """Read the queued files that are due for `seconds`; False once none is left."""
        if self.index is None:
            return False
        until = time.monotonic() + seconds
        while self.queue and (now := time.monotonic()) < until:
            path, due = next(iter(self.queue.items()))
            if due > now:
                break
            del self.queue[path]
            self._read(path)
        return bool(self.queue)

    def due_in(self) -> float | None:
        """Seconds until the next queued read is due (0: now); None with nothing to read."""
        if self.index is None or not self.queue:
            return None
        return max(0.0, next(iter(self.queue.values())) - time.monotonic())

    def fids(self, paths: Iterable[str]) -> np.ndarray:
        """The ids of these files, in their order."""
        ids = self.ids
        return np.fromiter((ids[p] for p in paths), dtype=np.int64)

    def narrow(self, fids: np.ndarray, codes: list[int]) -> np.ndarray | None:
        """The places in `fids` of those that may hold a match (unknown ones included),
        ascending; None when the index is off."""
        if self.index is None:
            return None
        return np.flatnonzero(self.index.candidate_mask(codes)[fids])

    def clean(self, fids: np.ndarray) -> np.ndarray:
        """One bool per id of `fids`: the index read that file and found no NUL in it
        (tools/warm/grams.py `indexable`); all False when the index is off."""
        if self.index is None:
            return np.zeros(len(fids), dtype=bool)
        return self.index.known_mask()[fids]

    def indexed(self, fids: np.ndarray) -> np.ndarray:
        """Those of `fids` whose content the index holds (none when it is off)."""
        return fids[:0] if self.index is None else self.index.indexed(fids)

    @property
    def indexed_files(self) -> int:
        return self.index.indexed_files() if self.index is not None else 0

    def drop(self, reason: str) -> None:
        """Turn the index off for good (over budget): searches run unindexed."""
        self.index = None
        self.queue.clear()
        self.reason = reason

    def _read(self, path: str) -> None:
        fid = self.ids.get(path)
        if fid is None or self.index is None:
            return
        data = _content(self.ctx, path)
        if data is not None and self.index.put(fid, data):
            self._sizes[fid] = len(data)
            self.indexed_bytes += len(data)

    def _unindexed(self, fid: int) -> None:
        if self.index is not None:
            self.index.unknown(fid)
        self.indexed_bytes -= self._sizes.pop(fid, 0)

    def _forget(self, path: str) -> None:
        fid = self.ids.pop(path, None)
        if fid is None:
            return
        self._unindexed(fid)
        if self.index is not None:
            self.index.forget(fid)
        self.paths[fid] = None
        self.free.append(fid)
        self.queue.pop(path, None)


def _content(ctx: ToolContext, path: str) -> bytes | None:
    """The file's bytes when the index may rely on them (see the module doc)."""
    try:
        fd, st = ctx.ws.open_regular(path)
    except ToolError:
        return None
    try:
        if st.st_nlink > 1 or st.st_size > MAX_FILE_BYTES:
            return None
        chunks, size = [], 0
        while chunk := os.read(fd, MAX_FILE_BYTES + 1 - size):  # whole, or the index lies
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_FILE_BYTES:
                return None
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)

