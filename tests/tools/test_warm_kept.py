"""tools/warm/kept.py: the warm process's kept answers stay within their bytes and count,
the least recently used going first, and each is valid for its tree's generation only."""

from __future__ import annotations

import numpy as np

from chorus_tools.tools.warm.kept import ENTRIES, Kept, size_of


def test_sizes_are_the_bytes_held() -> None:
    assert size_of(np.zeros(1000, dtype=np.int64)) == 8000
    assert size_of(b"abc") == 3 and size_of("abcd") == 4
    assert size_of((np.zeros(10, dtype=np.int64), np.zeros(10, dtype=np.int32))) == 120
    reply = {"text": "x" * 5000, "files": ["a.py"] * 100}
    assert size_of(reply) > 5000  # a dict counts what it holds, not its own header


def test_an_answer_is_kept_for_its_generation_only() -> None:
    kept = Kept(1000)
    kept.put("q", 3, b"answer")
    assert kept.get("q", 3) == b"answer"
    assert kept.get("q", 4) is None
    assert kept.get("other", 3) is None


def test_the_least_recently_used_goes_first_past_the_bytes() -> None:
    kept = Kept(100)
    kept.put("a", 1, b"a" * 40)
    kept.put("b", 1, b"b" * 40)
    assert kept.get("a", 1) is not None  # a is now the more recent
    kept.put("c", 1, b"c" * 40)
    assert kept.get("b", 1) is None
    assert kept.get("a", 1) is not None and kept.get("c", 1) is not None
    assert kept.bytes == 80


def test_an_answer_larger_than_the_room_is_not_kept_and_drops_nothing() -> None:
    kept = Kept(100)
    kept.put("small", 1, b"s" * 10)
    kept.put("huge", 1, b"h" * 101)
    assert kept.get("huge", 1) is None and kept.get("small", 1) == b"s" * 10
    assert kept.bytes == 10


def test_a_new_answer_to_the_same_question_replaces_the_old() -> None:
    kept = Kept(100)
    kept.put("q", 1, b"x" * 60)
    kept.put("q", 2, b"y" * 60)
    assert kept.get("q", 2) == b"y" * 60 and kept.bytes == 60 and len(kept) == 1


def test_no_more_than_entries_answers_and_clear_empties() -> None:
    kept = Kept(1 << 20)
    for i in range(ENTRIES + 5):
        kept.put(i, 1, b"v")
    assert len(kept) == ENTRIES and kept.get(0, 1) is None and kept.get(ENTRIES + 4, 1)
    kept.clear()
    assert len(kept) == 0 and kept.bytes == 0
