"""What the warm process keeps of its answers (selections, listings, code maps, a
selection's candidates for its next pages), bounded by their own bytes, oldest out.

Why a bound of their own and not the process's RSS: the RSS seldom falls once a large
reply has been built (malloc keeps what was freed), so a check on it emptied the store
after every answer once it was over: a warm 200k-file tree then walked its own selection
again (0.4 s) before every search of a common word. The room is set aside from the
budget before the content index is sized (tools/warm/answers.py).
"""

from __future__ import annotations

import pickle
from collections import OrderedDict
from typing import Any, Hashable

import numpy as np

ENTRIES = 40  # answers kept at most, whatever their size


def size_of(value: Any) -> int:
    """The bytes `value` holds: arrays and byte strings exactly, a tuple of them summed,
    anything else (a code map's reply) as its pickle's length."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, (bytes, str)):
        return len(value)
    if isinstance(value, tuple):
        return sum(size_of(part) for part in value)
    return len(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


class Kept:
    """Answers by question, each valid for one generation of the tree; the least
    recently used go first once `limit` bytes or ENTRIES answers are passed."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.bytes = 0
        self._items: OrderedDict[Hashable, tuple[int, Any, int]] = OrderedDict()

    def get(self, key: Hashable, generation: int) -> Any | None:
        """The answer kept for `key` at `generation`, or None."""
        item = self._items.get(key)
        if item is None or item[0] != generation:
            return None
        self._items.move_to_end(key)
        return item[1]

    def put(self, key: Hashable, generation: int, value: Any) -> None:
        """Keep `value` (one larger than the whole limit is not kept)."""
        self._drop(key)
        size = size_of(value)
        if size > self.limit:
            return
        self._items[key] = (generation, value, size)
        self.bytes += size
        while self.bytes > self.limit or len(self._items) > ENTRIES:
            self._drop(next(iter(self._items)))

    def clear(self) -> None:
        self._items.clear()
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._items)

    def _drop(self, key: Hashable) -> None:
        item = self._items.pop(key, None)
        if item is not None:
            self.bytes -= item[2]
