"""Python's syntax errors, from Python's own compiler, a top-level statement at a time.

Compiling a whole module costs ~0.4 ms a KiB, more than the rest of a patch on a small
file, and the compiler stops at the first error. A patch changes a few lines: so the text
is cut into its top-level statements, each compiled on its own and its verdict kept by
its text, and an edit compiles only the statements it changed. A statement starts where
a line starts at column 0 (not a comment, an `else`/`elif`/`except`/`finally`, a closing
bracket, nor the line after a decorator or an open bracket), outside any triple-quoted
string. When some statement does not compile on its own, the whole text is compiled to
confirm it (a cut in the wrong place can cost time, never invent an error): its first
error leads, then those of the statements after it. A `from __future__` import that
follows other statements is judged by the whole text too.

An edit's text is cut from the cuts of a text kept from an earlier call (most often the
text before: the text the previous edit wrote), the one sharing the longest prefix and
suffix with it: only the lines from the last cut before the change up to the first line
after it where the cut's two inputs (the parity of triple quotes before it, the last
code line before it) are the kept text's again are scanned, and of the statements only
those between are looked at; the others' verdicts are the kept text's. What the kept
cuts give is exactly what a scan of the whole text gives (tests/tools/
test_pychunk_incremental.py holds the two to each other on random edits of real files).
"""

from __future__ import annotations

import re
import warnings
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from chorus_tools.tools.code.bounds import Budget
from chorus_tools.tools.code.parse import common_prefix, common_suffix

# a line at column 0 that may start a statement (not blank, indented, a comment, a
# closing bracket, nor an `else`, `elif`, `except` or `finally`), found by the line break
# before it: a pattern that starts with a character is searched for at C speed, a `^` is
# tried at every offset
_CANDIDATE = re.compile(r"\n(?!(?:else|elif|except|finally)\b)[^\s#)\]}]")
# characters from a line's start that tell whether it is a candidate (`finally` and \b)
_SLACK = 16
_OPENS = ("(", "[", "{", ",", "\\")
_DOCSTRING = re.compile(r"[rRuUbBfF]{0,2}['\"]")
_KEPT_CHARS = 4 << 20  # statement verdicts kept, by their text's size
_KEPT_WHOLE = 4
_KEPT_CUTS = 8  # texts whose cuts are kept, for their own next use and to cut the next edit
_KEPT_CUT_CHARS = 8 << 20  # ... while they hold at most this much text (the latest always)

# (line, column, message) of an error; lines 1-based within the text compiled
Found = tuple[int, int, str]



class _Verdicts:
    """Compile verdicts kept by the text compiled, least recently used dropped first
    past `chars` characters of text or `count` texts."""

    def __init__(self, chars: int, count: int) -> None:
        self.chars, self.count, self.held = chars, count, 0
        self.kept: OrderedDict[str, Found | None] = OrderedDict()

    def __call__(self, text: str) -> Found | None:
        if text in self.kept:
            self.kept.move_to_end(text)
            return self.kept[text]
        error = compile_error(text)
        if len(text) <= self.chars // 4:
            self.kept[text] = error
            self.held += len(text)
            while self.held > self.chars or len(self.kept) > self.count:
                self.held -= len(self.kept.popitem(last=False)[0])
        return error


_statement = _Verdicts(_KEPT_CHARS, 1 << 16)
_whole = _Verdicts(_KEPT_CHARS, _KEPT_WHOLE)


def compile_error(text: str) -> Found | None:
    """(1-based line, 1-based column, message) of the first syntax error of a module."""
    try:
        # compiled, not only parsed: 'return' outside a function is an error too; its
        # SyntaxWarnings (`"is" with a literal`) would go to the server's stderr with a
        # chunk's line numbers: warnings belong in diagnostics or nowhere (issue 45)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<patched>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        name = type(exc).__name__
        message = exc.msg if name == "SyntaxError" else f"{name}: {exc.msg}"
        return exc.lineno or 1, max(exc.offset or 1, 1), message
    except UnicodeEncodeError:  # a lone surrogate: text no file can hold, which the
        return None  # write refuses as invalid_params (it is no syntax error)
    except ValueError as exc:  # a NUL byte
        return 1, 1, str(exc)
    return None  # nested deeper than the compiler goes raises: tools/patch/syntax.py


