"""Tree-sitter parses, kept per file so the next text of that file parses incrementally,
and the syntax errors a tree holds.

Parsing a 200 KiB file from scratch takes ~30 ms, so each process keeps the last text and
tree it parsed of a few files, and parses any later text of the same file incrementally
from them (told which bytes changed): an edit pays for the bytes it changed, not for the
file, even when another worker made the changes in between. Which grammar a file takes is
the language table's answer (tools.code.languages).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from tree_sitter import Node, Tree

from chorus_tools.tools.code.languages import parser

_KEPT_FILES = 8
_trees: OrderedDict[tuple[str, str], tuple[bytes, Tree]] = OrderedDict()


@dataclass(frozen=True)
class Errors:
    """The syntax errors of a text: how many nodes are ERROR or MISSING, and the first
    (1-based line, what is wrong) at or after a byte offset, else the first of all."""

    count: int
    first: tuple[int, str] | None


def errors(name: str, data: bytes, key: str, near: int = 0) -> Errors:
    """The syntax errors of `data` in grammar `name`, parsed incrementally from the last
    text parsed under `key` (the file's path)."""
    tree = parse(name, key, data)
    root = tree.root_node
    if not root.has_error:
        return Errors(0, None)
    bad = list(_error_nodes(root))
    after = [n for n in bad if n.end_byte >= near] or bad
    node = min(after, key=lambda n: n.start_byte)
    return Errors(len(bad), (node.start_point[0] + 1, _describe(node)))


def parse(name: str, path: str, data: bytes) -> Tree:
    """The tree of `data` in grammar `name`, incrementally from the last text parsed
    under `path` in this process."""
    key = (name, path)
    kept = _trees.get(key)
    if kept is not None and kept[0] == data:
        tree = kept[1]
    else:
        grammar = parser(name)
        tree = (grammar.parse(data) if kept is None
                else grammar.parse(data, old_tree=_edited(kept[1], kept[0], data)))
        _trees[key] = (data, tree)
        while len(_trees) > _KEPT_FILES:
            _trees.popitem(last=False)
    _trees.move_to_end(key)
    return tree


def _edited(tree: Tree, old: bytes, new: bytes) -> Tree:
    """A copy of `old`'s tree told that the bytes between the common prefix and the common
    suffix of `old` and `new` were replaced."""
    start = common_prefix(old, new)
    tail = _common_suffix(old[start:], new[start:])
    copy = tree.copy()
    copy.edit(start_byte=start, old_end_byte=len(old) - tail, new_end_byte=len(new) - tail,
              start_point=_point(old, start), old_end_point=_point(old, len(old) - tail),
              new_end_point=_point(new, len(new) - tail))
    return copy


def common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix, by bisection on slice compares (memcmp)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _common_suffix(a: bytes, b: bytes) -> int:
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[len(a) - mid:] == b[len(b) - mid:]:
            low = mid
        else:
            high = mid - 1
    return low


def _point(data: bytes, offset: int) -> tuple[int, int]:
    row = data.count(b"\n", 0, offset)
    return row, offset - (data.rfind(b"\n", 0, offset) + 1)


def _error_nodes(node: Node):
    """Every ERROR or MISSING node, descending only where an error lies below."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.is_error or current.is_missing:
            yield current
            continue
        stack.extend(child for child in current.children if child.has_error)


def _describe(node: Node) -> str:
    if node.is_missing:
        return f"missing {node.type!r}"
    text = (node.text or b"").decode("utf-8", "replace").strip().splitlines()
    near = text[0][:60] if text else ""
    return f"unexpected {near!r}" if near else "syntax error"
