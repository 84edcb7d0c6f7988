"""difflib's similarity of a file's window to a `find`, within a budget of work, so that no
find makes the hint of find_not_found take longer than a fraction of a second.

difflib's SequenceMatcher is quadratic in the pairs of equal elements its two sequences
hold (a find of a thousand equal lines, one line of a megabyte against a find of its
characters). Each comparison is first priced by its sizes and those pairs, in steps of
about a tenth of a microsecond; it runs while the budget pays for it. Past the budget
(docs/protocol.md, file.patch: the hint's bound) a comparison credits only the elements
the two sequences share at their start and end, found by C-level slicing, and every
later comparison of the same hint does the same: a lower bound on difflib's ratio, in
time linear in the sizes. Finds of a few hundred lines in files of thousands never come
near the budget and are scored exactly as difflib scores them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from difflib import SequenceMatcher
from typing import TypeVar

WORK_BUDGET = 5_000_000  # steps one hint may take: 0.25-0.5 s of difflib's Python
_SETUP = 50  # steps a SequenceMatcher costs before it compares anything
_PER_ELEMENT = 4  # steps per element it indexes or scans, besides the equal pairs
_CHAR_COMPARE_LIMIT = 2_000  # longer finds are compared line by line (char-level is slow)

S = TypeVar("S", str, Sequence[str])


class Budget:
    """The steps of difflib work one hint may still take; once a comparison is refused,
    every later one takes the cheap path too (`cut`)."""

    def __init__(self, steps: int = WORK_BUDGET) -> None:
        self.left = steps
        self.cut = False

    def pay(self, steps: int) -> bool:
        """Spend `steps` if they are left; else the budget is cut for good."""
        if self.cut or steps > self.left:
            self.cut = True
            return False
        self.left -= steps
        return True


def shared_ends(a: S, b: S) -> tuple[int, int]:
    """How many elements `a` and `b` share at their start, and then at their end (the
    end's not overlapping the start's): C-level comparisons of slices that double while
    they agree, so the cost is the length shared, not the length held."""
    head = _shared(a, b, lambda x, i, k: x[i:i + k])
    a, b = a[head:], b[head:]
    return head, _shared(a, b, lambda x, i, k: x[len(x) - i - k:len(x) - i])


def _shared(a: S, b: S, part: Callable[[S, int, int], S]) -> int:
    """The length of the run `part` (a slice `k` long, `i` from one end) agrees on."""
    n, i, k = min(len(a), len(b)), 0, 1
    while i < n:
        k = min(k, n - i)
        if part(a, i, k) == part(b, i, k):
            i, k = i + k, k * 2
        elif k == 1:
            break
        else:
            k //= 2
    return i


def pairs(a: Counter[str], b: Counter[str]) -> int:
    """The pairs of equal elements of two sequences, given their counts: what difflib's
    longest-match search walks through at least once."""
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    return sum(n * large[x] for x, n in small.items() if x in large)


def char_ratio(a: str, b: str, budget: Budget) -> float:
    """difflib's ratio of two strings (b indexed), or its lower bound past the budget."""
    both = len(a) + len(b)
    if not both:
        return 1.0
    cost = _SETUP + _PER_ELEMENT * both
    if budget.pay(cost) and budget.pay(pairs(Counter(a), Counter(b))):
        return SequenceMatcher(None, a, b, autojunk=False).ratio()
    return 2 * sum(shared_ends(a, b)) / both


class Comparer:
    """difflib's ratio of a window against the find, behind its cheap upper bounds.

    A long find is aligned line by line (character alignment of kilobytes is slow), and
    each pair of differing lines that face each other is credited with its own character
    ratio, so the score stays close to the character ratio: a window is not preferred for
    leaving out the one line that holds the typo."""

    def __init__(self, wanted: list[str], budget: Budget) -> None:
        self.wanted, self.budget = wanted, budget
        self.by_lines = sum(map(len, wanted)) > _CHAR_COMPARE_LIMIT
        self.seq2: list[str] | str = wanted if self.by_lines else "\n".join(wanted)
        self.counts = Counter(self.seq2)
        self.matcher = SequenceMatcher(None, autojunk=False)
        budget.pay(_SETUP + _PER_ELEMENT * len(self.seq2))
        self.matcher.set_seq2(self.seq2)

    def __call__(self, window: list[str], floor: float) -> float:
        if not self.by_lines:
            return self._by_chars("\n".join(window), floor)
        return self._by_lines(window)

    def _by_chars(self, text: str, floor: float) -> float:
        m, find = self.matcher, self.seq2
        m.set_seq1(text)
        if m.real_quick_ratio() <= floor:
            return 0.0
        if self.budget.pay(_PER_ELEMENT * len(text)):
            if m.quick_ratio() <= floor:
                return 0.0
            if self.budget.pay(pairs(Counter(text), self.counts)):
                return m.ratio()
        return 2 * sum(shared_ends(text, find)) / (len(text) + len(find))

    def _by_lines(self, window: list[str]) -> float:
        wanted = self.wanted
        head, tail = shared_ends(window, wanted)
        same = float(sum(map(len, window[:head])) + sum(map(len, window[len(window) - tail:])))
        middle, against = window[head:len(window) - tail], wanted[head:len(wanted) - tail]
        if (self.budget.pay(_SETUP + _PER_ELEMENT * len(window))
                and self.budget.pay(pairs(Counter(window), self.counts))):
            same, middle, against = 0.0, window, wanted
            self.matcher.set_seq1(window)
            blocks = self.matcher.get_opcodes()
        else:
            blocks = [("replace", 0, len(middle), 0, len(against))] if middle else []
        for tag, i1, i2, j1, j2 in blocks:
            if tag == "equal":
                same += sum(map(len, middle[i1:i2]))
            elif tag == "replace":
                for a, b in zip(middle[i1:i2], against[j1:j2]):
                    if self.budget.cut:
                        break
                    same += char_ratio(a, b, self.budget) * (len(a) + len(b)) / 2
        both = sum(map(len, window)) + sum(map(len, wanted))
        return 2 * same / both if both else 1.0
