"""UTF-8 with a few bytes that are not: what counts as such a file, and how an edit keeps
those bytes (docs/protocol.md, `file.read`). UTF-16 behind its BOM reads its lone
surrogates and a cut last unit as U+FFFD too, and `reencode` keeps their bytes alike.

A file that is not UTF-8 is still UTF-8 when most of its bytes over 0x7F belong to
well-formed UTF-8 characters (`Tally.mostly_utf8`: a UTF-8 file with a stray byte, a log
with a cut character, a pasted paragraph in another encoding). This is judged on the whole
file, before any legacy encoding is named from a sample (tools/read/legacy.py), and the
same rule keeps the detector off a mostly-UTF-8 sample. Such a file reads as UTF-8 with
each maximal ill-formed sequence shown as one U+FFFD (Python's and ripgrep's "replace"),
and `invalid_bytes` counts the bytes of those sequences. A file with no well-formed
multi-byte character stays latin-1 (`café` in latin-1 is not broken UTF-8).

An edit works on the text, where a bad sequence is a U+FFFD like any other, and
`reencode` writes it back (tools/read/reencode.py). The text before the first change and
after the last keeps its bytes, bad ones included. In the changed stretch between, each
U+FFFD keeps the bytes of the U+FFFD it stands for: the k-th of the new stretch the k-th
of the old when both hold as many, otherwise the one difflib pairs it with (the text around
them anchors it), else it is the character U+FFFD (EF BF BD). So a `find` holding the
U+FFFD the file shows and a `replace` keeping it keep the bad byte; a U+FFFD only new text
holds is the character. Text alone cannot tell alike U+FFFDs apart: when an edit removes
one, the one kept has bytes that were in the file, in that stretch. Kept bytes that the
edit brings together so that they would read as other text (the halves of a cut sequence,
with the text between them removed) are written as U+FFFD instead.
"""

from __future__ import annotations

import codecs
import difflib
import re
import threading

_HIGH = bytes(range(0x80, 0x100))
_FFFD = "\ufffd"
_SPLIT = re.compile(f"({_FFFD})")
_ALIGN_LIMIT = 4096  # pieces of a changed stretch difflib aligns at most (else in order)


