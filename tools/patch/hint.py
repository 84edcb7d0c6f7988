"""The region of a file closest to a `find` that matched nowhere, so an agent can fix its
`find` without reading the file again.

Comparing `find` with every window of the file by difflib's ratio is quadratic; instead a
sliding multiset of tokens scores every window of the find's line count in one pass, and
only the best few windows (and their neighbours one line shorter and longer) are compared
by the real ratio. Lines are compared without their leading and trailing whitespace, so a
find that lost its indentation still lands on its region.

A `find` sent JSON-escaped twice holds the two characters backslash-n where line breaks
were meant: one line that resembles no single line of the file. Such a find is also
scored as the lines those sequences separate, and the better region wins.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter
from difflib import SequenceMatcher
from typing import Any

from chorus_tools.tools.patch.match import content
from chorus_tools.tools.read.text import lines_with_endings

MIN_SIMILARITY = 0.5
_CANDIDATES = 12
_CHAR_COMPARE_LIMIT = 2_000  # longer finds are compared line by line (char-level is slow)
_TOKEN = re.compile(r"\w+|[^\w\s]")
_ESCAPE = re.compile(r'\\(?:r\\n|[nt"\\])')
_UNESCAPED = {"\\n": "\n", "\\r\\n": "\n", "\\t": "\t", '\\"': '"', "\\\\": "\\"}


def closest_region(text: str, find: str) -> dict[str, Any] | None:
    """`{start_line, end_line, text, similarity}` of the region most like `find`
    (1-based inclusive lines), or None when nothing reaches MIN_SIMILARITY. The
    similarity stays below 1: an identical region would have matched. A find with
    escaped line breaks (see escaped_newlines) is also scored with them unescaped."""
    hint = _closest(text, find)
    if not escaped_newlines(find):
        return hint
    unescaped = _closest(text, _ESCAPE.sub(lambda m: _UNESCAPED[m.group()], find))
    if hint is None or (unescaped is not None and unescaped["similarity"] > hint["similarity"]):
        return unescaped
    return hint


def escaped_newlines(find: str) -> bool:
    """Does `find` hold backslash-n sequences and no line break (a double-escaped find)?"""
    return "\n" not in find and "\\n" in find


def _closest(text: str, find: str) -> dict[str, Any] | None:
    wanted = [line.strip() for line in find.replace("\r\n", "\n").split("\n")]
    if len(wanted) > 1 and not wanted[-1]:
        wanted.pop()  # the break that ends find's last line
    lines = lines_with_endings(text)
    if not lines or not any(wanted):
        return None
    keys = [content(line).strip() for line in lines]
    size = min(len(wanted), len(keys))
    compare = _Comparer(wanted)
    best, best_start, best_size = 0.0, 0, size
    for start in _candidates(keys, wanted, size):
        for n in {size - 1, size, size + 1} - {0}:
            if start + n > len(keys):
                continue
            score = compare(keys[start:start + n], best)
            if score > best:
                best, best_start, best_size = score, start, n
    if best < MIN_SIMILARITY:
        return None
    region = "".join(lines[best_start:best_start + best_size])
    return {"start_line": best_start + 1, "end_line": best_start + best_size,
            "text": content(region), "similarity": min(round(best, 3), 0.999)}


def _candidates(keys: list[str], wanted: list[str], size: int) -> list[int]:
    """Starts of the windows of `size` lines sharing the most tokens with `wanted`
    (Dice coefficient of token multisets, updated as the window slides)."""
    want = Counter(t for line in wanted for t in _TOKEN.findall(line))
    want_total = sum(want.values())
    counts, shared = [], []  # per line: its token count, its tokens that find has
    for key in keys:
        tokens = _TOKEN.findall(key)
        counts.append(len(tokens))
        shared.append([t for t in tokens if t in want])
    have = dict.fromkeys(want, 0)
    overlap = total = 0
    scores = []
    for i in range(len(keys)):
        for t in shared[i]:
            if have[t] < want[t]:
                overlap += 1
            have[t] += 1
        total += counts[i]
        if i >= size:
            for t in shared[i - size]:
                have[t] -= 1
                if have[t] < want[t]:
                    overlap -= 1
            total -= counts[i - size]
        if i >= size - 1:
            both = want_total + total
            scores.append((2 * overlap / both if both else 0.0, -(i - size + 1)))
    return [-neg for _, neg in heapq.nlargest(_CANDIDATES, scores)]


class _Comparer:
    """difflib's ratio of a window against the find, behind its cheap upper bounds.

    A long find is aligned line by line (character alignment of kilobytes is slow), and
    each pair of differing lines that face each other is credited with its own character
    ratio, so the score stays close to the character ratio: a window is not preferred for
    leaving out the one line that holds the typo."""

    def __init__(self, wanted: list[str]) -> None:
        self.wanted = wanted
        self.by_lines = sum(map(len, wanted)) > _CHAR_COMPARE_LIMIT
        self.matcher = SequenceMatcher(None, autojunk=False)
        self.matcher.set_seq2(wanted if self.by_lines else "\n".join(wanted))

    def __call__(self, window: list[str], floor: float) -> float:
        m = self.matcher
        if not self.by_lines:
            m.set_seq1("\n".join(window))
            if m.real_quick_ratio() <= floor or m.quick_ratio() <= floor:
                return 0.0
            return m.ratio()
        m.set_seq1(window)
        same = 0.0
        for tag, i1, i2, j1, j2 in m.get_opcodes():
            if tag == "equal":
                same += sum(map(len, window[i1:i2]))
            elif tag == "replace":
                for a, b in zip(window[i1:i2], self.wanted[j1:j2]):
                    same += SequenceMatcher(None, a, b, autojunk=False).ratio() * (
                        len(a) + len(b)) / 2
        both = sum(map(len, window)) + sum(map(len, self.wanted))
        return 2 * same / both if both else 1.0