def errors(text: str, budget: Budget) -> list[Found]:
    """The syntax errors of a module: the compiler's first, then the first of each later
    top-level statement that does not compile on its own."""
    cut = _cut(text)
    if not _verdicts(text, cut, budget) and not (
            "from __future__" in text and _misplaced_future(text, cut.starts)):
        return []  # every statement compiles on its own: so does the module
    cuts = cut.starts
    found: list[Found] = []
    lines = []  # the 1-based line each statement starts at
    line, counted = 1, 0
    for start, stop in zip(cuts, [*cuts[1:], len(text)]):
        budget.check()
        line += text.count("\n", counted, start)
        counted = start
        lines.append(line)
        error = _statement(text[start:stop])
        if error is not None:
            found.append((line - 1 + error[0], error[1], error[2]))
    if not found and not _misplaced_future(text, cuts):
        return []
    first = _whole(text)
    if first is None:
        return []
    later = next((n for n in lines if n > first[0]), line + text.count("\n", counted) + 1)
    return [first, *(f for f in found if f[0] >= later)]


def _misplaced_future(text: str, cuts: list[int]) -> bool:
    """A `from __future__` import after a statement that is neither the docstring nor
    another such import (only the whole module can say it is an error). Every statement
    but the first starts with its first character (a cut is at one)."""
    other = False
    for i, start in enumerate(cuts):
        head = text[:cuts[1] if len(cuts) > 1 else len(text)].lstrip() if i == 0 \
            else text[start:start + 16]
        if head.startswith("from __future__"):
            if other:
                return True
        elif head and not (i == 0 and _DOCSTRING.match(head)):
            other = True
    return False


@dataclass
class _Cuts:
    """A text's cuts (`starts`, shared: not to be changed by their users), the statements
    among them that do not compile alone (`bad`: start and verdict; None until judged),
    and until then the text they were cut from (`base`): this text's statements that
    start before `same_until`, and from `same_from` on (`shift` characters from where they
    start in the base), are the base's."""

    starts: list[int]
    base: _Cuts | None = None
    same_until: int = 0
    same_from: int = 0
    shift: int = 0
    bad: list[tuple[int, Found]] | None = None


_cuts: OrderedDict[str, _Cuts] = OrderedDict()


def starts(text: str) -> list[int]:
    """The offsets of the lines a top-level statement starts at; 0 always (the lines
    before the first statement go with it). Only lines at column 0 are looked at, so
    the cost is the text's scan in C, not a Python step per line. Shared (the syntax
    check and the problems' of one text use the same): not to be changed by its
    callers."""
    return _cut(text).starts


def _cut(text: str) -> _Cuts:
    """The cuts of `text`: kept, or cut from the kept text nearest to it."""
    cut = _cuts.get(text)
    if cut is not None:
        _cuts.move_to_end(text)
        return cut
    best, head, tail = None, 0, 0
    for kept in reversed(_cuts):  # the latest first: most often the text before
        if kept[:64] != text[:64] and kept[-64:] != text[-64:]:
            continue  # another file's, most likely: not worth comparing whole
        p = common_prefix(kept, text)
        s = min(common_suffix(kept, text), len(kept) - p, len(text) - p)
        if p + s > head + tail:
            best, head, tail = kept, p, s
            if 2 * (p + s) >= len(text):
                break
    cut = _Cuts(_scan(text, [0])[0]) if best is None else _from(best, _cuts[best], text,
                                                               head, tail)
    _cuts[text] = cut
    held = sum(map(len, _cuts))
    while len(_cuts) > 1 and (len(_cuts) > _KEPT_CUTS or held > _KEPT_CUT_CHARS):
        held -= len(_cuts.popitem(last=False)[0])
    return cut


