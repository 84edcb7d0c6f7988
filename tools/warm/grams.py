"""Grams: the 3-byte words a file holds, and the ones any match of a search must hold.

A gram is 3 consecutive word bytes (`[0-9A-Za-z_]` or any byte >= 0x80) of the content,
ASCII-lowercased, coded as `b0 << 16 | b1 << 8 | b2`. The index keeps a file's grams;
a search asks `query_grams` for grams every matching file must contain and searches only
files holding all of them. A gram claimed required that a match lacks loses that match, so
`query_grams` keeps only what it fully understands in ripgrep's syntax (Rust regex, PCRE2
for a pattern the Rust engine refuses: the search runs `--engine=auto`) and in the `regex`
module's (the python engine): any other construct ends a run of plain characters or gives
up. tests/tools/test_warm_grams.py checks it against both engines.
"""

from __future__ import annotations

import string
from collections.abc import Iterator

import numpy as np

_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_CHUNK = 1 << 20  # content bytes coded at once
_WORD_BYTES = np.zeros(256, dtype=bool)
_WORD_BYTES[[*b"0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"]] = True
_WORD_BYTES[0x80:] = True
# ASCII letters that a non-ASCII character matches case-insensitively in some engine:
# k ~ U+212A KELVIN SIGN, s ~ U+017F LONG S (Rust regex, PCRE2, regex module), i ~ U+0130
# (regex module). The lowercased content holds no 'k' for a KELVIN SIGN, so a gram with one
# of these letters is not required by a case-insensitive search. Proven complete over every
# code point by test_case_insensitive_letters_complete.
CASE_INSENSITIVE_LETTERS = frozenset(b"iks")
_QUANTIFIERS = "?*+{"
_HEX_DIGITS = {"x": 2, "u": 4, "U": 8}  # escapes followed by up to this many hex digits
_ONE_CHAR_ARGUMENT = set("pPc")  # \pL (a class), \cX (a control character, PCRE2)


def indexable(data: bytes) -> bool:
    """Whether the engines read `data` as the UTF-8 text it is: a UTF-16 BOM, a NUL or an
    invalid sequence sends them their own ways (transcoding, binary, raw bytes)."""
    if data.startswith(_UTF16_BOMS) or b"\0" in data:
        return False
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def gram_chunks(data: bytes) -> Iterator[np.ndarray]:
    """Every gram of indexable `data` (uint32, repeats kept), a chunk of the content at a
    time: the arrays of a chunk take about 12 bytes per content byte, so a big file's
    transient memory stays bounded. The index needs only the grams' columns, so it keeps
    the repeats: sorting them out would cost more than the rest together."""
    for start in range(0, len(data) - 2, _CHUNK):
        yield _chunk_codes(data[start:start + _CHUNK + 2])


def gram_codes(data: bytes) -> np.ndarray | None:
    """Every gram of an indexable file (uint32, repeats kept, in order), else None."""
    if not indexable(data):
        return None
    return np.concatenate([np.empty(0, dtype=np.uint32), *gram_chunks(data)])


def content_grams(data: bytes) -> np.ndarray | None:
    """The file's unique gram codes (uint32, sorted), or None when it is not indexable."""
    if not indexable(data):
        return None
    return np.unique(np.concatenate([np.empty(0, dtype=np.uint32),
                                     *map(np.unique, gram_chunks(data))]))


def _chunk_codes(data: bytes) -> np.ndarray:
    """The grams starting in `data` (at least 3 bytes)."""
    lowered = data.lower() + b"\0"  # a spare byte: the last gram's 4-byte window
    word = _WORD_BYTES[np.frombuffer(lowered, dtype=np.uint8, count=len(data))]
    in_gram = word[:-2] & word[1:-1] & word[2:]
    windows = np.ndarray((len(data) - 2,), dtype=">u4", buffer=lowered, strides=(1,))
    codes = windows.astype(np.uint32)  # bytes i..i+3, big-endian: the code is the top 24 bits
    codes >>= 8
    return codes[in_gram]


def query_grams(pattern: str, *, literal: bool, case_sensitive: bool, multiline: bool,
                needs_pcre2: bool) -> list[int] | None:
    """Gram codes every file holding a match contains (sorted), or None when the pattern
    cannot narrow the search. Without multiline a line break splits a pattern into
    alternatives in ripgrep, so such a pattern is not narrowed either."""
    if "\n" in pattern and not multiline:
        return None
    if literal:
        runs: list[str] | None = [pattern]
    elif needs_pcre2:
        return None
    else:
        runs = _RegexRuns(pattern).read()
    if runs is None:
        return None
    codes = sorted({code for run in runs for code in _run_grams(run, case_sensitive)})
    return codes or None


