"""A file's identifier table as the symbol index keeps it (tools/code/identifiers.py): one
bytes object per file, its names as the index's word ids, so that a warm code.references
finds a name's uses in memory and reads only the lines it returns.

The bytes hold, for k distinct names and n uses: the names' ids, sorted (uint32 × k);
where each one's uses begin (uint32 × k + 1); then per use, grouped by name and in file
order within a name, its byte offset (uint32), its innermost holder (int32: an index into
the holders' name paths, -1 at the top) and its use (uint8: identifiers.KINDS). About
9 bytes a use: no Python object per use or per name.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Callable, NamedTuple

import numpy as np

from chorus_tools.tools.code.identifiers import Table


class Uses(NamedTuple):
    """The uses of one name in one file, in file order."""

    offset: np.ndarray  # uint32
    inside: np.ndarray  # int32
    kind: np.ndarray  # uint8


class Refs(NamedTuple):
    names: int  # k
    uses: int  # n
    data: bytes
    holders: tuple[str, ...]

    def find(self, word: int) -> Uses | None:
        """The uses of the name whose id is `word`, or None when the file has none."""
        k, n, data = self.names, self.uses, self.data
        ids = np.frombuffer(data, dtype=np.uint32, count=k)
        at = int(np.searchsorted(ids, word))
        if at >= k or ids[at] != word:
            return None
        bounds = np.frombuffer(data, dtype=np.uint32, count=k + 1, offset=4 * k)
        low, high = int(bounds[at]), int(bounds[at + 1])
        base = 4 * (2 * k + 1)
        return Uses(np.frombuffer(data, dtype=np.uint32, count=high - low, offset=base + 4 * low),
                    np.frombuffer(data, dtype=np.int32, count=high - low,
                                  offset=base + 4 * (n + low)),
                    np.frombuffer(data, dtype=np.uint8, count=high - low,
                                  offset=base + 8 * n + low))


def holds(refs: Refs, word: int) -> bool:
    """Whether `refs` has uses of the name whose id is `word`: Refs.find's look-up alone,
    in plain Python (a warm code.references asks it of every file that may hold the name,
    and most do not: a numpy call costs more than this whole check)."""
    ids = memoryview(refs.data)[:4 * refs.names].cast("I")
    at = bisect_left(ids, word)
    return at < refs.names and ids[at] == word


def pack(found: Table, word_id: Callable[[str], int]) -> Refs:
    """`found`'s uses keyed by the index's word ids (`word_id` gives a name its id)."""
    ids = np.fromiter((word_id(name) for name in found.names), dtype=np.uint32,
                      count=len(found.names))
    order = np.argsort(ids, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    per_use = rank[found.name] if len(found.name) else np.zeros(0, dtype=np.int64)
    by_name = np.argsort(per_use, kind="stable")  # grouped by name, file order kept
    counts = np.bincount(per_use, minlength=len(ids)) if len(ids) else np.zeros(0, np.int64)
    bounds = np.concatenate(([0], np.cumsum(counts))).astype(np.uint32)
    data = b"".join([ids[order].tobytes(), bounds.tobytes(),
                     found.offset[by_name].astype(np.uint32).tobytes(),
                     found.inside[by_name].astype(np.int32).tobytes(),
                     found.kind[by_name].astype(np.uint8).tobytes()])
    return Refs(len(ids), len(found.offset), data, found.holders)
