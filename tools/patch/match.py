"""Where a patch's `find` lies in a text: the three tiers of docs/protocol.md, `file.patch`.

Tiers, tried in order, the first that finds anything wins (so an exact `find` that occurs
twice is reported as not unique at once, and never loosened):
- `exact`: the text as given;
- `line_endings`: CRLF and LF treated alike on both sides;
- `indentation`: whole lines, each compared without its leading and trailing whitespace;
  the replacement is re-indented into the file's unit (tools.patch_indent).
Nothing looser is ever applied. The replacement's line breaks are written in the file's
style, so an edit never mixes line endings into a file that had one style.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass

from chorus_tools.tools.patch.indent import FileUnits, find_unit, indent, reindent
from chorus_tools.tools.read.text import lines_with_endings

EXACT = "exact"
LINE_ENDINGS = "line_endings"
INDENTATION = "indentation"

_BREAK = re.compile(r"\r?\n")


@dataclass(frozen=True)
class Edit:
    """One occurrence: text[start:end] becomes `text`; `line` is its 1-based first line."""

    start: int
    end: int
    text: str
    line: int


@dataclass(frozen=True)
class Match:
    tier: str
    edits: list[Edit]

    @property
    def lines(self) -> list[int]:
        return [e.line for e in self.edits]


def locate(text: str, find: str, replace: str, replace_all: bool = False) -> Match | None:
    """The occurrences of `find` in the first tier that has any, with their replacements;
    None when no tier finds it. `find` must not be empty.

    With `replace_all` the occurrences do not overlap (as str.replace); without it they
    may, because a find that occurs twice, even overlapping itself, is ambiguous."""
    for tier in (_exact, _line_endings, _indentation):
        match = tier(text, find, replace, replace_all)
        if match is not None:
            return match
    return None


def apply(text: str, match: Match) -> str:
    """The text with every edit of `match` made."""
    pieces = []
    pos = 0
    for edit in match.edits:
        pieces.append(text[pos:edit.start])
        pieces.append(edit.text)
        pos = edit.end
    pieces.append(text[pos:])
    return "".join(pieces)


def _exact(text: str, find: str, replace: str, disjoint: bool) -> Match | None:
    spans = _occurrences(text, find, disjoint)
    if not spans:
        return None
    return Match(EXACT, _edits(text, spans, [replace] * len(spans), _line_numbers(text, spans)))


def _line_endings(text: str, find: str, replace: str, disjoint: bool) -> Match | None:
    if "\r\n" not in text and "\r\n" not in find:
        return None  # the same search as the exact tier
    flat, crlf_at = _flatten(text)
    spans = _occurrences(flat, find.replace("\r\n", "\n"), disjoint)
    if not spans:
        return None
    # A flat offset q lies after every CRLF whose '\n' sits before q; each lost its '\r'.
    spans = [(s + bisect_left(crlf_at, s), e + bisect_left(crlf_at, e)) for s, e in spans]
    return Match(LINE_ENDINGS,
                 _edits(text, spans, [replace] * len(spans), _line_numbers(text, spans)))


def _indentation(text: str, find: str, replace: str, disjoint: bool) -> Match | None:
    find_lines = find.replace("\r\n", "\n").split("\n")
    whole_last = find_lines[-1] == ""  # find ends with a line break: so does the match
    if whole_last:
        find_lines.pop()
    wanted = [line.strip() for line in find_lines]
    if not any(wanted):
        return None  # blank lines alone would match anywhere
    lines = lines_with_endings(text)
    stripped = [content(line).strip() for line in lines]
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    first = next(i for i, w in enumerate(wanted) if w)
    find_indent = indent(find_lines[first])
    src = find_unit(find_lines, replace.replace("\r\n", "\n").split("\n"))
    units = FileUnits(lines, src)
    spans, bodies, rows = [], [], []
    i, n, m = 0, len(lines), len(wanted)
    while i + m <= n:
        if stripped[i + first] != wanted[first] or stripped[i:i + m] != wanted:
            i += 1
            continue
        last = lines[i + m - 1]
        body = reindent(replace, find_indent, indent(lines[i + first]), src,
                        units.of(lines[i:i + m]))
        if whole_last:
            end = starts[i + m]
            if content(last) == last and body.endswith("\n"):
                body = body[:-1]  # the file's last line has no break: do not add one
        else:
            end = starts[i + m - 1] + len(content(last))
        spans.append((starts[i], end))
        bodies.append(body)
        rows.append(i + 1)
        i += m if disjoint else 1
    if not spans:
        return None
    return Match(INDENTATION, _edits(text, spans, bodies, rows))


def _line_numbers(text: str, spans: list[tuple[int, int]]) -> list[int]:
    """The 1-based line of each span's start, counted incrementally (spans in order)."""
    numbers = []
    line, pos = 1, 0
    for start, _ in spans:
        line += text.count("\n", pos, start)
        pos = start
        numbers.append(line)
    return numbers


def _edits(text: str, spans: list[tuple[int, int]], bodies: list[str],
           lines: list[int]) -> list[Edit]:
    """Edits whose replacements break lines in the style of the region they replace
    (the file's prevailing style when the region has no line break)."""
    default_eol = _dominant_eol(text)
    edits = []
    for (start, end), body, line in zip(spans, bodies, lines):
        eol = _dominant_eol(text[start:end]) or default_eol
        if eol is not None:
            body = _BREAK.sub(eol, body)
        edits.append(Edit(start, end, body, line))
    return edits


def _occurrences(text: str, find: str, disjoint: bool) -> list[tuple[int, int]]:
    spans = []
    step = len(find) if disjoint else 1
    pos = text.find(find)
    while pos >= 0:
        spans.append((pos, pos + len(find)))
        pos = text.find(find, pos + step)
    return spans


def _flatten(text: str) -> tuple[str, list[int]]:
    """The text with CRLF as LF, and the flat offset of each '\\n' that was a CRLF."""
    crlf_at = []
    shift = 0
    pos = text.find("\r\n")
    while pos >= 0:
        crlf_at.append(pos - shift)
        shift += 1
        pos = text.find("\r\n", pos + 2)
    return text.replace("\r\n", "\n"), crlf_at


def _dominant_eol(text: str) -> str | None:
    """'\\r\\n' or '\\n', whichever ends more lines of `text` (CRLF wins only a strict
    majority); None when no line ends in it."""
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    if not crlf and not lf:
        return None
    return "\r\n" if crlf > lf else "\n"


def content(line: str) -> str:
    """A line without its line break."""
    if line.endswith("\r\n"):
        return line[:-2]
    return line[:-1] if line.endswith("\n") else line
