"""file.patch's diff: the one-hunk fast path gives difflib's text exactly, or declines."""

from __future__ import annotations

import difflib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzing import examples
from chorus_tools.tools.patch.diff import _one_hunk, unified_diff
from chorus_tools.tools.read.text import lines_with_endings


def difflib_hunks(old: list[str], new: list[str]) -> list[str]:
    """What the fast path must reproduce: difflib's output without the two file headers."""
    return list(difflib.unified_diff(old, new, "a", "b"))[2:]


def agrees(old: list[str], new: list[str]) -> bool:
    """The fast path gives difflib's hunk; returns whether it was taken."""
    hunk = _one_hunk(old, new)
    if hunk is not None:
        assert hunk == difflib_hunks(old, new)
    return hunk is not None


# Few distinct lines, so that equal lines recur and difflib's tie-breaking rules matter;
# "\n" and "}\n" become "popular" (ignored by difflib) in texts of 200+ lines.
LINE = st.sampled_from(["a\n", "b\n", "c\n", "\n", "}\n", "x"])
NEW_LINE = st.sampled_from(["a\n", "b\n", "N\n", "M\n", "\n", "y"])


@settings(max_examples=examples(800), deadline=None)
@given(base=st.lists(LINE, max_size=14), at=st.integers(0, 14), cut=st.integers(0, 4),
       inserted=st.lists(NEW_LINE, max_size=4), swap=st.booleans())
def test_one_block_edits_agree_with_difflib(base: list[str], at: int, cut: int,
                                            inserted: list[str], swap: bool) -> None:
    old = base
    at = min(at, len(old))
    new = old[:at] + inserted + old[at + cut:]
    if swap:
        old, new = new, old
    agrees(old, new)


@settings(max_examples=examples(120), deadline=None)
@given(lines=st.lists(st.sampled_from(["\n", "}\n", "a\n", "b\n"]) | st.text("pqr", min_size=1,
                                                                           max_size=3),
                      min_size=195, max_size=260),
       at=st.integers(0, 260), replaced=st.lists(NEW_LINE, max_size=3))
@pytest.mark.long  # seconds of the default suite; CI runs it under -m long
def test_long_texts_with_popular_lines_agree(lines: list[str], at: int,
                                             replaced: list[str]) -> None:
    old = [line if line.endswith("\n") else line + "\n" for line in lines]
    at = min(at, len(old))
    new = old[:at] + replaced + old[at + 1:]
    agrees(old, new)
    agrees(new, old)


@pytest.mark.parametrize("old, new", [
    # a one-line edit in a longer text: the common case, and the benchmark's
    ([f"line {i}\n" for i in range(60)], ["counter\n"] + [f"line {i}\n" for i in range(1, 60)]),
    (["a\n", "b\n", "c\n"], ["a\n", "B\n", "c\n"]),
    (["a\n", "b\n"], ["a\n", "b\n", "c\n"]),  # appended
    (["a\n", "b\n", "c\n"], ["a\n", "c\n"]),  # deleted
    ([], ["new\n", "file"]),  # created
    (["a\n", "b"], ["a\n", "b\n"]),  # a final newline added
])
def test_common_edits_take_the_fast_path(old: list[str], new: list[str]) -> None:
    assert agrees(old, new)


@pytest.mark.parametrize("old, new", [
    # difflib's own example: "ab" -> "acab" is an insertion of "ac" at the front, not
    # "ca" in the middle (a changed line occurs in the other text)
    (["a\n", "b\n"], ["a\n", "c\n", "a\n", "b\n"]),
    # an insertion whose lines could straddle the seam: difflib matches "x x" elsewhere
    (["x\n", "D\n", "x\n", "x\n", "x\n"], ["x\n", "x\n", "x\n", "x\n"]),
    # a suffix of lines difflib ignores (popular in a 200+ line text) is not matched
    ([f"{i}\n" for i in range(150)] + ["OLD\n"] + ["\n"] * 60,
     [f"{i}\n" for i in range(150)] + ["NEW\n"] + ["\n"] * 60),
    (["a\n"], ["a\n"]),  # no change
])
def test_fast_path_declines_where_difflib_may_differ(old: list[str], new: list[str]) -> None:
    assert _one_hunk(old, new) is None


def test_declined_popular_suffix_really_differs() -> None:
    """The popularity rule is needed: difflib leaves such a suffix unmatched."""
    old = [f"{i}\n" for i in range(150)] + ["OLD\n"] + ["\n"] * 60
    new = [f"{i}\n" for i in range(150)] + ["NEW\n"] + ["\n"] * 60
    assert sum(line.startswith("-") for line in difflib_hunks(old, new)) == 61


BODY = "".join(f"line {i}\n" for i in range(40))


@pytest.mark.parametrize("before, after, created", [
    (BODY + "last", BODY + "end", False),  # fast path, no final newline on either side
    (BODY, BODY.replace("line 20\n", "line twenty\n"), False),  # fast path
    (BODY + "last", BODY.replace("line 20\n", "") + "end", False),  # two blocks: difflib
    ("", "one\ntwo", True),  # a created file
])
def test_whole_diff_is_difflibs(before: str, after: str, created: bool) -> None:
    expected = []
    for line in difflib.unified_diff(lines_with_endings(before), lines_with_endings(after),
                                     "/dev/null" if created else "a/f.txt", "b/f.txt"):
        expected.append(line if line.endswith("\n") else line + "\n")
        if not line.endswith("\n"):
            expected.append("\\ No newline at end of file\n")
    assert unified_diff(before, after, "f.txt", created=created, limit=1 << 16) \
        == "".join(expected)
