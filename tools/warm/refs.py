"""A parsed file as the symbol index keeps it (tools/warm/symbol_index.py): one bytes object
a file, no Python object per name, symbol or use, so that 200k files fit --index-memory
(about 1 KiB a generated file, uses included) and a warm code.references finds a name's
uses in memory, reading only the lines it returns.

A file's *local names* are its distinct identifiers (tools/code/identifiers.py), sorted,
then the names it defines that are no identifier (a heading, `[Symbol.iterator]`); the
index gives each its word id. The bytes hold, after a header (HEAD):
- ids: the local names' word ids (uint32 × L), written by the index (`record`);
- bounds: where each local name's uses begin (L + 1, of the index width: uint16 when every
  count fits, else uint32); defs: the local names the file defines, in file order (its
  summary's names); lengths: the byte length of each holder's name path;
- per use, grouped by name and in file order within a name: its byte offset (uint16 in a
  file under 64 KiB, else uint32) and its use and innermost holder packed together,
  ((holder + 1) << 3) | kind (uint8 with under 31 holders, else uint16 or uint32);
- words: one bit per local name, set for the words code.map ranks (rank.py's summary):
  as the names are sorted, the set ones are the summary's words in its order;
- the holders' name paths, UTF-8, one after another.
About 3 bytes a use in a small file (9 before).
"""

from __future__ import annotations

import struct
from typing import Any, NamedTuple

import numpy as np

from chorus_tools.tools.code.codemap import Parsed

# stamp (CRC-32 of the text parsed), L local names, n uses, D definitions, H holders,
# the widths (index | offset << 4 | use << 8, in bytes), the holders' text bytes
HEAD = struct.Struct("<7I")
_KIND_BITS = 3  # identifiers.KINDS has 5
_UNSIGNED: dict[int, Any] = {1: np.uint8, 2: np.uint16, 4: np.uint32}


class Uses(NamedTuple):
    """The uses of one name in one file, in file order."""

    offset: np.ndarray  # uint32
    inside: np.ndarray  # int32
    kind: np.ndarray  # uint8


class Local(NamedTuple):
    """A file's record as its parse gives it (in a helper or the warm process), before
    its names have the index's word ids: the local names, the header, the rest."""

    names: list[str]
    head: bytes
    rest: bytes
    markdown: bool


def local(parsed: Parsed) -> Local:
    """The record of one parse of a file (see the module doc)."""
    table, summary = parsed.table, parsed.summary
    idents = table.names
    k = len(idents)
    order = sorted(range(k), key=idents.__getitem__)
    names = [idents[i] for i in order]
    place = {name: i for i, name in enumerate(names)}
    for name in summary.names:
        if name not in place:
            place[name] = len(names)
            names.append(name)
    size = len(names)
    rank = np.empty(k, dtype=np.int64)
    rank[order] = np.arange(k)
    per_use = rank[table.name] if len(table.name) else np.zeros(0, dtype=np.int64)
    by_name = np.argsort(per_use, kind="stable")  # grouped by name, file order kept
    bounds = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(np.bincount(per_use, minlength=size), out=bounds[1:])
    defs = [place[name] for name in summary.names]
    texts = [h.encode("utf-8", "surrogateescape") for h in table.holders]
    lengths = [len(t) for t in texts]
    n = len(per_use)
    offset = table.offset[by_name]
    packed = ((table.inside[by_name].astype(np.int64) + 1) << _KIND_BITS) | table.kind[by_name]
    index_w = _width(max(n, size, *lengths, 0), (2, 4))
    offset_w = _width(int(offset.max()) if n else 0, (2, 4))
    use_w = _width(len(texts) << _KIND_BITS | 7, (1, 2, 4))
    words = set(summary.words)
    mask = np.zeros(size, dtype=bool)
    mask[:k] = [name in words for name in names[:k]]
    text = b"".join(texts)
    head = HEAD.pack(parsed.stamp, size, n, len(defs), len(texts),
                     index_w | offset_w << 4 | use_w << 8, len(text))
    index_t = _UNSIGNED[index_w]
    rest = b"".join([bounds.astype(index_t).tobytes(), np.array(defs, index_t).tobytes(),
                     np.array(lengths, index_t).tobytes(),
                     offset.astype(_UNSIGNED[offset_w]).tobytes(),
                     packed.astype(_UNSIGNED[use_w]).tobytes(),
                     np.packbits(mask, bitorder="little").tobytes(), text])
    return Local(names, head, rest, parsed.grammar == "markdown")


def _width(largest: int, widths: tuple[int, ...]) -> int:
    """The narrowest of `widths` (bytes) whose unsigned range holds `largest`."""
    return next(w for w in widths if largest < 1 << 8 * w or w == widths[-1])


