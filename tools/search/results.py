"""Result shaping shared by both engines, so they cannot drift apart.

An engine reports, per file, the line spans its matches cover and the text of the lines it
knows; `file_result` turns that into the file's entries (content mode windows, counts), and
`assemble` concatenates files in path order into the reply, keeping the first `max_results`.
A file result is a plain dict so it crosses the worker pipe as is:
`{"path", "entries": [[line, content], ...], "count"}`.
"""

from __future__ import annotations

import gc
import operator
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

MATCH_PREFIX = "--> "
_COUNT = operator.itemgetter("count")
CONTEXT_PREFIX = "    "


@dataclass(frozen=True)
class Shape:
    """What the reply needs from each file; the same for every file of one search."""

    mode: str  # content | files_with_matches | count
    before: int  # context lines shown before a match (ripgrep's -B)
    after: int  # and after it (-A)
    merge_adjacent: bool  # multiline mode is really active: touching spans form one entry
    max_results: int
    max_line_chars: int

    @property
    def wants_text(self) -> bool:
        return self.mode == "content"


def merge_spans(spans: Iterable[tuple[int, int]], adjacent: bool) -> list[tuple[int, int]]:
    """Sorted spans joined where they overlap, or also touch when `adjacent` (ripgrep's
    multiline rule: a match starting on the line after another ends is the same entry)."""
    gap = 1 if adjacent else 0
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1] + gap:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


class Spans:
    """A file's match spans as an engine finds them (in order), merged as they come by
    merge_spans's rule: the first `keep` merged spans are kept (and those the last one's
    context window reaches), the lines of the others only counted, so a file with
    millions of matching lines costs what the reply shows.
    A span is (first line, last line, anything the engine keeps with it)."""

    def __init__(self, adjacent: bool, keep: int, reach: int = 0) -> None:
        self.kept: list[tuple[Any, ...]] = []
        self.more_lines = 0  # lines of the merged spans past the kept ones
        self.adjacent, self.keep, self.reach = adjacent, keep, reach
        self._gap = 1 if adjacent else 0
        self._last: tuple[int, int] | None = None  # the last merged span, kept or not

    def __bool__(self) -> bool:
        return self._last is not None

    def wanted(self, first: int) -> bool:
        """Whether a span starting at line `first` can still show: among the first
        `keep`, or within `reach` lines (the context after) of the last of those."""
        return len(self.kept) < self.keep or first <= self.kept[self.keep - 1][1] + self.reach

    def add(self, span: tuple[Any, ...]) -> None:
        first, last = span[0], span[1]
        previous = self._last
        if previous is not None and first <= previous[1] + self._gap:
            if last > previous[1]:
                if self.more_lines:  # it joins a span past the kept ones
                    self.more_lines += last - previous[1]
                else:
                    self.kept[-1] = (previous[0], last, *self.kept[-1][2:])
                self._last = (previous[0], last)
            return
        if self.more_lines or not self.wanted(first):
            self.more_lines += last - first + 1
        else:
            self.kept.append(span)
        self._last = (first, last)


class CutLine(str):
    """A line already cut to its shown length, with the marker (read in pieces, never
    whole): cut_line leaves it as it is."""


def cut_line(line: str, keep: int) -> str:
    """A long line cut to `keep` characters with file.read's marker."""
    if len(line) <= keep or isinstance(line, CutLine):
        return line
    return cut_marked(line[:keep], keep, len(line))


def cut_marked(head: str, keep: int, length: int) -> CutLine:
    """A line of `length` characters shown as its first `keep` (`head`) and the marker."""
    return CutLine(f"{head}… [line truncated: showing {keep} of {length} characters]")


def file_result(path: str, spans: list[tuple[int, int]], lines: Mapping[int, str],
                shape: Shape, limit: int, more_lines: int = 0) -> dict[str, Any] | None:
    """One file's share of the reply: `spans` as the engine found them (or as far as it
    kept them: `more_lines` counts the matched lines of the rest), `lines` the text of
    every line in the spans and their context windows (without line endings)."""
    spans = merge_spans(spans, shape.merge_adjacent)
    if not spans:
        return None
    count = sum(end - start + 1 for start, end in spans) + more_lines
    entries: list[list[Any]] = []
    if shape.mode == "content":
        keep = shape.max_line_chars
        if shape.before == shape.after == 0:
            entries = [[s, cut_line(lines[s], keep) if s == e else "\n".join(
                cut_line(lines[n], keep) for n in range(s, e + 1))] for s, e in spans[:limit]]
        else:
            matched = {n for s, e in spans for n in range(s, e + 1)}
            last = max(lines)  # a window ends at the file's end, however wide the context
            for s, e in spans[:limit]:
                window = range(max(1, s - shape.before), min(e + shape.after, last) + 1)
                entries.append([s, "\n".join(
                    (MATCH_PREFIX if n in matched else CONTEXT_PREFIX) + cut_line(lines[n], keep)
                    for n in window if n in lines)])
    return {"path": path, "entries": entries, "count": count}


