"""Markdown's symbols: its headings (ATX `## x` and setext underlined), each nested under
the nearest heading above it of a lower level, its range its section (up to the next
heading of the same or a higher level). The grammar makes sections of ATX headings only,
so sections are counted here from the levels."""

from __future__ import annotations

from typing import Iterable

from tree_sitter import Node

from chorus_tools.tools.code.symbols.record import Symbol
from chorus_tools.tools.code.symbols.found import text


def headings(data: bytes, nodes: Iterable[Node]) -> list[Symbol]:
    found = sorted(((node.start_byte, _level(node), node) for node in nodes),
                   key=lambda item: item[0])
    lines = [node.start_point[0] + 1 for _, _, node in found]
    result: list[Symbol] = []
    open_: list[int] = []  # indices of the headings whose sections are still open
    for i, (start, level, node) in enumerate(found):
        while open_ and found[open_[-1]][1] >= level:
            open_.pop()
        parent = open_[-1] if open_ else -1
        name = _name(node)
        end = next((j for j in range(i + 1, len(found)) if found[j][1] <= level), None)
        end_byte = len(data) if end is None else found[end][0]
        last = _last_line(data, lines[end] - 1 if end is not None else None)
        result.append(Symbol(
            name=name, kind="heading",
            name_path=f"{result[parent].name_path}/{name}" if parent >= 0 else name,
            line=lines[i], end_line=max(lines[i], last), signature=_first_line(node),
            def_line=lines[i], start_byte=start, end_byte=end_byte, name_byte=-1,
            parent=parent))
        open_.append(i)
    return result


def names(nodes: Iterable[Node]) -> tuple[str, ...]:
    """The headings' names, in the order `headings` lists them."""
    return tuple(_name(node) for node in sorted(nodes, key=lambda node: node.start_byte))


def _level(node: Node) -> int:
    for child in node.children:
        kind = child.type
        if kind.startswith("atx_h") and kind.endswith("_marker"):
            return int(kind[5])
        if kind.startswith("setext_h"):
            return int(kind[8])
    return 1


def _name(node: Node) -> str:
    content = node.child_by_field_name("heading_content")
    said = " ".join(text(content).split())
    return said.rstrip("#").rstrip() if node.type == "atx_heading" else said


def _first_line(node: Node) -> str:
    return " ".join(text(node).split("\n", 1)[0].split())[:200]


def _last_line(data: bytes, before: int | None) -> int:
    """The section's last line: the one before the next heading's, or the file's last."""
    if before is not None:
        return before
    lines = data.count(b"\n")
    return lines if data.endswith(b"\n") else lines + 1
