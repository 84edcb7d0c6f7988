"""From a tree to symbols, the same for every language: the query's matches become
definitions (the family's function says what each is), nesting gives parents and name
paths, each range grows to the comments and attributes directly above it, and the head up
to the body becomes the signature."""

from __future__ import annotations

from types import ModuleType
from typing import Callable, Iterable, Iterator, TypeVar

from tree_sitter import Node, QueryCursor, Tree

from chorus_tools.tools.code.bounds import Budget
from chorus_tools.tools.code.parse import parse
from chorus_tools.tools.code.symbols.record import Definition, Symbol
from chorus_tools.tools.code.symbols import (clike, go, java, javascript, macros, markdown,
                                              python, rust, together)
from chorus_tools.tools.code.symbols.found import Found
from chorus_tools.tools.code.symbols.queries import definitions
from chorus_tools.tools.code.symbols.together import Reading

FAMILIES: dict[str, ModuleType] = {
    "python": python, "javascript": javascript, "typescript": javascript, "tsx": javascript,
    "go": go, "rust": rust, "java": java, "c": clike, "cpp": clike,
}
NOT_ENCLOSING = frozenset({"type", "macro"})  # a typedef does not hold the struct it names
SIGNATURE_CHARS = 200
_BODIES = frozenset({"field_declaration_list", "declaration_list", "class_body",
                     "interface_body", "enum_body", "enum_variant_list", "block",
                     "compound_statement", "statement_block", "enumerator_list",
                     "constructor_body", "annotation_type_body", "{"})
_PREFIX_DEPTH = 3  # from a comment's or attribute's first token up to the node itself
_FIRST_LINE = frozenset({"variable", "constant", "field", "macro"})


def tree_of(grammar: str, path: str, data: bytes, keep: bool = True,
            budget: Budget | None = None) -> Tree:
    """The tree symbols are read from: C and C++ with their misleading macros hidden
    (tools/code/symbols/macros.py), kept under their own key so the guard's tree of the
    file's own bytes stays in tools/code/parse.py's cache beside it (unless not `keep`);
    within `budget` when one is given (Skipped past it)."""
    if grammar in ("c", "cpp"):
        hidden = macros.hide(data)
        if hidden is not data:
            return parse(grammar, path + "\0symbols", hidden, budget, keep=keep)
    return parse(grammar, path, data, budget, keep=keep)


def extract(grammar: str, path: str, data: bytes, tree: Tree | None = None) -> list[Symbol]:
    """The symbols of `data` (from `tree`, its tree_of, when the caller has it)."""
    root = (tree or tree_of(grammar, path, data)).root_node
    matches = QueryCursor(definitions(grammar)).matches(root)
    if grammar == "markdown":
        return markdown.headings(data, (caps["definition.heading"][0] for _, caps in matches))
    family = FAMILIES[grammar]
    found = _found(family.classify, _readings(matches))
    assert found is not None
    return _build(family, root, data, found, _symbol)


def extract_definitions(grammar: str, path: str, data: bytes, tree: Tree,
                        caught: dict[str, list[Node]] | None) -> list[Symbol] | list[Definition]:
    """What `extract` says of `data`'s symbols, as Definitions (a Markdown file's headings,
    whose lines cost nothing more, as Symbols), from `caught`, the captures of the query
    of both (tools/code/symbols/together.py), unless their matches' order could change
    the answer (then from the definitions query's matches)."""
    root = tree.root_node
    if grammar == "markdown" or caught is None:
        return extract(grammar, path, data, tree)
    family = FAMILIES[grammar]
    unordered = together.readings(grammar, caught)
    found = None if unordered is None else _found(family.classify, unordered, ordered=False)
    if found is None:
        found = _found(family.classify, _readings(QueryCursor(definitions(grammar)).matches(root)))
        assert found is not None
    return _build(family, root, data, found, _definition)


def _readings(matches: Iterable[tuple[int, dict[str, list[Node]]]]) -> Iterator[Reading]:
    """The definitions query's matches, in their order, as (hint, definition, name)."""
    for _, captures in matches:
        for capture, nodes in captures.items():
            if capture.startswith("definition."):
                hint = capture[len("definition."):]
                for name in captures.get("name") or [None]:
                    yield hint, nodes[0], name


def _found(classify: Callable[[Node, Node | None, str], list[Found]],
           readings: Iterable[Reading], ordered: bool = True) -> list[Found] | None:
    """Every definition once, ordered so that each comes after the ones enclosing it.
    Matches in no particular order (not `ordered`) give None where their order could
    change that: where two patterns say different things of one definition and name (the
    first match's word counts), one range and name comes from two (the last's counts),
    or two definitions of one range come from two (the first's comes first)."""
    done: dict[tuple[int, int], str] = {}  # (definition, name) -> the hint it was read with
    unique: dict[tuple[int, int, str, int], Found] = {}
    origin: dict[tuple[int, int, str, int], tuple[int, int] | None] = {}  # None: from two
    for hint, node, name in readings:
        key = (node.id, -1 if name is None else name.id)
        if key in done:
            if not ordered and done[key] != hint and \
                    classify(node, name, hint) != classify(node, name, done[key]):
                return None
            continue
        done[key] = hint
        for found in classify(node, name, hint):
            named = -1 if found.name_node is None else found.name_node.start_byte
            at = (found.outer.start_byte, found.outer.end_byte, found.name, named)
            if not ordered and at in unique:
                if unique[at] != found:
                    return None
                origin[at] = None if origin[at] != key else key
            origin.setdefault(at, key)
            unique[at] = found
    result = sorted(unique.values(), key=lambda f: (f.outer.start_byte, -f.outer.end_byte))
    if not ordered and not _apart(result, unique, origin):
        return None
    return result


