"""Line counts remembered per file version, shared by every worker.

A count is a whole pass over the file; remembering it makes a repeat read of the head or
the tail of an unchanged big file cost only its window. The key is what `version` is
made of (inode, size, mtime_ns; plus the device): the identity `expected_version`
already trusts. The table lives in an anonymous shared mapping made with the
ToolContext, before the workers fork, so a count made by one worker serves them all,
whichever the pool picks next, and a replaced worker inherits it.

No lock: each slot carries a checksum of its key and value, so a slot torn by two
workers writing at once, or taken over by another file, reads as a miss.
"""

from __future__ import annotations

import mmap
import os
import struct

from chorus_tools.tools.read import linecount
from chorus_tools.tools.read.linecount import Lines
from chorus_tools.tools.read.text import ENCODINGS as _ENCODINGS

# dev, ino, mtime_ns, size, newlines, total, enc, invalid (bad UTF-8 bytes), check
_SLOT = struct.Struct("<QQqqQQBQq")


class CountCache:
    """A fixed-size table of Lines by file identity (direct-mapped: a new entry takes
    its slot from whatever was there)."""

    def __init__(self, slots: int = 4096) -> None:
        self._slots = slots
        self._map = mmap.mmap(-1, slots * _SLOT.size)  # MAP_SHARED | MAP_ANONYMOUS

    @staticmethod
    def _key(st: os.stat_result) -> tuple[int, int, int, int]:
        return st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size

    def _at(self, key: tuple[int, int, int, int]) -> int:
        return hash(key) % self._slots * _SLOT.size  # ints hash alike in every process

    def lines(self, fd: int, st: os.stat_result, head: bytes) -> Lines:
        """The file's Lines: remembered for its version, or counted now and remembered.
        `st` is its fstat from before the count, `head` its first bytes."""
        lines = self.get(st)
        if lines is None:
            lines = linecount.count(fd, head, st.st_size)
            self.put(st, lines)
        return lines

    def get(self, st: os.stat_result) -> Lines | None:
        key = self._key(st)
        *stored, newlines, total, enc, invalid, check = _SLOT.unpack_from(self._map,
                                                                         self._at(key))
        if tuple(stored) != key or check != hash((*key, newlines, total, enc, invalid)) \
                or enc >= len(_ENCODINGS):
            return None
        return Lines(newlines, total, _ENCODINGS[enc], invalid)

    def put(self, st: os.stat_result, lines: Lines) -> None:
        key = self._key(st)
        enc = _ENCODINGS.index(lines.encoding)
        check = hash((*key, lines.newlines, lines.total, enc, lines.invalid))
        self._map[self._at(key):self._at(key) + _SLOT.size] = _SLOT.pack(
            *key, lines.newlines, lines.total, enc, lines.invalid, check)
