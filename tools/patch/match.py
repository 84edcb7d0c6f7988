"""Where a patch's `find` lies in a text: the three tiers of docs/protocol.md, `file.patch`.

Tiers, tried in order, the first that finds anything wins (so an exact `find` that occurs
twice is reported as not unique at once, and never loosened):
- `exact`: the text as given;
- `line_endings`: CRLF and LF treated alike on both sides;
- `indentation`: whole lines, each compared without its leading and trailing whitespace;
  accepted only through one indentation mapping that fits every line, the replacement
  written through it (tools.patch.indent).
Nothing looser is ever applied. The replacement's line breaks are written in the file's
style, so an edit never mixes line endings into a file that had one style.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

from chorus_tools.tools.patch.indent import (
    TAB,
    Mapping,
    Misfit,
    fit,
    indent,
    unit_from_indents,
    unit_of,
)
from chorus_tools.tools.read.text import lines_with_endings

EXACT = "exact"
LINE_ENDINGS = "line_endings"
INDENTATION = "indentation"

_BREAK = re.compile(r"\r?\n")
_LEADING = re.compile(r"^[ \t]*(?=\S)", re.MULTILINE)  # each non-blank line's indentation


@dataclass(frozen=True)
class Edit:
    """One occurrence: text[start:end] becomes `text`; `line` is its 1-based first line."""

    start: int
    end: int
    text: str
    line: int


@dataclass(frozen=True)
class Match:
    """The occurrences one tier found; `truncated` when it stopped counting at the limit."""

    tier: str
    edits: list[Edit]
    truncated: bool = False

    @property
    def lines(self) -> list[int]:
        return [e.line for e in self.edits]


@dataclass(frozen=True)
class Refusal:
    """The indentation tier found `find`'s lines at `start_line`-`end_line` (1-based), but
    no single mapping takes them from `find`'s indentation: nothing is applied."""

    start_line: int
    end_line: int
    misfit: Misfit


def locate(text: str, find: str, replace: str, replace_all: bool = False,
           limit: int | None = None) -> Match | Refusal | None:
    """The occurrences of `find` in the first tier that has any, with their replacements;
    None when no tier finds it. `find` must not be empty.

    With `replace_all` the occurrences do not overlap (as str.replace); without it they
    may, because a find that occurs twice, even overlapping itself, is ambiguous. A tier
    stops counting at `limit` occurrences (when more could only say "not unique"), so a
    short find in a huge file costs no more than the limit."""
    for tier in (_exact, _line_endings, _indentation):
        match = tier(text, find, replace, replace_all, limit)
        if match is not None:
            return match
    return None


def exact_at(text: str, find: str, replace: str, at: int) -> Match | None:
    """The exact occurrence of `find` that starts at offset `at`, or None (a change the
    server placed itself, where an identical text elsewhere must not be taken)."""
    if not find or not text.startswith(find, at):
        return None
    spans = [(at, at + len(find))]
    return Match(EXACT, _edits(text, spans, [replace], _line_numbers(text, spans)))


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


def _exact(text: str, find: str, replace: str, disjoint: bool,
           limit: int | None) -> Match | None:
    spans = _occurrences(text, find, disjoint, limit)
    if not spans:
        return None
    return Match(EXACT, _edits(text, spans, [replace] * len(spans), _line_numbers(text, spans)),
                 truncated=limit is not None and len(spans) >= limit)


def _line_endings(text: str, find: str, replace: str, disjoint: bool,
                  limit: int | None) -> Match | None:
    if "\r\n" not in text and "\r\n" not in find:
        return None  # the same search as the exact tier
    flat, crlf_at = _flatten(text)
    spans = _occurrences(flat, find.replace("\r\n", "\n"), disjoint, limit)
    if not spans:
        return None
    # A flat offset q lies after every CRLF whose '\n' sits before q; each lost its '\r'.
    spans = [(s + bisect_left(crlf_at, s), e + bisect_left(crlf_at, e)) for s, e in spans]
    return Match(LINE_ENDINGS,
                 _edits(text, spans, [replace] * len(spans), _line_numbers(text, spans)),
                 truncated=limit is not None and len(spans) >= limit)


