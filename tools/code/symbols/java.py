"""Java's definitions: classes and records (class), interfaces and annotation types
(interface), enums, methods (an annotation type's elements too), constructors, fields
and interface constants."""

from __future__ import annotations

from tree_sitter import Node

from chorus_tools.tools.code.symbols.found import Found, text

PREFIX = frozenset({"line_comment", "block_comment"})
_KINDS = {
    "class_declaration": "class", "record_declaration": "class",
    "interface_declaration": "interface", "annotation_type_declaration": "interface",
    "enum_declaration": "enum", "method_declaration": "method",
    "annotation_type_element_declaration": "method",
    "constructor_declaration": "constructor", "compact_constructor_declaration": "constructor",
    "field_declaration": "field", "constant_declaration": "constant",
}


def classify(node: Node, name: Node | None, hint: str) -> list[Found]:
    kind = _KINDS.get(node.type)
    if name is None or kind is None:
        return []
    return [Found(kind, text(name), node, node, name)]

