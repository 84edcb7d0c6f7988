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
"""

from __future__ import annotations

import re
import warnings
from collections import OrderedDict
from functools import lru_cache

from chorus_tools.tools.code.bounds import Budget

# a line at column 0 that may start a statement (not blank, indented, a comment, a
# closing bracket, nor an `else`, `elif`, `except` or `finally`)
_CANDIDATE = re.compile(r"^(?!(?:else|elif|except|finally)\b)[^\s#)\]}]", re.MULTILINE)
_OPENS = ("(", "[", "{", ",", "\\")
_DOCSTRING = re.compile(r"[rRuUbBfF]{0,2}['\"]")
_KEPT_CHARS = 4 << 20  # statement verdicts kept, by their text's size
_KEPT_WHOLE = 4

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
    except ValueError as exc:  # a NUL byte
        return 1, 1, str(exc)
    return None  # nested deeper than the compiler goes raises: tools/patch/syntax.py


def errors(text: str, budget: Budget) -> list[Found]:
    """The syntax errors of a module: the compiler's first, then the first of each later
    top-level statement that does not compile on its own."""
    cuts = starts(text)
    found: list[Found] = []
    chunks = []
    lines = []  # the 1-based line each statement starts at
    line, counted = 1, 0
    for start, stop in zip(cuts, [*cuts[1:], len(text)]):
        budget.check()
        line += text.count("\n", counted, start)
        counted = start
        lines.append(line)
        chunk = text[start:stop]
        chunks.append(chunk)
        error = _statement(chunk)
        if error is not None:
            found.append((line - 1 + error[0], error[1], error[2]))
    if not found and not _misplaced_future(chunks):
        return []
    first = _whole(text)
    if first is None:
        return []
    later = next((n for n in lines if n > first[0]), line + text.count("\n", counted) + 1)
    return [first, *(f for f in found if f[0] >= later)]


def _misplaced_future(chunks: list[str]) -> bool:
    """A `from __future__` import after a statement that is neither the docstring nor
    another such import (only the whole module can say it is an error)."""
    other = False
    for i, chunk in enumerate(chunks):
        head = chunk.lstrip()
        if head.startswith("from __future__"):
            if other:
                return True
        elif head and not (i == 0 and _DOCSTRING.match(head)):
            other = True
    return False


@lru_cache(maxsize=4)  # the syntax check and the problems' of one text share it
def starts(text: str) -> list[int]:
    """The offsets of the lines a top-level statement starts at; 0 always (the lines
    before the first statement go with it). Only lines at column 0 are looked at, so
    the cost is the text's scan in C, not a Python step per line. Shared: not to be
    changed by its callers."""
    starts = [0]
    quotes, scanned = 0, 0
    for m in _CANDIDATE.finditer(text):
        at = m.start()
        if not at:
            continue
        quotes += text.count('"""', scanned, at) + text.count("'''", scanned, at)
        scanned = at
        previous = _code_line_before(text, at)
        if quotes % 2 == 0 and not previous.startswith("@") \
                and not previous.rstrip().endswith(_OPENS):
            starts.append(at)
    return starts


def _code_line_before(text: str, at: int) -> str:
    """The last line before offset `at` (a line start) that is neither blank nor a
    comment, or ''."""
    end = at - 1
    while end > 0:
        start = text.rfind("\n", 0, end) + 1
        line = text[start:end]
        if line.strip() and not line.lstrip().startswith("#"):
            return line
        end = start - 1
    return ""