def items(result: dict[str, Any], shape: Shape) -> int:
    """How many reply items one file result makes: its entries, or the file itself."""
    return len(result["entries"]) if shape.mode == "content" else 1


def have(results: list[dict[str, Any]], shape: Shape) -> int:
    """How many reply items these file results make."""
    if shape.mode != "content":
        return len(results)
    return sum(len(r["entries"]) for r in results)


def assemble(results: list[dict[str, Any]], shape: Shape, engine: str,
             files_searched: int) -> dict[str, Any]:
    """The reply: the first max_results items in path order; `truncated` when more exist."""
    cap = shape.max_results
    tail = {"engine": engine, "files_searched": files_searched}
    if shape.mode == "content":
        matches = [{"path": r["path"], "line": line, "content": content}
                   for r in results for line, content in r["entries"]]
        return {"matches": matches[:cap], "truncated": len(matches) > cap, **tail}
    if shape.mode == "files_with_matches":
        return {"files": [r["path"] for r in results[:cap]], "truncated": len(results) > cap,
                **tail}
    counts = [{"path": r["path"], "count": r["count"]} for r in results[:cap]]
    return {"counts": counts, "total": sum(map(_COUNT, counts)),
            "truncated": len(results) > cap, **tail}


def decisive(results: list[dict[str, Any]], shape: Shape) -> int | None:
    """Which of these results (in path order) holds the first item past `max_results`,
    or None: a truncated reply's `files_searched` counts the files the query covers up to
    that one's, which is what a search that stopped there read."""
    if shape.mode != "content":  # one item a file
        return shape.max_results if len(results) > shape.max_results else None
    left = shape.max_results
    for i, result in enumerate(results):
        left -= len(result["entries"])
        if left < 0:
            return i
    return None


@contextmanager
def collector_paused() -> Iterator[None]:
    """Building a reply of a million matches allocates millions of objects, none of them
    in a cycle; the garbage collector's passes over those already built cost more than
    building them (a 1.3M-match fold: 2.4 against 0.8 us a match). It runs again after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class Merge:
    """FanOut merger of the python engine's parts (tools/walk/fanout.py): their files in
    order, done once the finished prefix holds more items than the reply shows."""

    def __init__(self, args: dict[str, Any]) -> None:
        self._shape: Shape = args["shape"]
        self._files: int = args["files"]
        self._results: list[dict[str, Any]] = []
        self._at: list[int] = []
        self._have = 0

    def add(self, result: dict[str, Any]) -> dict[str, Any] | None:
        found = result["results"]
        self._results += found
        self._at += result["at"]
        self._have += have(found, self._shape)
        return self.finish() if self._have > self._shape.max_results else None

    def finish(self) -> dict[str, Any]:
        return python_reply(self._results, self._at, self._shape, self._files)


def python_reply(results: list[dict[str, Any]], at: list[int], shape: Shape,
                 files: int) -> dict[str, Any]:
    """The python engine's reply: `at` holds each result's place among the `files` the
    query covers, for a truncated reply's count (`decisive`)."""
    past = decisive(results, shape)
    return assemble(results, shape, "python", files if past is None else at[past] + 1)


def lines_without_endings(text: str) -> list[str]:
    """Lines without their `\\n` or `\\r\\n`; a final line break starts no new line."""
    if text and text.find("\n") >= len(text) - 1:  # one line (rg's usual message): quick
        line = text[:-1] if text.endswith("\n") else text
        return [line[:-1] if line.endswith("\r") else line]
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def shown(text: str) -> str:
    """Text as the client sees it: bytes that are not UTF-8 (kept as surrogates while
    searching) become U+FFFD, as ripgrep's raw bytes do."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return text