def _run_grams(run: str, case_sensitive: bool) -> list[int]:
    """The grams of a run of characters a match holds in this order; a lone surrogate (no
    UTF-8 file holds one) ends the run."""
    data = run.encode("utf-8", "replace").lower()
    usable = [_WORD_BYTES[b] and (case_sensitive or b < 0x80 and b not in
                                  CASE_INSENSITIVE_LETTERS) for b in data]
    return [data[i] << 16 | data[i + 1] << 8 | data[i + 2] for i in range(len(data) - 2)
            if usable[i] and usable[i + 1] and usable[i + 2]]


class _GiveUp(Exception):
    """A construct whose meaning the scan cannot be sure of."""


class _RegexRuns:
    """The runs of plain characters a regex's every match holds, read left to right.

    Gives up on `(` (groups, inline flags, look-around, PCRE2 verbs) and `|`, on `\\Q`
    (PCRE2's quoting, which can hide a `]`), on an unclosed class, and on braces holding
    `[`, `\\`, `(`, `|` or `{` (PCRE2 and the regex module read a `{` that is not a count
    as a plain char, so what follows it may be a construct; the regex module's fuzzy
    constraints, `{e<=1}`, are skipped like counts). A char before `?`, `*` or `{` is
    optional: dropped, the run ends; a char before `+` stays and the run ends; escapes,
    classes, `.`, `^`, `$` end the run.
    """

    def __init__(self, pattern: str) -> None:
        self.src = pattern
        self.last_close = pattern.rfind("}")  # past it a `{` is plain: no rescans to the end
        self.i = 0
        self.runs: list[str] = []
        self.run: list[str] = []

    def read(self) -> list[str] | None:
        try:
            self._scan()
        except _GiveUp:
            return None
        self._end_run()
        return self.runs

    def _end_run(self) -> None:
        if self.run:
            self.runs.append("".join(self.run))
            self.run = []

    def _scan(self) -> None:
        src = self.src
        while self.i < len(src):
            c = src[self.i]
            if c in "(|":
                raise _GiveUp
            if c == "\\":
                self.i = self._escape_end(self.i)
            elif c == "[":
                self.i = self._class_end(self.i)
            elif c == "{":
                self.i = self._braces_end(self.i)
            elif c in "?*+.^$":
                self.i += 1
            else:
                self.i += 1
                after = src[self.i:self.i + 1]
                if after and after in _QUANTIFIERS:
                    if after == "+":
                        self.run.append(c)
                else:
                    self.run.append(c)
                    continue
            self._end_run()

    def _escape_end(self, i: int) -> int:
        """Where the escape at `i` ends, erring long: what it swallows is only not used.
        Named backreferences and subroutines (`\\k<..>`, `\\g<..>`) need a group: given
        up already."""
        src = self.src
        if i + 1 >= len(src) or src[i + 1] == "Q":
            raise _GiveUp
        kind, j = src[i + 1], i + 2
        if kind.isalpha() and src.startswith("{", j):  # \x{..} \p{..} \N{..} \o{..} \d{2}
            return self._braces_end(j)
        if kind in _HEX_DIGITS:
            stop = min(len(src), j + _HEX_DIGITS[kind])
            while j < stop and src[j] in string.hexdigits:
                j += 1
        elif kind in _ONE_CHAR_ARGUMENT:
            j += 1
        elif kind.isdigit():  # octal, in the regex module and PCRE2
            while j < len(src) and src[j].isdigit():
                j += 1
        return min(j, len(src))

    def _class_end(self, i: int) -> int:
        """Where the bracketed class at `i` ends. A `[` inside always opens a nested class
        (as in Rust and the regex module; a POSIX `[:name:]` ends at the same place); where
        PCRE2 reads it as a plain `[` its class ends earlier, so what this skips is only
        not used. A `]` right after an opening (or its `^`) is a plain char."""
        src, j, depth = self.src, i, 0
        while j < len(src):
            c = src[j]
            if c == "[":
                depth, j = depth + 1, j + 1
                j += src.startswith("^", j)
                j += src.startswith("]", j)
            elif c == "]":
                depth, j = depth - 1, j + 1
                if not depth:
                    return j
            elif c == "\\":
                j = self._escape_end(j)
            else:
                j += 1
        raise _GiveUp

    def _braces_end(self, i: int) -> int:
        """Past `{...}` when its body holds no construct (a count, a fuzzy constraint, or
        plain chars where an engine takes the braces literally); a `{` with no `}` after it
        is a plain char in every engine that accepts it."""
        if i > self.last_close:
            return i + 1
        close = self.src.find("}", i)
        if any(c in "[\\(|{" for c in self.src[i + 1:close]):
            raise _GiveUp
        return close + 1