class Record:
    """One file's record (the module doc's bytes) with the index's vocabulary, read as
    the warm answers need it: its names, words, uses and holders, its stamp."""

    __slots__ = ("data", "vocabulary")

    def __init__(self, found: Local, ids: np.ndarray, vocabulary: list[str]) -> None:
        self.data = b"".join([found.head, ids.astype(np.uint32).tobytes(), found.rest])
        self.vocabulary = vocabulary

    @property
    def stamp(self) -> int:
        """The CRC-32 of the text parsed: lines are read only from that text."""
        return HEAD.unpack_from(self.data)[0]

    @property
    def refs(self) -> Record:
        """Its identifiers' uses: the record answers `find` and `holders` itself."""
        return self

    def ids(self) -> np.ndarray:
        """The local names' word ids."""
        return np.frombuffer(self.data, np.uint32, HEAD.unpack_from(self.data)[1], HEAD.size)

    def defined(self) -> np.ndarray:
        """The word ids of the names it defines, in file order."""
        _, size, _, count, _, widths, _ = HEAD.unpack_from(self.data)
        width = widths & 15
        at = HEAD.size + 4 * size + width * (size + 1)
        defs: np.ndarray = np.frombuffer(self.data, _UNSIGNED[width], count, at)
        return self.ids()[defs]

    @property
    def names(self) -> tuple[str, ...]:
        """The names it defines, in file order (its summary's names)."""
        vocabulary = self.vocabulary
        return tuple(vocabulary[i] for i in self.defined().tolist())

    @property
    def words(self) -> np.ndarray:
        """The word ids of the words it mentions, in the words' sorted order (uint32)."""
        _, size, n, defs, holders, widths, text = HEAD.unpack_from(self.data)
        at = len(self.data) - text - (size + 7) // 8
        mask = np.unpackbits(np.frombuffer(self.data, np.uint8, (size + 7) // 8, at),
                             count=size, bitorder="little").view(bool)
        return self.ids()[mask]

    def holds(self, word: int) -> bool:
        """Whether the file uses the name whose id is `word`: `find`'s look-up alone, in
        plain Python (a warm code.references asks it of every file that may hold the
        name, and most do not: a numpy call costs more than this whole check)."""
        data = self.data
        _, size, _, _, _, widths, _ = HEAD.unpack_from(data)
        start, end = HEAD.size, HEAD.size + 4 * size
        key = word.to_bytes(4, "little")
        at = data.find(key, start, end)
        while at != -1 and (at - start) % 4:  # a match across two ids
            at = data.find(key, at + 1, end)
        if at == -1:
            return False
        index_w = widths & 15
        low, high = struct.unpack_from("<2H" if index_w == 2 else "<2I", data,
                                       end + index_w * ((at - start) // 4))
        return low != high

    def find(self, word: int) -> Uses | None:
        """The uses of the name whose id is `word`, or None when the file has none."""
        data = self.data
        _, size, n, defs, holders, widths, _ = HEAD.unpack_from(data)
        ids = np.frombuffer(data, np.uint32, size, HEAD.size)
        hit = np.flatnonzero(ids == word)
        if not len(hit):
            return None
        index_w, offset_w, use_w = widths & 15, widths >> 4 & 15, widths >> 8 & 15
        at = HEAD.size + 4 * size
        low, high = np.frombuffer(data, _UNSIGNED[index_w], 2,
                                  at + index_w * int(hit[0])).tolist()
        if low == high:
            return None
        at += index_w * (size + 1 + defs + holders)
        offset = np.frombuffer(data, _UNSIGNED[offset_w], high - low, at + offset_w * low)
        at += offset_w * n
        packed: np.ndarray = np.frombuffer(data, _UNSIGNED[use_w], high - low, at + use_w * low)
        return Uses(offset.astype(np.uint32),
                    (packed >> _KIND_BITS).astype(np.int32) - 1,
                    (packed & 7).astype(np.uint8))

    @property
    def holders(self) -> tuple[str, ...]:
        """The name paths of the classes, functions and methods uses are inside of."""
        data = self.data
        _, size, _, defs, holders, widths, text = HEAD.unpack_from(data)
        index_w = widths & 15
        lengths = np.frombuffer(data, _UNSIGNED[index_w], holders,
                                HEAD.size + 4 * size + index_w * (size + 1 + defs)).tolist()
        found, at = [], len(data) - text
        for length in lengths:
            found.append(data[at:at + length].decode("utf-8", "surrogateescape"))
            at += length
        return tuple(found)
