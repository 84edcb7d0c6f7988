"""Where each hunk of a V4A update lies in a file: Codex's seek_sequence, made strict.

Lines are compared in Codex's tiers, the first tier with any fit winning: `exact`, then
ignoring trailing whitespace, then trimmed, then with Unicode dashes, quotes and spaces
read as their ASCII forms. Each hunk is searched after the one before. Unlike Codex, which
silently takes the first fit:
- a hunk without an `@@` anchor must fit exactly one place after the previous hunk;
- with anchors, each place the first anchor fits starts a chain (every further anchor,
  then the hunk's lines, taken at their first fit after the one before: the anchor
  decides, as in Codex); the chains must all end at the same place.
More than one place is `NotUnique`, none `NotFound`; the caller turns them into
find_not_unique / find_not_found with the patch's line and the file's closest region.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from chorus_tools.tools.dialects.v4a import Hunk

_ASCII = str.maketrans({
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
    **dict.fromkeys("\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
                    "\u202f\u205f\u3000", " ")})

TIERS: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("exact", lambda s: s),
    ("trailing_whitespace", str.rstrip),
    ("trimmed", str.strip),
    ("unicode", lambda s: s.strip().translate(_ASCII)),
)


@dataclass(frozen=True)
class Place:
    """A hunk's place: file lines [start, start + length) become `new`, found by `tier`
    (an insertion has length 0)."""

    start: int
    length: int
    new: tuple[str, ...]
    tier: str
    old: tuple[str, ...]


class NotFound(Exception):
    def __init__(self, what: tuple[str, ...], anchor: bool) -> None:
        super().__init__(what)
        self.what, self.anchor = what, anchor


class NotUnique(Exception):
    def __init__(self, starts: list[int], tier: str) -> None:
        super().__init__(starts)
        self.starts, self.tier = starts, tier


class Lines:
    """A file's lines (without their line breaks), keyed per tier on first use."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self._keyed: dict[str, list[str]] = {}

    def _key(self, tier: str, key: Callable[[str], str]) -> list[str]:
        if tier == "exact":
            return self.lines
        if tier not in self._keyed:
            self._keyed[tier] = [key(line) for line in self.lines]
        return self._keyed[tier]

    def fits(self, pattern: tuple[str, ...], start: int, *, eof: bool = False,
             first: bool = False) -> tuple[str, list[int]]:
        """The tier and the starts of every fit of `pattern` at or after `start` (only
        the first with `first`; only at the very end with `eof`), in the first tier
        that has any; ('', []) when none does."""
        m, n = len(pattern), len(self.lines)
        last = n - m
        if eof:
            start = max(start, last)
        for tier, key in TIERS:
            keyed = self._key(tier, key)
            want = [key(p) for p in pattern]
            found = []
            i = start
            while i <= last:
                try:
                    i = keyed.index(want[0], i, last + 1)
                except ValueError:
                    break
                if keyed[i:i + m] == want:
                    found.append(i)
                    if first:
                        break
                i += 1
            if found:
                return tier, found
        return "", []


def place(lines: Lines, hunk: Hunk, after: int) -> Place:
    """The one place of `hunk` at or after line index `after`, or NotFound/NotUnique.
    As in Codex, lines that end with an empty one (the file's final line break) are
    tried again without it."""
    old, new = hunk.old, hunk.new
    try:
        return _place(lines, hunk, old, new, after)
    except NotFound:
        if not old or old[-1] != "":
            raise
        return _place(lines, hunk, old[:-1], new[:-1] if new and new[-1] == "" else new,
                      after)


def _place(lines: Lines, hunk: Hunk, old: tuple[str, ...], new: tuple[str, ...],
           after: int) -> Place:
    if not hunk.anchors:
        if not old:  # a pure addition: at the end, before a final blank line (Codex's)
            end = len(lines.lines)
            end -= 1 if end > after and lines.lines[-1] == "" and not hunk.end_of_file else 0
            return Place(end, 0, new, "exact", old)
        tier, starts = lines.fits(old, after, eof=hunk.end_of_file)
        if not starts:
            raise NotFound(old, anchor=False)
        if len(starts) > 1:
            raise NotUnique(starts, tier)
        return Place(starts[0], len(old), new, tier, old)
    tier, heads = lines.fits(hunk.anchors[:1], after)
    if not heads:
        raise NotFound(hunk.anchors[:1], anchor=True)
    places: dict[int, Place] = {}
    missing: tuple[str, ...] = old
    for head in heads:
        got = _chain(lines, hunk, old, new, head + 1)
        if isinstance(got, Place):
            places.setdefault(got.start, got)
        else:
            missing = got
    if not places:
        raise NotFound(missing, anchor=missing != old)
    if len(places) > 1:
        raise NotUnique(sorted(places), tier)
    return next(iter(places.values()))


def _chain(lines: Lines, hunk: Hunk, old: tuple[str, ...], new: tuple[str, ...],
           at: int) -> Place | tuple[str, ...]:
    """Follow the further anchors, then the lines, each at its first fit after the one
    before: the place, or what was missing."""
    for anchor in hunk.anchors[1:]:
        _, fit = lines.fits((anchor,), at, first=True)
        if not fit:
            return (anchor,)
        at = fit[0] + 1
    if not old:  # a pure addition after its anchor (Codex appends it to the file)
        return Place(len(lines.lines) if hunk.end_of_file else at, 0, new, "exact", old)
    tier, fit = lines.fits(old, at, eof=hunk.end_of_file, first=True)
    if not fit:
        return old
    return Place(fit[0], len(old), new, tier, old)