class Tally:
    """Bytes over 0x7F, and how many of them are in no well-formed UTF-8 character, over
    a file fed in pieces (the last with `final`; a sequence cut at the end is bad)."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("ignore")
        self.high = 0
        self.bad = 0

    def feed(self, piece: bytes | bytearray, final: bool = False) -> None:
        high = len(piece) - len(piece.translate(None, _HIGH))
        held = len(self._decoder.getstate()[0])
        if not (high or held or final):
            return  # ASCII with nothing pending: all well-formed
        kept = len(self._decoder.decode(piece, final).encode("utf-8"))
        self.bad += held + len(piece) - kept - len(self._decoder.getstate()[0])
        self.high += high

    @property
    def mostly_utf8(self) -> bool:
        """Do more bytes over 0x7F belong to well-formed UTF-8 characters than not?"""
        return self.high - self.bad > self.bad


def tally(data: bytes | bytearray) -> Tally:
    """The tally of a whole byte string."""
    counted = Tally()
    counted.feed(data, final=True)
    return counted


def reencode(before: str, original: bytes, after: str, codec: str = "utf-8") -> bytes:
    """`after`, an edit of `before` (the text of `original`, UTF-8 with bad bytes, BOM
    removed), as bytes: valid UTF-8 but for the bytes of the U+FFFDs kept. The same for
    UTF-16 (`codec` "utf-16-le" or "-be"), whose lone surrogates and cut last unit read
    as U+FFFD too: if a kept odd byte would shift the units after it, the edit is the
    text encoded afresh (a U+FFFD it kept is then the character)."""
    sources = _sources(original, codec)
    old, new = _SPLIT.split(before), _SPLIT.split(after)  # U+FFFDs at the odd indexes
    shorter = min(len(old), len(new))
    head = _same(old, new, range(shorter))
    head -= head % 2  # the changed stretch starts and ends with a run of text
    tail = _same(old, new, range(-1, head - shorter - 1, -1))
    tail -= tail % 2
    kept = {j: sources[j // 2] for j in range(1, head, 2)}
    kept.update({j: sources[(len(old) - len(new) + j) // 2]
                 for j in range(len(new) - tail, len(new)) if j % 2})
    kept.update(_stretch(old[head:len(old) - tail], new[head:len(new) - tail],
                         sources[head // 2:(len(old) - tail) // 2], head))
    fffd = _FFFD.encode(codec)
    out: list[bytes] = []
    for j, piece in enumerate(new):
        if j % 2 == 0:
            out.append(piece.encode(codec))
        else:
            out.append(_alone(out[-2] if j > 1 and not new[j - 1] else b"",
                              kept.get(j, fffd), codec))
    joined = b"".join(out)
    if codec != "utf-8" and joined.decode(codec, "replace") != after:
        return after.encode(codec)
    return joined


def _stretch(old: list[str], new: list[str], sources: list[bytes],
             at: int) -> dict[int, bytes]:
    """The kept bytes of the U+FFFDs of the changed stretch `new` (starting at piece
    `at`, an even index), by index: with as many U+FFFDs as before, the k-th takes the
    k-th's; otherwise those difflib pairs with an old one (the runs between anchor it)."""
    if len(old) == len(new) or len(old) + len(new) > _ALIGN_LIMIT:
        return {at + j: source for j, source in zip(range(1, len(new), 2), sources)}
    kept = {}
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for i, j, size in matcher.get_matching_blocks():
        kept.update({at + j + n: sources[(i + n) // 2]
                     for n in range(size) if (i + n) % 2})
    return kept


def _alone(before: bytes, source: bytes, codec: str) -> bytes:
    """`source`, the bytes of a U+FFFD just after the U+FFFD written as `before`, unless
    the two would join into other text (the halves of a cut sequence brought together
    by the edit): then the character U+FFFD."""
    if before and (before + source).decode(codec, "replace") != "\ufffd\ufffd":
        return _FFFD.encode(codec)
    return source


def _same(old: list[str], new: list[str], at: range) -> int:
    """How many pieces, taken at the indexes `at` (from the start, or negative from the
    end), the two lists share before they first differ."""
    return next((n for n, i in enumerate(at) if old[i] != new[i]), len(at))


def _sources(data: bytes, codec: str) -> list[bytes]:
    """The bytes behind each U+FFFD of `data` decoded with "replace", in order: an
    ill-formed sequence, or a real U+FFFD's own bytes. One pass of the decoder, whose
    error handler notes where each ill-formed sequence is."""
    spans: list[tuple[int, int]] = []
    _noted.spans = spans
    data.decode(codec, _NOTE_SPANS)
    fffd = _FFFD.encode(codec)
    sources: list[bytes] = []
    pos = 0
    for start, end in [*spans, (len(data), len(data))]:
        sources.extend([fffd] * _units(data, fffd, pos, start))
        sources.append(data[start:end])
        pos = end
    sources.pop()  # the end of the data, not a sequence
    return sources


def _units(data: bytes, unit: bytes, start: int, end: int) -> int:
    """How many times `unit` (a U+FFFD's bytes) is in data[start:end] as a character:
    in UTF-16 only at an even offset from `start` (a span boundary is a unit's)."""
    if len(unit) != 2:
        return data.count(unit, start, end)
    count, at = 0, data.find(unit, start, end)
    while at >= 0:
        aligned = (at - start) % 2 == 0
        count += aligned
        at = data.find(unit, at + (2 if aligned else 1), end)
    return count


def _note_span(exc: UnicodeError) -> tuple[str, int]:
    """The "replace" error handler, noting the span it replaces (for `_sources`)."""
    assert isinstance(exc, UnicodeDecodeError)
    _noted.spans.append((exc.start, exc.end))
    return _FFFD, exc.end


_noted = threading.local()  # the spans of the decode running in this thread
_NOTE_SPANS = "chorus-tools-note-spans"
codecs.register_error(_NOTE_SPANS, _note_span)