def _indentation(text: str, find: str, replace: str, disjoint: bool,
                 limit: int | None) -> Match | Refusal | None:
    find_lines = find.replace("\r\n", "\n").split("\n")
    whole_last = find_lines[-1] == ""  # find ends with a line break: so does the match
    if whole_last:
        find_lines.pop()
    wanted = [line.strip() for line in find_lines]
    if not any(wanted):
        return None  # blank lines alone would match anywhere
    lines = lines_with_endings(text)
    stripped = [content(line).strip() for line in lines]
    rows = _regions(stripped, wanted, disjoint, limit)
    if not rows:
        return None
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    if len(rows) > 1 and not disjoint:  # not unique: where they are is all that is asked
        return Match(INDENTATION, [Edit(starts[i], starts[i], "", i + 1) for i in rows],
                     truncated=limit is not None and len(rows) >= limit)
    replace_lines = replace.replace("\r\n", "\n").split("\n")
    file_unit = _FileUnit(text)
    spans, bodies = [], []
    for i in rows:
        region = lines[i:i + len(wanted)]
        mapping = _mapping(find_lines, region, replace_lines, file_unit)
        if isinstance(mapping, Misfit):
            return Refusal(i + 1, i + len(wanted), mapping)
        body = "\n".join(_through(mapping, line) for line in replace_lines)
        last = region[-1]
        if whole_last:
            end = starts[i + len(wanted)]
            if content(last) == last and body.endswith("\n"):
                body = body[:-1]  # the file's last line has no break: do not add one
        else:
            end = starts[i + len(wanted) - 1] + len(content(last))
        spans.append((starts[i], end))
        bodies.append(body)
    return Match(INDENTATION, _edits(text, spans, bodies, [i + 1 for i in rows]))


def _regions(stripped: list[str], wanted: list[str], disjoint: bool,
             limit: int | None) -> list[int]:
    """The 0-based first lines of the regions whose lines equal `wanted` stripped (at most
    `limit` of them). One string search over the lines joined, never a comparison per
    line that could start a region: a find of many repeated lines (`}`) in a file of
    them stays linear (it was quadratic: 1 MiB took 26 s)."""
    haystack = "\n" + "\n".join(stripped) + "\n"
    needle = "\n" + "\n".join(wanted) + "\n"
    step = len(needle) - 1 if disjoint else 1
    rows: list[int] = []
    line, counted = 0, 0
    pos = haystack.find(needle)
    while pos >= 0 and (limit is None or len(rows) < limit):
        line += haystack.count("\n", counted, pos + 1) - (1 if counted == 0 else 0)
        counted = pos + 1
        rows.append(line)
        pos = haystack.find(needle, pos + step)
    return rows


class _FileUnit:
    """The whole file's indentation unit, measured once however many regions ask (and only
    when one does: a shift needs no unit)."""

    def __init__(self, text: str) -> None:
        self.text = text

    @cached_property
    def unit(self) -> str | None:
        return unit_from_indents(_LEADING.findall(self.text))


def _mapping(find_lines: list[str], region: list[str], replace_lines: list[str],
             file_unit: _FileUnit) -> Mapping | Misfit:
    """The mapping (docs/protocol.md, `file.patch`) that takes this region's lines from
    `find`'s, or why none."""
    pairs = [(indent(f), indent(r)) for f, r in zip(find_lines, region) if f.strip()]
    replace_inds = [indent(line) if line.strip() else None for line in replace_lines]
    region_inds = [r for _, r in pairs if r]
    if region_inds:
        spaces_only = not any(TAB in r for r in region_inds)
    else:
        spaces_only = file_unit.unit not in (None, TAB)
    return fit(pairs, replace_inds, _units(region, file_unit),
               unit_of(find_lines, replace_lines), spaces_only)


def _units(region: list[str], file_unit: _FileUnit) -> Iterator[str]:
    """The region's own unit, then the file's (measured only if asked for)."""
    own = unit_of(region)
    if own:
        yield own
    if file_unit.unit and file_unit.unit != own:
        yield file_unit.unit


def _through(mapping: Mapping, line: str) -> str:
    """One replace line written through the mapping (blank lines empty)."""
    if not line.strip():
        return ""
    ind = indent(line)
    out = mapping.map(ind)
    assert out is not None  # fit() checked every replace line
    return out + line[len(ind):]


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


def _occurrences(text: str, find: str, disjoint: bool,
                 limit: int | None) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    step = len(find) if disjoint else 1
    pos = text.find(find)
    while pos >= 0 and (limit is None or len(spans) < limit):
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
    return line.removesuffix("\n")
