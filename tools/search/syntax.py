"""ripgrep's regex syntax, read once: what the pattern needs, and its Python translation.

One pass over the pattern tells the engines three things: whether it can match a line break
(ripgrep's rule for refusing it without multiline and for merging adjacent multiline
matches), whether it needs PCRE2 (look-around, back-references), and the equivalent pattern
for the `regex` module, compiled in VERSION1 mode because that is the one that scopes inline
flags to their group and knows class set operations (`[\\w&&\\d]`, `[a-z--aeiou]`) as
Rust's regex does; `(?-f)` keeps case folding simple, as Rust's is.

Translated: `\\x{…}`/`\\u{…}`/`\\U{…}` code points, `\\z`, word-boundary halves `\\<`, `\\>`,
`\\b{start}`, `\\b{end}`, `\\b{start-half}`, `\\b{end-half}`, POSIX classes (`[[:alpha:]]`,
`[[:^digit:]]`: tools/search/posix.py), `\\A` (line by line, each line's start) and a
repetition repeated (`a++`, `x{2}{3}`: tools/search/repeats.py). A range bounded by a
class (`[\\w-.]`) is refused, as ripgrep refuses it. Patterns that cannot be made to agree
(documented in tests/test_search_syntax.py): the swap-greed flag `(?U)` and CRLF mode
`(?R)` are refused on the python engine; `(?-u)` (ASCII-only classes) is ignored; bytes
that are not UTF-8 are seen by Python as single code points where ripgrep sees raw bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.search.posix import posix_class
from chorus_tools.tools.search.repeats import COUNTED, merge_repeat, nest_counted

_BOUNDARIES = {"start": r"\m", "end": r"\M", "start-half": r"(?<!\w)", "end-half": r"(?!\w)"}
# escapes whose class holds a line break; `^`, `$`, `\A`, `\z` count too (ripgrep's rule)
_NEWLINE_CLASSES = set("sWDPpAz")
_NEWLINE_ESCAPE = regex.compile(r"\\(?:n|x0[aA]|[xuU]\{0*[aA]\}|u000[aA]|U0000000[aA])")
_PCRE_GROUPS = ("(?=", "(?!", "(?<=", "(?<!", "(?>")
# `$` matches before `\r\n` as before `\n` (docs/protocol.md, file.search). Line by line
# that is ripgrep's `--crlf` (the python engine: the text without the `\r` of its `\r\n`),
# where nothing matches the `\r`; with multiline `--crlf` would stop `$\n` from matching a
# CRLF break, so there a `$` takes the `\r` before it along (never shown).
_CRLF_DOLLAR = r"(?:\r?$)"
# class escapes, never a range's end (ripgrep: "invalid range boundary")
_CLASS_ESCAPES = tuple("\\" + c for c in "dDwWsSpP")
_CR_ESCAPE = regex.compile(r"\\(?:r|x0[dD]|[xuU]\{0*[dD]\}|u000[dD]|U0000000[dD])")


@dataclass(frozen=True)
class Pattern:
    python: str  # for the `regex` module, VERSION1
    literal_newline: bool  # a literal \n outside a class: refused without multiline
    may_match_newline: bool  # multiline mode is really active for it (ripgrep's rule)
    needs_pcre2: bool  # look-around or back-references
    python_error: str | None = None  # why the python engine cannot run it, if it cannot
    ripgrep: str = ""  # what ripgrep runs: with multiline, its `$` anchors CRLF-aware
    literal_cr: bool = False  # a literal \r: ripgrep's `--crlf` refuses it without multiline


def analyse(pattern: str, *, literal: bool, multiline: bool = False) -> Pattern:
    """Read `pattern` (ripgrep syntax, or a fixed string) once, for a search with or
    without `multiline`. What the python engine cannot run with ripgrep's meaning is
    noted, not raised: ripgrep may still run it."""
    if literal:
        newline = "\n" in pattern
        return Pattern(regex.escape(pattern), newline, newline, False, ripgrep=pattern,
                       literal_cr="\r" in pattern)
    reader = _Reader(pattern, crlf_dollar=multiline)
    try:
        found = reader.read()
        if found.needs_pcre2 and "[:" in pattern:  # ripgrep runs it in PCRE2: Unicode
            reader = _Reader(pattern, crlf_dollar=multiline, unicode_posix=True)
            found = reader.read()
        return found
    except _Untranslatable as exc:
        return Pattern(pattern, reader.literal_newline, True, reader.pcre, str(exc), pattern,
                       reader.literal_cr)
    except RecursionError:  # thousands of nested classes or groups: found by fuzzing
        return Pattern(pattern, reader.literal_newline, True, reader.pcre,
                       "the pattern nests classes or groups too deeply", pattern,
                       reader.literal_cr)


_SIMPLE_FOLDING = "(?-f)"  # ripgrep folds case simply; V1 would fold fully


def compile_python(pat: Pattern, *, case_sensitive: bool) -> regex.Pattern:
    """The `regex` module's compiled form, or invalid_pattern with its reason."""
    if pat.python_error is not None:
        raise invalid_pattern(pat.python_error)
    flags = regex.V1 | regex.MULTILINE | (0 if case_sensitive else regex.IGNORECASE)
    try:
        return regex.compile(_SIMPLE_FOLDING + pat.python, flags)
    except regex.error as exc:  # positions in the reason count from the client's pattern
        pos, msg = getattr(exc, "pos", None), getattr(exc, "msg", str(exc))  # not in the stubs
        if pos is None:
            raise invalid_pattern(str(exc)) from None
        pos -= len(_SIMPLE_FOLDING)
        pos -= pat.python.count(_CRLF_DOLLAR, 0, pos) * (len(_CRLF_DOLLAR) - 1)
        raise invalid_pattern(f"{msg} at position {pos}") from None
    except (OverflowError, ValueError) as exc:
        raise invalid_pattern(str(exc)) from None
    except RecursionError:  # the regex module's parser recurses per group
        raise invalid_pattern("the pattern nests groups too deeply") from None