def _apart(result: list[Found], unique: dict[tuple[int, int, str, int], Found],
           origin: dict[tuple[int, int, str, int], tuple[int, int] | None]) -> bool:
    """Whether the definitions that share a range (next to each other in `result`) all
    come from one match, which lists them in its own order."""
    keys = {id(found): at for at, found in unique.items()}
    for before, after in zip(result, result[1:]):
        if (before.outer.start_byte, before.outer.end_byte) != \
                (after.outer.start_byte, after.outer.end_byte):
            continue
        one, other = origin[keys[id(before)]], origin[keys[id(after)]]
        if one is None or one != other:
            return False
    return True


_Made = TypeVar("_Made", Symbol, Definition)


def _build(family: ModuleType, root: Node, data: bytes, found: list[Found],
           make: Callable[[Found, str, str, int, int, bytes], _Made]) -> list[_Made]:
    """The definitions `found` nested (parents, name paths, kinds the nesting decides),
    each made by `make` from (found, kind, name path, parent, start grown up, data)."""
    adjust = getattr(family, "adjust", None)
    result: list[_Made] = []
    stack: list[tuple[int, int, int]] = []  # (start, end, index) of open enclosing symbols
    for definition in found:
        outer = definition.outer
        span = (outer.start_byte, outer.end_byte)
        while stack and (stack[-1][1] < span[1] or stack[-1][:2] == span):
            stack.pop()
        parent = stack[-1][2] if stack else -1
        above = result[parent] if parent >= 0 else None
        kind = definition.kind
        if adjust is not None:
            kind = adjust(kind, definition.name, above.kind if above else None,
                          above.name if above else "", definition.scope)
        path = "/".join([*([above.name_path] if above else []), *definition.scope,
                         definition.name])
        start = grow_up(root, data, outer.start_byte, family.PREFIX)
        result.append(make(definition, kind, path, parent, start, data))
        if kind not in NOT_ENCLOSING:
            stack.append((*span, len(result) - 1))
    return result


def _symbol(definition: Found, kind: str, path: str, parent: int, start: int,
            data: bytes) -> Symbol:
    outer = definition.outer
    return Symbol(
        name=definition.name, kind=kind, name_path=path,
        line=outer.start_point[0] + 1 - data.count(b"\n", start, outer.start_byte),
        end_line=end_line(outer),
        signature=signature(data, definition.head or definition.node, kind),
        def_line=outer.start_point[0] + 1, start_byte=start, end_byte=outer.end_byte,
        name_byte=-1 if definition.name_node is None else definition.name_node.start_byte,
        parent=parent)


def _definition(definition: Found, kind: str, path: str, parent: int, start: int,
                _data: bytes) -> Definition:
    name = definition.name_node
    return Definition(definition.name, kind, path, start, definition.outer.end_byte,
                      -1 if name is None else name.start_byte, parent)


def grow_up(root: Node, data: bytes, start: int, prefix: frozenset[str]) -> int:
    """The start of the comment block and attributes directly above `start`: each line
    above, while its first token belongs to a comment (or attribute) that begins its own
    line and ends right before what follows it."""
    while True:
        line_start = data.rfind(b"\n", 0, start) + 1
        if line_start == 0 or data[line_start:start].strip():
            return start
        above = data.rfind(b"\n", 0, line_start - 1) + 1
        line = data[above:line_start]
        first = above + len(line) - len(line.lstrip())
        if first >= line_start - 1:
            return start  # a blank line ends the block
        if above == 0 and line.startswith(b"#!"):
            return start  # the interpreter line belongs to the file, as JavaScript's does
        node = root.descendant_for_byte_range(first, first + 1)
        for _ in range(_PREFIX_DEPTH):
            if node is None or node.type in prefix:
                break
            node = node.parent
        if node is None or node.type not in prefix or node.end_byte > start or \
                data[node.end_byte:start].strip():
            return start
        begins = data.rfind(b"\n", 0, node.start_byte) + 1
        if data[begins:node.start_byte].strip():
            return start  # a comment after code on its line belongs to that code
        start = node.start_byte


def end_line(node: Node) -> int:
    """The last line a node holds text on (one that ends with its line break ends there)."""
    row, column = node.end_point
    return row if column == 0 and row > node.start_point[0] else row + 1


def signature(data: bytes, node: Node, kind: str) -> str:
    """The head up to the body, whitespace collapsed, at most SIGNATURE_CHARS: a variable,
    constant, field or macro has no body, so its first line; any other bodiless one (a
    prototype) its whole text."""
    end = None if kind in _FIRST_LINE else _body_start(node)
    if end is None:
        end = node.end_byte
        if kind in _FIRST_LINE:
            newline = data.find(b"\n", node.start_byte, end)
            end = end if newline < 0 else newline
    said = " ".join(data[node.start_byte:end].decode("utf-8", "replace").split())
    return said if len(said) <= SIGNATURE_CHARS else said[:SIGNATURE_CHARS - 1] + "…"


def _body_start(node: Node, depth: int = 3) -> int | None:
    """Where the head of a definition ends: before its `body` (or a child that is a body:
    `{`, a block), after the last token before it that is no comment; else the same
    within its value, type or declaration, or within the one thing a declaration
    declares."""
    body = node.child_by_field_name("body")
    end = None
    for child in node.children:
        if child == body or child.type in _BODIES:
            return child.start_byte if end is None else end
        if "comment" not in child.type:
            end = child.end_byte
    if depth == 0:
        return None
    inner = [node.child_by_field_name(f) for f in ("value", "type", "declaration", "right")]
    named = [child for child in node.named_children if "comment" not in child.type]
    for holder in [*inner, named[0] if len(named) == 1 else None]:
        found = None if holder is None else _body_start(holder, depth - 1)
        if found is not None:
            return found
    return None
