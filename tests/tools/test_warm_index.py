"""The content index (tools/warm/content_index.py) against a brute-force model of it.

The model keeps, per live id, the set of columns its content's grams hash to (or "unknown")
and answers a query by set inclusion; the index must give exactly that, through puts,
re-puts, forgets, unknowns, id reuse and growth. A narrow index (few columns) makes hash
collisions common, so the AND over columns is really exercised.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fuzzing import examples
from chorus_tools.tools.warm.content_index import ContentIndex
from chorus_tools.tools.warm.grams import content_grams, query_grams

Model = dict[int, "frozenset[int] | None"]  # live id -> its columns, None when unknown


def column(code: int, width: int) -> int:
    """A code's column, computed here independently: Fibonacci hashing, the product's top
    log2(width) bits."""
    return (code * 0x9E3779B1 & 0xFFFFFFFF) >> (32 - (width.bit_length() - 1))


def model_put(model: Model, fid: int, data: bytes, width: int) -> bool:
    held = content_grams(data)
    model[fid] = None if held is None else frozenset(column(c, width) for c in held.tolist())
    return held is not None


def expected(model: Model, codes: list[int], width: int) -> list[int]:
    wanted = {column(c, width) for c in codes}
    return sorted(fid for fid, cols in model.items() if cols is None or wanted <= cols)


def codes_of(*words: bytes) -> list[int]:
    return sorted({w[i] << 16 | w[i + 1] << 8 | w[i + 2] for w in words
                   for i in range(len(w) - 2)})


_CONTENTS = st.one_of(
    st.lists(st.sampled_from([b"alpha", b"beta", b"gamma", b"delta", b"foo_bar", b"K\xc3\xa9x",
                              b" ", b"\n", b"(", b"TODO"]), max_size=8).map(b"".join),
    st.sampled_from([b"bin\0ary", b"\xff\xfeu\0", b"caf\xe9", b""]))
_QUERIES = st.lists(st.sampled_from(codes_of(b"alpha", b"beta", b"gamma", b"delta",
                                             b"foo_bar", b"todo", b"k\xc3\xa9x", b"zzz")),
                    max_size=4)
_OPS = st.lists(st.tuples(st.sampled_from(["put", "unknown", "forget"]),
                          st.one_of(st.integers(0, 12), st.integers(0, 300)), _CONTENTS),
               max_size=40)


@settings(max_examples=examples(150), deadline=None)
@given(ops=_OPS, queries=st.lists(_QUERIES, min_size=1, max_size=5),
       width=st.sampled_from([2, 8, 64, 4096]))
def test_candidates_match_the_brute_force_model(ops: list[tuple[str, int, bytes]],
                                                queries: list[list[int]], width: int) -> None:
    index, model = ContentIndex(width, capacity=8), {}
    for op, fid, data in ops:
        _apply(index, model, op, fid, data, width)
        for codes in queries:
            assert index.candidates(codes).tolist() == expected(model, codes, width)
    assert index.indexed_files() == sum(cols is not None for cols in model.values())


@settings(max_examples=examples(100), deadline=None)
@given(contents=st.lists(_CONTENTS, min_size=1, max_size=30), query=_QUERIES)
def test_no_file_holding_the_grams_is_left_out(contents: list[bytes], query: list[int]) -> None:
    """The property a search relies on: a file holding every gram is a candidate."""
    index = ContentIndex(64)
    for fid, data in enumerate(contents):
        index.put(fid, data)
    found = set(index.candidates(query).tolist())
    for fid, data in enumerate(contents):
        held = content_grams(data)
        if held is None or set(query) <= set(held.tolist()):
            assert fid in found


def test_a_search_narrows_to_the_files_holding_its_words() -> None:
    index = ContentIndex(4096)
    files = [b"def load(path):\n    return path", b"class Loader:\n    pass",
             b"# TODO: load it", b"\0binary", "caf\u00e9 load".encode()]
    for fid, data in enumerate(files):
        index.put(fid, data)
    codes = query_grams("def load", literal=False, case_sensitive=True, multiline=False,
                        needs_pcre2=False)
    assert codes is not None
    assert index.candidates(codes).tolist() == [0, 3]  # 3: binary, always a candidate
    assert index.candidates([]).tolist() == [0, 1, 2, 3, 4]


def test_re_put_clears_the_old_content() -> None:
    index = ContentIndex(4096)
    alpha, omega = codes_of(b"alphabet"), codes_of(b"omegatron")
    assert not {column(c, 4096) for c in alpha} & {column(c, 4096) for c in omega}
    assert index.put(7, b"alphabet")
    assert index.candidates(alpha).tolist() == [7]
    assert index.put(7, b"omegatron")
    assert index.candidates(alpha).tolist() == []
    assert index.candidates(omega).tolist() == [7]


def test_unknown_and_forget() -> None:
    index = ContentIndex(256)
    wanted = codes_of(b"needle")
    assert not index.put(3, b"\xff\xfen\0e\0")  # UTF-16: the engines transcode it
    index.put(4, b"haystack")
    index.unknown(5)
    assert index.candidates(wanted).tolist() == [3, 5]
    assert index.indexed_files() == 1
    assert index.put(3, b"needle")  # read again, now indexable
    assert index.candidates(wanted).tolist() == [3, 5]
    index.forget(5)
    index.forget(3)
    index.forget(10_000)  # never seen: nothing to do
    assert index.candidates(wanted).tolist() == []
    assert index.candidates([]).tolist() == [4]
    assert index.put(3, b"a needle again")  # a reused id starts clean
    assert index.candidates(codes_of(b"haystack")).tolist() == [4]


def test_growth_keeps_every_bit_and_memory_follows_width_and_capacity() -> None:
    index = ContentIndex(128, capacity=64)
    small = index.memory_bytes()
    assert small == (128 + 2) * 8
    words = [f"word{n:04d}".encode() for n in range(1000)]
    for fid in range(0, 1000, 3):
        index.put(fid, words[fid])
    index.unknown(999)
    assert index.memory_bytes() == (128 + 2) * 128  # 8 bytes doubled up to 1000 ids
    for fid in range(0, 1000, 3):
        assert fid in index.candidates(codes_of(words[fid])).tolist()
    assert index.candidates([]).tolist() == [*range(0, 1000, 3)]
    wide = ContentIndex(256, capacity=64)
    assert wide.memory_bytes() == (256 + 2) * 8


@pytest.mark.parametrize("width", [0, 1, 3, 100, 1 << 25])
def test_width_is_a_power_of_two(width: int) -> None:
    with pytest.raises(ValueError):
        ContentIndex(width)


def test_negative_ids_are_refused() -> None:
    index = ContentIndex(64)
    with pytest.raises(ValueError):
        index.put(-1, b"abc")
    with pytest.raises(ValueError):
        index.unknown(-1)


def test_candidates_is_an_ascending_int_array() -> None:
    index = ContentIndex(64)
    for fid in (40, 2, 17):
        index.put(fid, b"shared words")
    found = index.candidates(codes_of(b"shared"))
    assert isinstance(found, np.ndarray) and found.dtype.kind == "i"
    assert found.tolist() == [2, 17, 40]


@settings(max_examples=examples(100), deadline=None)
@given(ops=_OPS, query=_QUERIES)
def test_masks_match_the_brute_force_model(ops: list[tuple[str, int, bytes]],
                                           query: list[int]) -> None:
    """The masks the warm search pages read (issue 32): `candidate_mask` is `candidates`
    one bool per id, `known_mask` the live ids whose content was indexed (no NUL in it:
    rg's -c and -l may count them)."""
    index, model = ContentIndex(8, capacity=8), {}
    for op, fid, data in ops:
        _apply(index, model, op, fid, data, 8)
    mask = index.candidate_mask(query)
    assert np.flatnonzero(mask).tolist() == expected(model, query, 8)
    known = index.known_mask()
    assert len(known) == len(mask)
    assert np.flatnonzero(known).tolist() == sorted(f for f, cols in model.items()
                                                    if cols is not None)


def _apply(index: ContentIndex, model: dict, op: str, fid: int, data: bytes,
           width: int) -> None:
    """One operation on the index and on the model beside it; a put answers alike."""
    if op == "put":
        assert index.put(fid, data) == model_put(model, fid, data, width)
    elif op == "unknown":
        index.unknown(fid)
        model[fid] = None
    else:
        index.forget(fid)
        model.pop(fid, None)