def invalid_pattern(reason: str) -> ToolError:
    """The error for a regex that does not compile; `reason` is the engine's own words."""
    reason = reason.strip()
    return ToolError("invalid_pattern",
                     f"The pattern does not compile: {reason}. Fix the regex (ripgrep "
                     "syntax), or pass literal: true to search for the text as is.",
                     param="pattern", reason=reason)


class _Untranslatable(ValueError):
    """The reason the python engine cannot run a pattern."""


class _Reader:
    def __init__(self, pattern: str, *, crlf_dollar: bool, unicode_posix: bool = False
                 ) -> None:
        self.src = pattern
        self.unicode_posix = unicode_posix  # POSIX classes as PCRE2_UCP reads them
        self.i = 0
        self.out: list[str] = []
        self.literal_newline = False
        self.literal_cr = False
        self.may_newline = False
        self.pcre = False
        self.dollar = _CRLF_DOLLAR if crlf_dollar else "$"
        self.dollars: list[int] = []  # where the pattern's `$` anchors are
        self.opens: list[int] = []  # where the groups still open start in `out`
        self.closes: dict[int, int] = {}  # where each `)` in `out` has its group start

    def read(self) -> Pattern:
        src = self.src
        while self.i < len(src):
            c = src[self.i]
            if c == "\\":
                self.out.append(self._escape(in_class=False))
            elif c == "[":
                self.out.append(self._klass())
            elif c == "(" and src.startswith("(?", self.i):
                self.out.append(self._group())
                if not self.out[-1].endswith(")"):  # a group opens, not a flag setting
                    self.opens.append(len(self.out) - 1)
            else:
                if c == "\n":
                    self.literal_newline = self.may_newline = True
                elif c == "\r":
                    self.literal_cr = True
                elif c in "^$":
                    self.may_newline = True
                if c == "$":
                    self.dollars.append(self.i)
                if c in "*+" and merge_repeat(self.out, c):
                    self.i += 1
                    continue
                if c in "*+" or c == "{" and COUNTED.match(src, self.i):
                    nest_counted(self.out, self.closes)
                if c == "(":
                    self.opens.append(len(self.out))
                elif c == ")" and self.opens:
                    self.closes[len(self.out)] = self.opens.pop()
                self.out.append(self.dollar if c == "$" else c)
                self.i += 1
        pieces, last = [], 0
        for at in self.dollars:
            pieces += [src[last:at], self.dollar]
            last = at + 1
        return Pattern("".join(self.out), self.literal_newline,
                       self.may_newline or self.pcre, self.pcre,
                       ripgrep="".join(pieces) + src[last:], literal_cr=self.literal_cr)

    def _fail(self, reason: str) -> _Untranslatable:
        return _Untranslatable(reason)

    def _group(self) -> str:
        src = self.src
        if src.startswith(_PCRE_GROUPS, self.i):
            self.pcre = True
            end = self.i + (4 if src.startswith(("(?<=", "(?<!"), self.i) else 3)
            text = src[self.i:end]
            self.i = end
            return text
        j = self.i + 2
        while j < len(src) and (src[j].isalpha() or src[j] == "-"):
            j += 1
        if j < len(src) and src[j] in ":)":
            flags = src[self.i + 2:j]
            if "U" in flags or "R" in flags:
                raise self._fail("the python engine cannot honour the flags (?U) or (?R)")
            if "s" in flags.partition("-")[0]:
                self.may_newline = True
            flags = flags.replace("u", "")
            self.i = j + 1
            if flags in ("", "-"):
                return "(?:" if src[j] == ":" else ""
            return f"(?{flags}{src[j]}"
        self.i += 2
        return "(?"

    def _escape(self, *, in_class: bool) -> str:
        src = self.src
        if self.i + 1 >= len(src):
            raise self._fail("incomplete escape sequence at the end of the pattern")
        c = src[self.i + 1]
        self.i += 2
        if c in "xuU":
            return self._codepoint(c, in_class)
        if c == "n":
            if not in_class:
                self.literal_newline = True
            self.may_newline = True
            return r"\n"
        if c == "r" and not in_class:
            self.literal_cr = True
        if c.isdigit() and c != "0" or c in "kg":
            self.pcre = self.may_newline = True
            return "\\" + c
        if c in _NEWLINE_CLASSES:
            self.may_newline = True
        if in_class:
            return "\\" + c
        if c == "z":
            return r"\Z"
        if c == "A" and self.dollar == "$":  # line by line ripgrep matches each line alone
            return "^"
        if c in "<>":
            return r"\m" if c == "<" else r"\M"
        if c == "b" and src.startswith("{", self.i):
            close = src.find("}", self.i)
            kind = src[self.i + 1:close] if close > 0 else ""
            if kind in _BOUNDARIES:
                self.i = close + 1
                return _BOUNDARIES[kind]
        return "\\" + c

    def _codepoint(self, kind: str, in_class: bool) -> str:
        src = self.src
        if src.startswith("{", self.i):
            close = src.find("}", self.i)
            digits = src[self.i + 1:close] if close > 0 else ""
            self.i = close + 1 if close > 0 else len(src)
        else:
            width = {"x": 2, "u": 4, "U": 8}[kind]
            digits = src[self.i:self.i + width]
            self.i += width
        try:
            value = int(digits, 16)
            if not digits.isalnum() or value > 0x10FFFF:
                raise ValueError
        except ValueError:
            raise self._fail(f"invalid escape \\{kind}{digits}: expected hexadecimal digits "
                             "of a Unicode code point") from None
        if value == 10:
            self.literal_newline = self.literal_newline or not in_class
            self.may_newline = True
        self.literal_cr = self.literal_cr or value == 13 and not in_class
        return f"\\U{value:08X}"

    def _klass(self) -> str:
        """A bracketed class, nested classes and set operations included."""
        src = self.src
        parts = ["["]
        self.i += 1
        start = self.i
        if src.startswith("^", self.i):
            parts.append("^")
            self.i += 1
            self.may_newline = True
        if src.startswith("]", self.i):
            parts.append(r"\]")
            self.i += 1
        low: int | None = None  # the code point before a '-', for ranges spanning \n
        while self.i < len(src):
            c = src[self.i]
            if c == "]":
                self.i += 1
                parts.append("]")
                if _single_newline(src[start:self.i - 1]):
                    self.literal_newline = True
                body = src[start:self.i - 1]
                self.literal_cr = self.literal_cr or body == "\r" or bool(
                    _CR_ESCAPE.fullmatch(body))
                return "".join(parts)
            item_start = len(parts)
            if c == "\\":
                klass = src.startswith(_CLASS_ESCAPES, self.i)
                parts.append(self._escape(in_class=True))
                if klass and src[self.i - 1] in "pP" and self.i < len(src):  # its name too
                    end = src.find("}", self.i) + 1 if src[self.i] == "{" else self.i + 1
                    parts[-1] += src[self.i:end] if end else ""
                    self.i = end or self.i
                if klass and (low is not None or src.startswith("-", self.i)
                              and not src.startswith(("-]", "--"), self.i)):
                    raise self._fail("invalid range boundary, must be a literal")
            elif src.startswith("[:", self.i) and src.find(":]", self.i + 2) > 0:
                close = src.find(":]", self.i + 2)
                name = src[self.i + 2:close]
                found = posix_class(name, unicode=self.unicode_posix)
                parts.append(src[self.i:close + 2] if found is None else found)
                self.may_newline = self.may_newline or name.startswith("^") or name in (
                    "space", "cntrl", "ascii")
                self.i = close + 2
            elif c == "[":
                parts.append(self._klass())
            else:
                parts.append(c)
                self.i += 1
            cp = _codepoint_of(parts[item_start]) if len(parts) == item_start + 1 else None
            if low is not None and cp is not None and low <= 10 <= cp:
                self.may_newline = True
            low = None
            if cp is not None and src.startswith("-", self.i) and not src.startswith("-]", self.i):
                low = cp
                parts.append("-")
                self.i += 1
        raise self._fail("unclosed character class '['")


def _single_newline(body: str) -> bool:
    """ripgrep treats a class holding nothing but \\n as the literal \\n."""
    return body == "\n" or _NEWLINE_ESCAPE.fullmatch(body) is not None


def _codepoint_of(item: str) -> int | None:
    """The code point of one class item as translated, or None when it is not one char."""
    if len(item) == 1:
        return ord(item)
    if item.startswith("\\U") and len(item) == 10:
        return int(item[2:], 16)
    return {r"\n": 10, r"\t": 9, r"\r": 13, r"\f": 12, r"\v": 11, r"\a": 7}.get(
        item, ord(item[1]) if len(item) == 2 and item[0] == "\\" and not item[1].isalnum()
        else None)
