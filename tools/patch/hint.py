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
from typing import Any

from chorus_tools.tools.patch.compare import Budget, Comparer
from chorus_tools.tools.patch.match import content
from chorus_tools.tools.read.text import lines_with_endings

MIN_SIMILARITY = 0.5
_CANDIDATES = 12
_TOKEN = re.compile(r"\w+|[^\w\s]")
_ESCAPE = re.compile(r'\\(?:r\\n|[nt"\\])')
_UNESCAPED = {"\\n": "\n", "\\r\\n": "\n", "\\t": "\t", '\\"': '"', "\\\\": "\\"}


def closest_region(text: str, find: str, budget: Budget | None = None) -> dict[str, Any] | None:
    """`{start_line, end_line, text, similarity}` of the region most like `find`
    (1-based inclusive lines), or None when nothing reaches MIN_SIMILARITY. The
    similarity stays below 1: an identical region would have matched. A find with
    escaped line breaks (see escaped_newlines) is also scored with them unescaped. The
    comparisons take at most `budget`'s work; its `cut` says whether they ran out of it
    (the region found is then the closest found within it)."""
    budget = budget or Budget()
    hint = _closest(text, find, budget)
    if not escaped_newlines(find):
        return hint
    unescaped = _closest(text, _ESCAPE.sub(lambda m: _UNESCAPED[m.group()], find), budget)
    if hint is None or (unescaped is not None and unescaped["similarity"] > hint["similarity"]):
        return unescaped
    return hint


def escaped_newlines(find: str) -> bool:
    """Does `find` hold backslash-n sequences and no line break (a double-escaped find)?"""
    return "\n" not in find and "\\n" in find


def _closest(text: str, find: str, budget: Budget) -> dict[str, Any] | None:
    wanted = [line.strip() for line in find.replace("\r\n", "\n").split("\n")]
    if len(wanted) > 1 and not wanted[-1]:
        wanted.pop()  # the break that ends find's last line
    lines = lines_with_endings(text)
    if not lines or not any(wanted):
        return None
    keys = [content(line).strip() for line in lines]
    size = min(len(wanted), len(keys))
    compare = Comparer(wanted, budget)
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
