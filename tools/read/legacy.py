"""Legacy encodings: which one a text file that is not UTF-8 is written in, or none.

docs/protocol.md, `file.read`: a file that is neither UTF-8 nor UTF-16 behind a BOM, nor
mostly UTF-8 (UTF-8 with a few bad bytes: tools/read/lossy.py), is named by a charset
detector when it is confident (a GBK file reads as its Chinese text), else it is latin-1.
The detector is charset-normalizer, asked only about files that are not UTF-8,
so a UTF-8 read never pays for it. The decision is a function of the file's bytes alone,
the same whichever path reads them (whole in memory, or streamed for a big file):

1. The sample: at most SAMPLE_BYTES from the start of the line holding the first byte
   that is not UTF-8 (what comes before it is UTF-8, and says nothing about the legacy
   encoding), cut after its last byte below 0x40, which is never part of a multi-byte
   character in any candidate encoding.
2. charset-normalizer ranks the CANDIDATES that decode the sample. It is trusted when the
   sample holds at least MIN_EVIDENCE bytes over 0x7F that are not mostly well-formed
   UTF-8 (by the rule of tools/read/lossy.py), and its best answer beats every
   answer that decodes to other text by its own margins (mess ratio lower by 0.005, else
   coherence higher by 0.02); a tie it would settle by multi-byte usage is not confident.
3. Of the encodings that decode the sample to the same text, the first in CANDIDATES
   names it (shift_jis before cp932, cp1252 before cp1250).
4. The whole file must decode strictly in that encoding, or else in its Microsoft
   superset (WIDER: a Shift_JIS sample with a NEC ① further on is cp932), checked by
   `decoded`, or `Decodes` for a stream; otherwise it is latin-1. So read, info, patch
   and search agree and show no U+FFFD. An edit keeps every byte outside the change
   (tools/read/reencode.py).

Every candidate is a superset of ASCII in which a byte below 0x40 (and so "\\n") is
always a character of its own: lines are found on bytes, as in UTF-8.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from chorus_tools.tools.read import lossy

SAMPLE_BYTES = 1 << 14  # what the detector sees: bounded, and enough text to judge
LOOKBACK = 1 << 10  # how far back from the first non-UTF-8 byte its line may start
MIN_EVIDENCE = 16  # bytes over 0x7F below which no encoding is named
_CHAOS_MARGIN = 0.005  # charset-normalizer's own margins for a decision (CharsetMatch.__lt__)
_COHERENCE_MARGIN = 0.02

# (Python codec, the name docs/protocol.md gives in file.read's `encoding`), in order of
# preference among encodings that decode a sample to the same text. Deliberately the
# encodings text files are written in; no EBCDIC, DOS or Mac code pages, which decode almost
# anything into plausible letters.
CANDIDATES: tuple[tuple[str, str], ...] = (
    ("gb18030", "gb18030"), ("big5", "big5"), ("cp950", "cp950"),
    ("shift_jis", "shift_jis"), ("cp932", "cp932"), ("euc_jp", "euc-jp"),
    ("euc_kr", "euc-kr"), ("cp949", "cp949"),
    ("cp1252", "cp1252"), ("cp1251", "cp1251"), ("cp1250", "cp1250"),
    ("cp1253", "cp1253"), ("cp1254", "cp1254"), ("cp1255", "cp1255"),
    ("cp1256", "cp1256"), ("cp1257", "cp1257"), ("cp1258", "cp1258"), ("cp874", "cp874"),
    ("koi8_r", "koi8-r"), ("koi8_u", "koi8-u"),
    *((f"iso8859_{n}", f"iso-8859-{n}") for n in (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14,
                                                 15, 16)),
)
WIDER = {"shift_jis": "cp932", "big5": "cp950", "euc-kr": "cp949"}
CODEC_OF = {name: codec for codec, name in CANDIDATES}
NAMES = tuple(name for _, name in CANDIDATES)
_ISOLATION = [codec for codec, _ in CANDIDATES]


def name_of(read: Callable[[int, int], bytes], bad: int, size: int) -> str | None:
    """The legacy encoding the detector names with confidence for a file of `size` bytes
    whose first byte that is not UTF-8 is at `bad`, or None. `read(pos, n)` gives the
    file's bytes pos..pos+n (only the sample's are asked for)."""
    start = max(0, bad - LOOKBACK)
    window = read(start, bad - start + SAMPLE_BYTES)
    cut = bad - start
    line = window.rfind(b"\n", 0, cut)
    sample = window[line + 1 if line >= 0 else cut:]
    if start + len(window) < size:  # not the end of the file: end at a whole character
        sample = sample.rstrip(_NOT_ALONE) or sample
    return detect(bytes(sample))


_NOT_ALONE = bytes(range(0x40, 0x100))  # bytes that may be part of a multi-byte character


@lru_cache(maxsize=64)
def detect(sample: bytes) -> str | None:
    """The protocol's name of the encoding of `sample` (bytes that are not UTF-8), when the
    detector is confident; None otherwise. Remembered per sample: a repeat read of the
    same small file does not run the detector again."""
    counted = lossy.tally(sample)
    if counted.high < MIN_EVIDENCE or counted.mostly_utf8:
        return None
    from charset_normalizer import from_bytes  # only files that are not UTF-8 need it
    results = list(from_bytes(sample, cp_isolation=_ISOLATION))
    if not results:
        return None
    best, text = results[0], str(results[0])
    if any(str(other) != text and not _clearly_better(best, other) for other in results[1:]):
        return None
    return next((name for codec, name in CANDIDATES
                 if codec in best.could_be_from_charset and decoded(sample, name) == text),
                None)


def _clearly_better(best: Any, other: Any) -> bool:
    if abs(best.chaos - other.chaos) >= _CHAOS_MARGIN:
        return best.chaos < other.chaos
    return best.coherence - other.coherence > _COHERENCE_MARGIN


def decode(data: bytes, bad: int) -> tuple[str, str] | None:
    """A whole file, not UTF-8 from byte `bad` on, decoded in the legacy encoding named
    for it, with that name; None when it is mostly UTF-8 (then it is UTF-8 with bad
    bytes), when none is named, or when the file does not decode in it."""
    return None if lossy.tally(data).mostly_utf8 else named_text(data, bad)


def named_text(data: bytes, bad: int) -> tuple[str, str] | None:
    """`decode` for a file already known not to be mostly UTF-8."""
    for name in widening(name_of(lambda pos, n: data[pos:pos + n], bad, len(data))):
        text = decoded(data, name)
        if text is not None:
            return text, name
    return None


def widening(name: str | None) -> tuple[str, ...]:
    """The encodings to try on the whole file, in order, for a sample named `name`."""
    if name is None:
        return ()
    return (name, WIDER[name]) if name in WIDER else (name,)


def decoded(data: bytes, name: str) -> str | None:
    """`data` decoded in legacy encoding `name`, or None when it does not decode strictly."""
    try:
        return data.decode(CODEC_OF[name])
    except UnicodeDecodeError:
        return None


class Decodes:
    """`decoded` over a stream, in bounded memory: feed the file's pieces in order (the
    last with `final`); `fits` says whether all of it decoded."""

    def __init__(self, name: str) -> None:
        self._decoder = codecs.getincrementaldecoder(CODEC_OF[name])()
        self.fits = True

    def feed(self, piece: bytes | bytearray | memoryview, final: bool = False) -> bool:
        """Check the next piece; False (and from then on) once the file does not fit."""
        if self.fits:
            try:
                self._decoder.decode(piece, final)
            except UnicodeDecodeError:
                self.fits = False
        return self.fits
