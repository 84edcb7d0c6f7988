"""Python's definitions: classes and functions at any nesting (tags.scm), a function in a
class body a method (`__init__` the constructor, one decorated as a property a property),
module-level assignments (tags.scm: constants when ALL_CAPS, else variables; every name of
an unpacking `A, B = 1, 2` and of a chain `x = y = 1`, as Python binds them all) and a
class body's assignments (fields)."""

from __future__ import annotations

from tree_sitter import Node

from chorus_tools.tools.code.symbols.found import CLASSLIKE, Found, module_kind, text

PREFIX = frozenset({"comment"})
_PROPERTY = frozenset({"property", "cached_property", "setter", "getter", "deleter"})


def classify(node: Node, name: Node | None, hint: str) -> list[Found]:
    if name is None:
        return []
    word = text(name)
    if node.type in ("function_definition", "class_definition"):
        parent = node.parent
        outer = parent if parent is not None and parent.type == "decorated_definition" else node
        kind = "class" if node.type == "class_definition" else (
            "property" if outer is not node and _is_property(outer) else "function")
        return [Found(kind, word, node, outer, name)]
    if node.type == "assignment" and node.parent is not None:
        kind = "field" if hint == "field" else module_kind(word)
        statement = node  # `x = y = 1`: y's definition is the whole statement, as x's
        while statement.parent is not None and statement.parent.type == "assignment":
            statement = statement.parent
        return [Found(kind, word, statement, statement.parent or node, name)]
    return []


def adjust(kind: str, name: str, parent_kind: str | None, parent_name: str,
           scope: tuple[str, ...]) -> str:
    if kind == "function" and parent_kind in CLASSLIKE:
        return "constructor" if name == "__init__" else "method"
    return kind


def _is_property(decorated: Node) -> bool:
    for child in decorated.named_children:
        if child.type == "decorator":
            said = text(child).lstrip("@").split("(")[0].strip()
            if said.rsplit(".", 1)[-1] in _PROPERTY:  # @property, @x.setter
                return True
    return False
