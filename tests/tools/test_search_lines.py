"""The python engine finds the text of the lines it shows from the match offsets, without
splitting the file: the same lines as a whole-file split gives, whatever the windows."""

from __future__ import annotations

import time

import regex
from hypothesis import given, settings, strategies as st

from fuzzing import examples
from chorus_tools.tools.search.pyengine import _line_texts, _spans
from chorus_tools.tools.search.results import (Shape, Spans, file_result,
                                                  lines_without_endings, shown)

_TEXT = st.lists(st.sampled_from(["a", "b", "ab", "\n", "\r\n", "\r", " ", "\udcff"]),
                 max_size=40).map("".join)


@settings(max_examples=examples(500), deadline=None)
@given(_TEXT, st.sampled_from(["a", "b+", "^", "$", "a\\s*b", "(?s)a.b", "\\n"]),
       st.integers(0, 3), st.integers(0, 3), st.booleans())
def test_line_texts_agree_with_a_whole_file_split(text: str, pattern: str, before: int,
                                                  after: int, multiline: bool) -> None:
    if not text:
        return  # the engine skips empty files before searching
    line_mode = not multiline
    spans = _spans(regex.compile(pattern, regex.MULTILINE), text, text, line_mode,
                   time.monotonic() + 5, Spans(multiline, 10**6)).kept
    every = {n: shown(line) for n, line in enumerate(lines_without_endings(text), 1)}
    shape = Shape("content", before, after, multiline, 10**6, 2000)
    found = _line_texts(text, spans, before, after, strip_cr=True)
    assert all(every[n] == line for n, line in found.items())
    pairs = [span[:2] for span in spans]
    assert file_result("f", pairs, found, shape, 10**6) == file_result(
        "f", pairs, every, shape, 10**6)


@given(_TEXT)
def test_lines_without_endings_quick_path_for_one_line(text: str) -> None:
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    assert lines_without_endings(text) == [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


@given(st.lists(st.tuples(st.integers(1, 40), st.integers(0, 3)), max_size=30),
       st.booleans(), st.integers(1, 5), st.integers(0, 3), st.integers(0, 3))
def test_spans_keep_what_the_reply_shows_and_count_the_rest(
        raw: list[tuple[int, int]], adjacent: bool, keep: int, before: int,
        after: int) -> None:
    """Merged as they come and cut after `keep` (issue 22: a file of millions of matching
    lines held them all), the spans give the reply that all of them give."""
    spans = sorted((first, first + extra) for first, extra in raw)
    kept = Spans(adjacent, keep, after)
    for span in spans:
        kept.add(span)
    lines = {n: f"line {n}" for n in range(1, 50)}
    shape = Shape("content", before, after, adjacent, keep, 2000)
    assert file_result("f", kept.kept, lines, shape, keep, kept.more_lines) == file_result(
        "f", spans, lines, shape, keep)