def _from(old: str, kept: _Cuts, new: str, head: int, tail: int) -> _Cuts:
    """The cuts of `new`, which shares `head` characters at its start and `tail` at its
    end with `old` (cut as `kept`). A cut at `at` depends on the text before `at` (the
    parity of triple quotes, the last code line) and on the line starting there: so the
    kept cuts stand up to the last one whose line is in the common head, the scan starts
    there (a cut: even parity, a code line), and at the first candidate line of the
    common tail whose last code line is in the tail too, at the parity the kept text had
    there, every cut from there on is the kept text's, moved."""
    shift = len(new) - len(old)
    first = max(bisect_right(kept.starts, head - _SLACK) - 1, 0)
    lo = kept.starts[first]
    end = len(new) - tail  # where the common tail starts in `new`
    differ = False

    def resumes(at: int, previous: int, quotes: int) -> list[int] | None:
        nonlocal differ
        if differ or at - 1 < end or previous - 1 < end:
            return None
        was = old.count('"""', lo, at - shift) + old.count("'''", lo, at - shift)
        if (was - quotes) % 2:
            differ = True  # and so they stay to the end: the scan goes on
            return None
        return [c + shift for c in kept.starts[bisect_left(kept.starts, at - shift):]]

    cuts, moved = _scan(new, kept.starts[:first + 1], resumes)
    return _Cuts(cuts, kept, lo, cuts[moved] if moved < len(cuts) else len(new), shift)


Resumes = Callable[[int, int, int], "list[int] | None"]


def _scan(text: str, cuts: list[int], resumes: Resumes | None = None) -> tuple[list[int], int]:
    """`cuts` (the cuts of `text` up to its last one, a cut) with those after it, found
    by a scan, and the index of the first one `resumes` gave (their count: none).
    `resumes(at, previous, quotes)`, asked at each candidate line (`previous`: where the
    last code line before it starts, `quotes`: triple quotes since the scan began), may
    give every cut from `at` on."""
    lo = cuts[-1]
    cuts = list(cuts)
    quotes, scanned = 0, lo
    for m in _CANDIDATE.finditer(text, lo):
        at = m.start() + 1
        quotes += text.count('"""', scanned, at) + text.count("'''", scanned, at)
        scanned = at
        previous, line = _code_line_before(text, at)
        rest = None if resumes is None else resumes(at, previous, quotes)
        if rest is not None:
            return cuts + rest, len(cuts)
        if quotes % 2 == 0 and not line.startswith("@") and not line.rstrip().endswith(_OPENS):
            cuts.append(at)
    return cuts, len(cuts)


def _verdicts(text: str, cut: _Cuts, budget: Budget) -> list[tuple[int, Found]]:
    """The statements of `text` (cut as `cut`) that do not compile on their own, by their
    start: those the base shares, from the base's verdicts."""
    if cut.bad is not None:
        return cut.bad
    base = cut.base
    starts = cut.starts
    ends = [*starts[1:], len(text)]
    if base is None or base.bad is None:
        low, high, bad, after = 0, len(starts), [], []
    else:
        low, high = bisect_left(starts, cut.same_until), bisect_left(starts, cut.same_from)
        bad = [b for b in base.bad if b[0] < cut.same_until]
        after = [(at + cut.shift, error) for at, error in base.bad
                 if at + cut.shift >= cut.same_from]
    for start, stop in zip(starts[low:high], ends[low:high]):
        budget.check()
        error = _statement(text[start:stop])
        if error is not None:
            bad.append((start, error))
    cut.bad, cut.base = bad + after, None
    return cut.bad


def _code_line_before(text: str, at: int) -> tuple[int, str]:
    """Where the last line before offset `at` (a line start) that is neither blank nor a
    comment starts, and that line; (0, '') when there is none."""
    end = at - 1
    while end > 0:
        start = text.rfind("\n", 0, end) + 1
        line = text[start:end]
        code = line.lstrip()
        if code and code[0] != "#":
            return start, line
        end = start - 1
    return 0, ""
