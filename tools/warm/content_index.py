"""The content index: which files may hold a search's grams, as bit-sliced signatures.

One row of bits per column, one bit per file id in every row: a file's grams hash to
columns and set its bit there. A query ANDs the rows of its grams' columns, so its cost is
a few passes over (files / 8) bytes whatever the tree holds, and a file's signature costs
`width` bits whatever its size. A hash collision only adds a candidate (the engine still
decides every match); a file the index cannot read (`unknown`) is always a candidate.
Ids are small ints handed out by the caller and reused after `forget`; capacity doubles as
they grow, so the arrays stay dense.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from chorus_tools.tools.warm.grams import gram_chunks, indexable

_GOLDEN = np.uint32(0x9E3779B1)  # Fibonacci hashing: the product's top bits mix every bit
_MIN_CAPACITY = 64  # file ids: one byte per row for the smallest index


class ContentIndex:
    """Bit-sliced gram signatures of files, by file id."""

    def __init__(self, width: int, capacity: int = 4096) -> None:
        """`width` columns (a power of two); room for `capacity` ids at first: a caller
        that knows the tree's size spares the doubling's copies and its unused half."""
        if width < 2 or width > 1 << 24 or width & (width - 1):
            raise ValueError(f"width must be a power of two from 2 to 2**24, not {width}")
        self.width = width
        self._shift = np.uint32(32 - (width.bit_length() - 1))
        size = max(capacity, _MIN_CAPACITY) + 7 >> 3
        self._bits = np.zeros((width, size), dtype=np.uint8)
        self._live = np.zeros(size, dtype=np.uint8)
        self._unknown = np.zeros(size, dtype=np.uint8)
        self._end = 0  # bytes of each row that ever held a live id

    def put(self, fid: int, data: bytes) -> bool:
        """Index `data` as the content of `fid`, replacing what it held; a file that is not
        indexable (tools/warm/grams.py) becomes unknown. Returns whether it was indexed."""
        if not indexable(data):
            self.unknown(fid)
            return False
        byte, bit = self._admit(fid)
        self._unknown[byte] &= ~bit
        marks = np.zeros(self.width, dtype=bool)
        for codes in gram_chunks(data):
            marks[self._column_of(codes)] = True
        self._bits[np.flatnonzero(marks), byte] |= bit
        return True

    def unknown(self, fid: int) -> None:
        """Make `fid` a live file of unknown content: a candidate for every query."""
        byte, bit = self._admit(fid)
        self._unknown[byte] |= bit

    def forget(self, fid: int) -> None:
        """Drop `fid`: no longer a candidate, its id free for reuse."""
        if fid < 0 or fid >> 3 >= self._live.size:
            return
        byte, bit = fid >> 3, np.uint8(1 << (fid & 7))
        self._bits[:, byte] &= ~bit
        self._live[byte] &= ~bit
        self._unknown[byte] &= ~bit

    def candidates(self, codes: Iterable[int]) -> np.ndarray:
        """Live ids, ascending, whose signature holds every code's column, and every unknown
        live id. No codes: every live id."""
        return np.flatnonzero(self.candidate_mask(codes))

    def candidate_mask(self, codes: Iterable[int]) -> np.ndarray:
        """`candidates` as one bool per id (every id ever live has one)."""
        end = self._end
        found = self._live[:end].copy()
        for column in np.unique(self._column_of(np.fromiter(codes, dtype=np.uint32))):
            np.bitwise_and(found, self._bits[column, :end], out=found)
        found |= self._unknown[:end]
        return np.unpackbits(found, bitorder="little").view(bool)

    def known_mask(self) -> np.ndarray:
        """One bool per id: live, and its content indexed (read, not unknown)."""
        end = self._end
        return np.unpackbits(self._live[:end] & ~self._unknown[:end],
                             bitorder="little").view(bool)

    def indexed(self, fids: np.ndarray) -> np.ndarray:
        """Those of `fids` whose content is indexed (live and not unknown)."""
        fids = fids[(fids >= 0) & (fids >> 3 < self._live.size)]
        byte, bit = fids >> 3, (1 << (fids & 7)).astype(np.uint8)
        return fids[(self._live[byte] & ~self._unknown[byte] & bit) != 0]

    def indexed_files(self) -> int:
        """Live ids with an indexed content (not unknown). (Not np.bitwise_count: numpy
        1.26, which pyproject allows, lacks it.)"""
        return int(np.unpackbits(self._live & ~self._unknown).sum())

    def memory_bytes(self) -> int:
        """Bytes held by the signatures and the live and unknown rows."""
        return self._bits.nbytes + self._live.nbytes + self._unknown.nbytes

    def _admit(self, fid: int) -> tuple[int, np.uint8]:
        """Make room for `fid`, clear its bits (one strided pass over the columns, only when
        it is live: a new or forgotten id has none, which keeps a build fast) and mark it
        live: its (byte, bit) in each row."""
        if fid < 0:
            raise ValueError(f"file ids are not negative: {fid}")
        byte, bit = fid >> 3, np.uint8(1 << (fid & 7))
        if byte >= self._live.size:
            self._grow(byte + 1)
        elif self._live[byte] & bit:
            self._bits[:, byte] &= ~bit
        self._live[byte] |= bit
        self._end = max(self._end, byte + 1)
        return byte, bit

    def _grow(self, size: int) -> None:
        """Double the rows (or more, to `size` bytes), keeping every bit."""
        size = max(size, 2 * self._live.size)
        bits = np.zeros((self.width, size), dtype=np.uint8)
        bits[:, :self._live.size] = self._bits
        self._bits = bits
        self._live = np.concatenate([self._live, np.zeros(size - self._live.size, np.uint8)])
        self._unknown = np.concatenate([self._unknown,
                                        np.zeros(size - self._unknown.size, np.uint8)])

    def _column_of(self, codes: np.ndarray) -> np.ndarray:
        """The columns of gram codes (uint32): the top bits of a Fibonacci hash."""
        columns = codes * _GOLDEN
        columns >>= self._shift
        return columns
