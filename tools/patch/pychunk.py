"""The Python part of the syntax guard, compiled a top-level statement at a time.

Compiling a whole module costs ~0.7 ms a KiB, more than the rest of a patch on a small
file. A patch changes a few lines, and the text around them is unchanged: so the guard
compiles only the top-level statements that hold the change, before and after. Those
lines are cut where a line starts at column 0 with a new statement (not a comment, an
`else`/`elif`/`except`/`finally`, a closing bracket, nor the line after a decorator or
an open bracket), outside any triple-quoted string. When the statements before the
change do not compile on their own (a cut in the wrong place), the whole texts are
compiled instead, so a wrong cut can cost time but never lets a break through.
"""

from __future__ import annotations

import re

_CONTINUES = re.compile(r"(?:else|elif|except|finally)\b|[\s#)\]}]")
_OPENS = ("(", "[", "{", ",", "\\")


def compile_error(text: str) -> tuple[int, str] | None:
    """(1-based line, message) of the first syntax error of a module, or None. Nesting
    deeper than the compiler goes raises RecursionError or MemoryError: the caller
    (tools/patch/syntax.py) does not judge such a text."""
    try:
        # compiled, not only parsed: 'return' outside a function is an error too
        compile(text, "<patched>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return exc.lineno or 1, f"{type(exc).__name__}: {exc.msg}"
    except ValueError as exc:  # a NUL byte
        return 1, str(exc)
    return None


def new_error(before: str, after: str) -> tuple[int, str] | None:
    """The syntax error `after` has that `before` did not (by the statements the change
    touched when they can be cut out, else by the whole texts)."""
    cut = _statements(before, after)
    if cut is not None:
        old, new, first_line = cut
        if compile_error(old) is None:
            error = compile_error(new)
            if error is None or compile_error(after) is None:  # a cut that did not fit
                return None
            return first_line + error[0] - 1, error[1]
    error = compile_error(after)
    if error is None or compile_error(before) is not None:
        return None
    return error


def _statements(before: str, after: str) -> tuple[str, str, int] | None:
    """The top-level statements holding the change in each text, and the 1-based line
    where they start; None when no statement starts before the change."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    same_head = 0
    while same_head < min(len(old), len(new)) and old[same_head] == new[same_head]:
        same_head += 1
    same_tail = 0
    while (same_tail < min(len(old), len(new)) - same_head
           and old[-1 - same_tail] == new[-1 - same_tail]):
        same_tail += 1
    starts = _starts(old)
    start = max((s for s in starts if s <= same_head), default=None)
    if start is None or start <= _last_future_import(new):
        return None  # `from __future__` must come first: only the whole module can tell
    stop_old = min((s for s in starts if s >= len(old) - same_tail and s > start),
                   default=len(old))
    stop_new = stop_old - len(old) + len(new)
    return "".join(old[start:stop_old]), "".join(new[start:stop_new]), start + 1


def _last_future_import(lines: list[str]) -> int:
    return max((i for i, line in enumerate(lines) if line.startswith("from __future__")),
               default=-1)


def _starts(lines: list[str]) -> list[int]:
    """0-based indexes of the lines a top-level statement starts at."""
    starts = []
    quotes = 0
    previous = ""
    for i, line in enumerate(lines):
        if quotes % 2 == 0 and line.strip() and not _CONTINUES.match(line) \
                and not previous.startswith("@") and not previous.rstrip().endswith(_OPENS):
            starts.append(i)
        quotes += line.count('"""') + line.count("'''")
        if line.strip() and not line.lstrip().startswith("#"):
            previous = line
    return starts
