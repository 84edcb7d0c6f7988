"""A repetition repeated, read as ripgrep reads it: `a++` is `(?:a+)+`, `x{2}{3}` is
`(?:x{2}){3}`, where Python's `regex` reads `++`, `*+`, `?+`, `{2}+` as possessive and
refuses `**` or `{2}{3}` as a multiple repeat. `out` is the translation so far, a token
(one character, escape, class or group opening) per item (tools/search/syntax.py)."""

from __future__ import annotations

import regex

COUNTED = regex.compile(r"\{\d+(?:,\d*)?\}")  # a counted repetition
_REPEATS = ("*", "+", "?")


def _repeated(out: list[str]) -> bool:
    """Whether `out` ends with a `*`, `+` or `?` repetition of something (not a lazy `?`)."""
    return len(out) > 1 and out[-1] in _REPEATS and out[-2] not in (*_REPEATS, "(", "|")


def merge_repeat(out: list[str], op: str) -> bool:
    """`op` (`*` or `+`) after a `*`, `+` or `?` repetition: the pair becomes the one
    repetition that matches the same (`+` for `++`, else `*`); False when `op` is no such
    second repetition."""
    if not _repeated(out):
        return False
    out[-1] = "+" if out[-1] == op == "+" else "*"
    return True


def nest_counted(out: list[str], closes: dict[int, int]) -> None:
    """Before a repetition of a counted repetition (`x{2}+`, `x{2}{3}`, `x*{2}`): the
    repeated one is wrapped in `(?:..)`. `closes` maps a `)` token's index to its
    group's opening token's index, so a group is wrapped whole."""
    if out and out[-1] == "}" and "{" in out:
        at = len(out) - 1 - out[::-1].index("{")
        if not COUNTED.fullmatch("".join(out[at:])):
            return
    elif _repeated(out):
        at = len(out) - 1
    else:
        return
    if at == 0 or out[at - 1] in ("|", "(") or out[at - 1].startswith("(?"):
        return  # nothing repeated there: left as it is
    start = closes.get(at - 1, at - 1)  # the repeated atom, or its whole group
    out[start:] = ["(?:" + "".join(out[start:]) + ")"]
