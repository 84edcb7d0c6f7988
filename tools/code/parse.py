"""Tree-sitter parses, kept per file so the next text of that file parses incrementally,
and the syntax errors a tree holds (what they mean: tools.patch.syntax).

Parsing a 200 KiB file from scratch takes ~30 ms, so each process keeps the last text and
tree it parsed of a few files, and parses any later text of the same file incrementally
from them (told which bytes changed): an edit pays for the bytes it changed, not for the
file, even when another worker made the changes in between. Which grammar a file takes is
the language table's answer (tools.code.languages).

A tree costs 30-70 times its text in memory, so only small texts are kept (at most
_KEPT_BYTES each, _KEPT_TOTAL together); a bigger one is parsed, used and given back to
the system when the call is done. A parse given a Budget stops when the budget's time is
spent (tools.code.bounds): junk can cost tree-sitter's error recovery minutes.
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from tree_sitter import Node, Tree

from chorus_tools.tools.code.bounds import Budget
from chorus_tools.tools.code.languages import parser

_KEPT_FILES = 8
_KEPT_BYTES = 512 << 10
_KEPT_TOTAL = 2 << 20
_READ_CHUNK = 64 * 1024
# (name, path) -> the text, its tree, and whether the tree is what a parse from nothing
# gives (parsed so, or without errors: incremental parses recover from errors otherwise)
_trees: OrderedDict[tuple[str, str], tuple[bytes, Tree, bool]] = OrderedDict()


@dataclass(frozen=True)
class Errors:
    """The syntax errors of a text: how many nodes are ERROR or MISSING, and the first
    (1-based line, what is wrong) at or after a byte offset, else the first of all."""

    count: int
    first: tuple[int, str] | None


def errors(name: str, data: bytes, key: str, near: int = 0) -> Errors:
    """The syntax errors of `data` in grammar `name`, parsed incrementally from the last
    text parsed under `key` (the file's path)."""
    root = parse(name, key, data).root_node
    if not root.has_error:
        return Errors(0, None)
    bad = list(error_nodes(root))
    after = [n for n in bad if n.end_byte >= near] or bad
    node = min(after, key=lambda n: n.start_byte)
    return Errors(len(bad), (node.start_point[0] + 1, describe(node, data)))


def parse(name: str, path: str, data: bytes, budget: Budget | None = None,
          keep: bool = True, exact: bool = False) -> Tree:
    """The tree of `data` in grammar `name`, incrementally from the last text parsed
    under `path` in this process; within `budget` when one is given (tools.code.bounds:
    Skipped past it). keep=False: a text read once (the symbol index's, a map's) is not
    kept for a next parse. exact: a tree with errors is the one a parse from nothing
    gives (an incremental parse may recover from an error otherwise, as TypeScript's did
    in 4 of 900 random edits; without errors the two trees are the same)."""
    key = (name, path)
    kept = _trees.get(key)
    if kept is not None and kept[0] == data and (kept[2] or not exact):
        _trees.move_to_end(key)
        return kept[1]
    old = None if kept is None else _edited(kept[1], kept[0], data)
    tree = _parse(name, data, old, budget)
    if old is not None and exact and tree.root_node.has_error:
        old, tree = None, _parse(name, data, None, budget)
    if keep and keeps(len(data)):
        _trees[key] = (data, tree, old is None or not tree.root_node.has_error)
        _trees.move_to_end(key)
    else:
        _trees.pop(key, None)
    while len(_trees) > _KEPT_FILES or sum(len(k[0]) for k in _trees.values()) > _KEPT_TOTAL:
        _trees.popitem(last=False)
    return tree


def keeps(size: int) -> bool:
    """Whether a parsed text of `size` bytes is kept (else its tree goes with the call)."""
    return size <= _KEPT_BYTES


def _parse(name: str, data: bytes, old: Tree | None, budget: Budget | None) -> Tree:
    grammar = parser(name)
    if budget is None:
        return grammar.parse(data, old_tree=old) if old is not None else grammar.parse(data)
    budget.admit(len(data))
    view = memoryview(data)

    def read(offset: int, _point: tuple[int, int]) -> memoryview:
        return view[offset:offset + _READ_CHUNK]

    def spent(_offset: int, _has_error: bool) -> bool:
        return budget.expired()
    try:
        if old is None:
            tree = grammar.parse(read, progress_callback=spent)
        else:
            tree = grammar.parse(read, old_tree=old, progress_callback=spent)
        # a tree read through a callback holds no text, which the symbol extractors read
        # (node.text); parsed again from the bytes on it, every node is reused (~3% of
        # the parse)
        return grammar.parse(data, old_tree=tree)
    except ValueError:  # tree-sitter's "Parsing failed": the callback stopped it
        grammar.reset()  # or the next parse would resume this one
        if budget.expired():
            raise budget.timed_out() from None
        raise


def give_back() -> None:
    """Return freed memory to the system (a big tree's pages stay with the allocator
    otherwise, and a worker would keep a 2 GiB peak for the rest of its life)."""
    if _libc is not None:
        _libc.malloc_trim(0)


def _load_libc() -> ctypes.CDLL | None:
    """The C library the process already runs on (dlopen(NULL): nothing to find on disk,
    which a worker inside Landlock could not; None where there is no glibc)."""
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") else None


_libc = _load_libc()


def _edited(tree: Tree, old: bytes, new: bytes) -> Tree:
    """A copy of `old`'s tree told that the bytes between the common prefix and the common
    suffix of `old` and `new` were replaced."""
    start = common_prefix(old, new)
    tail = min(common_suffix(old, new), len(old) - start, len(new) - start)
    copy = tree.copy()
    at = _point(old, start, *_row_before(tree, start))  # and the ends' rows from here:
    # an edit costs its bytes, not the file's
    copy.edit(start_byte=start, old_end_byte=len(old) - tail, new_end_byte=len(new) - tail,
              start_point=at, old_end_point=_point(old, len(old) - tail, start, at[0]),
              new_end_point=_point(new, len(new) - tail, start, at[0]))
    return copy


def common_prefix(a: bytes | str, b: bytes | str) -> int:
    """Length of the longest common prefix: galloping, then bisection, on compares in
    place (memcmp), so a change near the start costs little however long the texts are."""
    return _gallop(_same(a, b, ends=False), min(len(a), len(b)))


def common_suffix(a: bytes | str, b: bytes | str) -> int:
    """Length of the longest common suffix (as common_prefix, from the end)."""
    return _gallop(_same(a, b, ends=True), min(len(a), len(b)))


def _gallop(same: Callable[[int, int], bool], limit: int) -> int:
    """The largest n <= limit with same(0, n), asked in steps: same(low, high) says
    whether the characters low to high (from the start, or the end) are the same."""
    low, step = 0, 64
    while step < limit and same(low, step):
        low, step = step, step * 2
    high = min(step, limit)
    while low < high:
        mid = (low + high + 1) // 2
        if same(low, mid):
            low = mid
        else:
            high = mid - 1
    return low


def _same(a: bytes | str, b: bytes | str, ends: bool) -> Callable[[int, int], bool]:
    """same(low, high) of `_gallop` for `a` and `b`, compared in place in `a` (and in `b`
    through a view for bytes): a slice of 200 KiB costs more than its compare."""
    size_a, size_b = len(a), len(b)
    if isinstance(a, str):
        assert isinstance(b, str)
        text = b
        if ends:
            return lambda low, high: a.endswith(text[size_b - high:size_b - low], 0,
                                                size_a - low)
        return lambda low, high: a.startswith(text[low:high], low)
    assert isinstance(b, bytes)
    view = memoryview(b)
    if ends:
        return lambda low, high: a.endswith(view[size_b - high:size_b - low], 0, size_a - low)
    return lambda low, high: a.startswith(view[low:high], low)


def _row_before(tree: Tree, offset: int) -> tuple[int, int]:
    """An offset at or before `offset` and its row, from the smallest node of `tree` (the
    text's own) that holds it: its rows are counted already."""
    node = tree.root_node.descendant_for_byte_range(offset, offset)
    if node is None or node.start_byte > offset:
        return 0, 0
    return node.start_byte, node.start_point[0]


def _point(data: bytes, offset: int, since: int = 0, row: int = 0) -> tuple[int, int]:
    """(row, column) of `offset`, `row` being the row of offset `since`."""
    row += data.count(b"\n", since, offset)
    return row, offset - (data.rfind(b"\n", 0, offset) + 1)


def error_nodes(node: Node) -> Iterator[Node]:
    """Every ERROR or MISSING node, descending only where an error lies below. A node
    that has an error no child shows (tree-sitter 0.26 hides a MISSING token that follows
    an extra, as after the comment ending a C `#define` in linux/atmmpc.h) is its own
    error: the innermost node that holds it."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.is_error or current.is_missing:
            yield current
            continue
        below = [child for child in current.children if child.has_error]
        if not below:
            yield current
        stack.extend(below)


def describe(node: Node, data: bytes) -> str:
    """What is wrong at an ERROR or MISSING node of a tree of `data`, as a message names
    it (the text comes from `data`: a tree parsed through a callback holds none, and
    asking it for its text crashes tree-sitter 0.26)."""
    if node.is_missing:
        return f"missing {node.type!r}"
    if not node.is_error:
        return f"a token missing in {node.type!r}"
    text = data[node.start_byte:min(node.end_byte, node.start_byte + 240)].decode(
        "utf-8", "replace").strip().splitlines()
    near = text[0][:60] if text else ""
    return f"unexpected {near!r}" if near else "syntax error"
