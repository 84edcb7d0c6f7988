"""read_file's indentation mode (Codex's `mode: "indentation"`): the block of lines around
an anchor line, grown up and down while lines stay at least as indented as a floor.

The floor is the anchor's indentation less `max_levels` levels of 4 columns (0 levels: no
floor, so the block grows to the enclosing top-level one). A line at the floor itself is a
sibling: without `include_siblings` the block takes one such line above (its header; doc
comments above it too with `include_header`) and one below (its closing line), then stops.
Blank lines count at the indentation of the line before them and are trimmed from both
ends of the result. A tab counts 4 columns.
"""

from __future__ import annotations

from dataclasses import dataclass

from chorus_tools.tools.errors import ToolError

TAB_WIDTH = 4
_COMMENTS = ("#", "//", "--")


@dataclass(frozen=True)
class Line:
    number: int
    text: str


def block(lines: list[Line], offset: int, limit: int, anchor_line: int | None = None,
          max_levels: int = 0, include_siblings: bool = False, include_header: bool = True,
          max_lines: int | None = None) -> list[Line]:
    """The lines of the block around `anchor_line` (default: `offset`), at most
    min(limit, max_lines) of them, in file order."""
    anchor = offset if anchor_line is None else anchor_line
    if anchor < 1:
        raise _say("anchor_line must be a 1-indexed line number", "indentation.anchor_line")
    cap = limit if max_lines is None else max_lines
    if cap < 1:
        raise _say("max_lines must be greater than zero", "indentation.max_lines")
    if max_levels < 0:
        raise _say("max_levels must be 0 or more", "indentation.max_levels")
    if anchor > len(lines):
        raise _say("anchor_line exceeds file length", "indentation.anchor_line")
    depth = _effective_indents(lines)
    at = anchor - 1
    floor = 0 if max_levels == 0 else max(depth[at] - max_levels * TAB_WIDTH, 0)
    final = min(limit, cap, len(lines))
    first, last = at, at  # the block is lines[first..last]
    up, down = at - 1, at + 1
    up_open, down_open = True, True
    up_siblings = down_siblings = 0
    while last - first + 1 < final and (up_open or down_open):
        if up_open:
            if up >= 0 and depth[up] >= floor:
                if depth[up] == floor and not include_siblings:
                    header = include_header and lines[up].text.strip().startswith(_COMMENTS)
                    up_open = header or up_siblings == 0
                    up_siblings += 1
                if up_open:
                    first, up = up, up - 1
            else:
                up_open = False
            if last - first + 1 >= final:
                break
        if down_open:
            if down < len(lines) and depth[down] >= floor:
                if depth[down] == floor and not include_siblings:
                    down_open = down_siblings == 0
                    down_siblings += 1
                if down_open:
                    last, down = down, down + 1
            else:
                down_open = False
    chosen = lines[first:last + 1]
    while chosen and not chosen[0].text.strip():
        chosen.pop(0)
    while chosen and not chosen[-1].text.strip():
        chosen.pop()
    return chosen


def _effective_indents(lines: list[Line]) -> list[int]:
    depths, previous = [], 0
    for line in lines:
        if line.text.strip():
            previous = _indent(line.text)
        depths.append(previous)
    return depths


def _indent(text: str) -> int:
    columns = 0
    for ch in text:
        if ch == " ":
            columns += 1
        elif ch == "\t":
            columns += TAB_WIDTH
        else:
            break
    return columns


def _say(message: str, param: str) -> ToolError:
    return ToolError("invalid_params", message, param=param)
