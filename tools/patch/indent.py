"""The indentation tier's re-indentation: the replacement is written in the file's unit.

An agent often sends a `find` indented its own way (tabs for a 4-space file, 2 spaces for
4, spaces for tabs). The tier matches it line by line ignoring indentation; writing the
replacement with the agent's characters would then put tabs into a space-indented Python
file (TabError) or the reverse. So each `replace` line's depth is measured in levels of
`find`'s unit (a tab is one level, `find`'s own space step is one level) and written in
the unit of the region matched (its tabs, or its spaces per level): docs/protocol.md, `file.patch`.

Continuation lines (inside an open `(` or `[`, or after a trailing backslash) align with
something on the line above, not with a level: their indentation beyond their statement's
is kept as spaces (tabs there still count as levels), so an aligned argument stays aligned.
They are also left out when a step is measured, since their widths are not levels.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from math import gcd

_OPEN, _CLOSE = "([", ")]"
_STRING = re.compile(r"'(?:\\.|[^'\\])*'?|\"(?:\\.|[^\"\\])*\"?")
_DEFAULT_STEP = 4


@dataclass(frozen=True)
class Unit:
    """How one side indents: with tabs or spaces, and how many spaces make a level
    (None when no line says)."""

    tabs: bool
    step: int | None

    def measure(self, indent: str) -> tuple[int, int]:
        """(levels, spaces left over) of an indentation: every tab is a level, spaces
        count by the step; what does not fill a level is alignment."""
        tabs = indent.count("\t")
        spaces = len(indent) - tabs
        if not self.step:
            return tabs, spaces
        return tabs + spaces // self.step, spaces % self.step

    def write(self, levels: int, spaces: int = 0) -> str:
        level = "\t" if self.tabs else " " * (self.step or _DEFAULT_STEP)
        return level * max(levels, 0) + " " * spaces


def find_unit(find_lines: list[str], replace_lines: list[str]) -> Unit:
    """The unit `find` is written in; its step from `find` itself, else from `replace`
    (the same agent wrote both), else from the widths they use."""
    indents = _indents(find_lines)
    step = (_step(find_lines) or _step(replace_lines)
            or _gcd_width(find_lines + replace_lines))
    return Unit(tabs=bool(indents) and indents[0].startswith("\t"), step=step)


class FileUnits:
    """The unit of each region matched in one file: the region's own, else the whole
    file's (measured once, however many regions ask), else `find`'s where the file has
    no indentation at all."""

    def __init__(self, lines: list[str], src: Unit) -> None:
        self.lines = lines
        self.src = src

    def of(self, region: list[str]) -> Unit:
        indented = _indents(region)
        tabs = indented[0].startswith("\t") if indented else self._tabs
        if tabs:
            return Unit(tabs=True, step=None)
        return Unit(tabs=False, step=_step(region) or self._step or self.src.step
                    or _DEFAULT_STEP)

    @cached_property
    def _tabs(self) -> bool:
        firsts = Counter(ind[0] for ind in _indents(self.lines))
        return firsts["\t"] > firsts[" "] if firsts else self.src.tabs

    @cached_property
    def _step(self) -> int | None:
        return _step(self.lines)


def reindent(replace: str, find_indent: str, file_indent: str, src: Unit,
             dst: Unit) -> str:
    """`replace` with each line's indentation moved from `find`'s unit, relative to
    `find_indent`, to the file's, relative to `file_indent` (the indentation of the file
    line that `find`'s first non-blank line matched). Blank lines become empty."""
    lines = replace.replace("\r\n", "\n").split("\n")
    base_levels = src.measure(find_indent)[0]
    file_levels = dst.measure(file_indent)[0]

    def shift(ind: str) -> str:
        if ind.startswith(find_indent):
            return file_indent + dst.write(*src.measure(ind[len(find_indent):]))
        levels, spaces = src.measure(ind)
        return dst.write(file_levels + levels - base_levels, spaces)

    out = []
    statement_in = statement_out = ""
    for line, continued in zip(lines, _continuations(lines)):
        if not line.strip():
            out.append("")
            continue
        ind = indent(line)
        if continued and ind.startswith(statement_in):
            extra = ind[len(statement_in):]
            new = statement_out + dst.write(extra.count("\t"), len(extra) - extra.count("\t"))
        else:
            new = shift(ind)
        if not continued:
            statement_in, statement_out = ind, new
        out.append(new + line[len(ind):])
    return "\n".join(out)


def indent(line: str) -> str:
    """The leading whitespace of a line (its line break aside)."""
    body = line.rstrip("\r\n")
    return body[:len(body) - len(body.lstrip())]


def _indents(lines: list[str]) -> list[str]:
    """The indentation of every indented line that is not blank."""
    return [ind for line in lines if line.strip() and (ind := indent(line))]


def _step(lines: list[str]) -> int | None:
    """The most common increase of space indentation from one statement line to the
    next (the smallest on a tie); None when no line goes deeper than the one before."""
    widths = [None if "\t" in indent(line) else len(indent(line))
              for line, continued in zip(lines, _continuations(lines))
              if line.strip() and not continued]
    rises = Counter(b - a for a, b in zip(widths, widths[1:])
                    if a is not None and b is not None and b > a)
    if not rises:
        return None
    return min(rises, key=lambda rise: (-rises[rise], rise))


def _gcd_width(lines: list[str]) -> int | None:
    """The widest step every space indentation of a statement line is a multiple of;
    None without any."""
    widths = [len(ind) for line, continued in zip(lines, _continuations(lines))
              if line.strip() and not continued and (ind := indent(line))
              and "\t" not in ind]
    return (gcd(*widths) or None) if widths else None


def _continuations(lines: list[str]) -> list[bool]:
    """Per line: does it continue the statement above (open bracket or backslash)?
    Brackets inside one-line string literals are not counted."""
    flags = []
    depth, backslash = 0, False
    for line in lines:
        flags.append(depth > 0 or backslash)
        code = _STRING.sub("", line.rstrip("\r\n"))
        for ch in code:
            if ch in _OPEN:
                depth += 1
            elif ch in _CLOSE:
                depth = max(depth - 1, 0)
        backslash = code.endswith("\\")
    return flags
