"""file.patch's unified diff: difflib's text, without difflib's whole-file work when the
change is one block of lines whose diff is known in advance.

difflib's SequenceMatcher indexes every line of both texts and scans them in Python, so
the diff was the largest cost of patching a small file and grew to milliseconds on a
few thousand lines, for an edit of one line. Most patches change one block: the texts
share a prefix P and a suffix S around lines A (old) and B (new). When no line of A
occurs in the new text and no line of B in the old one, every block difflib can match
lies inside P or inside S, and its rules (longest block first, earliest in the old text,
then in the new) pick P and S whole: that is one hunk, built here by `_one_hunk` in time
proportional to the few lines that differ plus C-level scans. It declines (and difflib
runs) where those rules could choose otherwise; see `_one_hunk`. tests/tools/test_patch_diff.py
checks that both give the same text.
"""

from __future__ import annotations

import difflib
from itertools import compress, count
from operator import ne

from chorus_tools.tools.read.text import lines_with_endings

CONTEXT = 3  # difflib.unified_diff's default n
_MARKER_ROOM = 100  # bytes kept free under the diff cap for the "truncated" line
_AUTOJUNK_MIN = 200  # difflib ignores "popular" lines of a new text this long or longer


def unified_diff(before: str, after: str, rel: str, *, created: bool, limit: int) -> str:
    """A unified diff (a/ b/ headers; /dev/null for a new file), cut at a line boundary
    to at most `limit` bytes of UTF-8 plus a last line saying how much was cut."""
    old, new = lines_with_endings(before), lines_with_endings(after)
    source, target = "/dev/null" if created else f"a/{rel}", f"b/{rel}"
    hunk = _one_hunk(old, new)
    produced = (difflib.unified_diff(old, new, source, target) if hunk is None
                else [f"--- {source}\n", f"+++ {target}\n", *hunk])
    lines = []
    for line in produced:
        lines.append(line)
        if not line.endswith("\n"):
            lines[-1] += "\n"
            lines.append("\\ No newline at end of file\n")
    return _capped(lines, limit)


def _capped(lines: list[str], limit: int) -> str:
    sizes = [len(line.encode("utf-8", "surrogatepass")) for line in lines]
    if sum(sizes) <= limit:
        return "".join(lines)
    kept, size = 0, 0
    while size + sizes[kept] <= limit - _MARKER_ROOM:
        size += sizes[kept]
        kept += 1
    cut = lines[kept:]
    cut_bytes = sum(sizes[kept:])
    return "".join(lines[:kept]) + (f"... diff truncated: {len(cut)} more lines "
                                    f"({cut_bytes} bytes) not shown\n")


def _one_hunk(old: list[str], new: list[str]) -> list[str] | None:
    """The hunk difflib.unified_diff would give, when the change is one block it is bound
    to report as such; None when that is not certain.

    With P, A, B, S as in the module's docstring and A, B sharing no line with the other
    text, a block of equal lines cannot contain a line of A or B, so it lies in P or S on
    each side, provided it cannot straddle the seam where A or B is empty (hence: the last
    line of P is not in S, the first of S not in P). Of the longest blocks, a diagonal
    one (P against P, S against S) always starts as early as any other, so difflib takes
    it, grows it over equal neighbours to all of P or S, and finds the other in what is
    left. Except one case: for a new text of 200+ lines, difflib ignores lines that fill
    over 1% of it, and S made only of such lines (blank lines, closing braces) is never
    matched (P still is: an empty match grows from the start)."""
    if old == new:
        return None
    short = min(len(old), len(new))
    p = next(compress(count(), map(ne, old, new)), short)
    s = next(compress(count(), map(ne, reversed(old), reversed(new))), short)
    s = min(s, short - p)
    gone, added = old[p:len(old) - s], new[p:len(new) - s]
    if not set(gone).isdisjoint(new) or not set(added).isdisjoint(old):
        return None
    prefix, suffix = old[:p], old[len(old) - s:]
    if (not gone or not added) and p and s and (prefix[-1] in suffix or suffix[0] in prefix):
        return None
    if s and len(new) >= _AUTOJUNK_MIN:
        popular = len(new) // 100 + 1
        if all(new.count(line) > popular for line in dict.fromkeys(suffix)):
            return None
    start = max(0, p - CONTEXT)
    after = suffix[:CONTEXT]
    old_end, new_end = p + len(gone) + len(after), p + len(added) + len(after)
    return [f"@@ -{_range(start, old_end)} +{_range(start, new_end)} @@\n",
            *[" " + line for line in old[start:p]], *["-" + line for line in gone],
            *["+" + line for line in added], *[" " + line for line in after]]


def _range(start: int, stop: int) -> str:
    """A hunk's line range as difflib writes it: 'n' for one line, 'n,len' otherwise, and
    for none the line before."""
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start + (1 if length else 0)},{length}"
