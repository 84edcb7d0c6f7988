"""What a language family's function says of one definition the query found, and the
helpers those functions share (names written in declarators, wrappers, the caps rule)."""

from __future__ import annotations

import re
from typing import NamedTuple

from tree_sitter import Node

CLASSLIKE = frozenset({"class", "struct", "interface", "trait", "impl", "enum"})
CAPS = re.compile(r"_*[A-Z][A-Z0-9_]*")


class Found(NamedTuple):
    """A definition: its `kind` and `name`; `node` its own node (the signature starts
    there, or at `head` when given); `outer` the node whose range is the definition's
    (with wrappers: decorators, `export`, a template head, a one-spec declaration);
    `name_node` where the name is written; `scope` the qualifiers written before the
    name (a Go method's receiver, C++'s `Shape::area`)."""

    kind: str
    name: str
    node: Node
    outer: Node
    name_node: Node | None
    scope: tuple[str, ...] = ()
    head: Node | None = None


def text(node: Node | None) -> str:
    return "" if node is None or node.text is None else node.text.decode("utf-8", "replace")


def module_kind(name: str) -> str:
    """A module-level name: ALL_CAPS is a constant, any other a variable."""
    return "constant" if CAPS.fullmatch(name) else "variable"


def wrapped(node: Node, wrappers: frozenset[str]) -> Node:
    """`node` grown through the parents whose types are in `wrappers`."""
    parent = node.parent
    while parent is not None and parent.type in wrappers:
        node, parent = parent, parent.parent
    return node


def sole(node: Node, parent_types: frozenset[str]) -> Node:
    """The parent declaration when `node` is the only thing it declares (`const X = 1`:
    the statement, not the declarator), else `node`."""
    parent = node.parent
    if parent is None or parent.type not in parent_types:
        return node
    if sum(1 for child in parent.named_children if "comment" not in child.type) != 1:
        return node
    return parent


def first_named(node: Node | None, types: frozenset[str]) -> Node | None:
    """The first named child of `node` whose type is in `types`."""
    if node is None:
        return None
    return next((child for child in node.named_children if child.type in types), None)
