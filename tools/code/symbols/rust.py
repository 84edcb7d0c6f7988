"""Rust's definitions: structs and unions (struct), enums, traits, type aliases and
associated types, modules (namespace), `macro_rules!` (macro), functions (methods inside an
`impl` or a trait, bodiless ones included), `impl` blocks named by their type as ctags
names them (`impl Display for Point` is `Point`), constants, statics and struct fields."""

from __future__ import annotations

from tree_sitter import Node

from chorus_tools.tools.code.symbols.found import Found, module_kind, text

PREFIX = frozenset({"line_comment", "block_comment", "attribute_item"})
_KINDS = {
    "struct_item": "struct", "union_item": "struct", "enum_item": "enum",
    "type_item": "type", "associated_type": "type", "trait_item": "trait",
    "mod_item": "namespace", "macro_definition": "macro", "function_item": "function",
    "function_signature_item": "function", "const_item": "constant",
    "field_declaration": "field",
}
_TYPE_WRAPPERS = frozenset({"generic_type", "reference_type", "pointer_type",
                            "scoped_type_identifier", "abstract_type", "dynamic_type"})


def classify(node: Node, name: Node | None, hint: str) -> list[Found]:
    if name is None:
        return []
    if node.type == "impl_item":
        named = _type_name(node.child_by_field_name("type"))
        return [Found("impl", text(named), node, node, named)] if named is not None else []
    word = text(name)
    if node.type == "static_item":
        return [Found(module_kind(word), word, node, node, name)]
    kind = _KINDS.get(node.type)
    return [Found(kind, word, node, node, name)] if kind else []


def _type_name(node: Node | None) -> Node | None:
    """The type an `impl` is for, as written without its path or arguments."""
    while node is not None and node.type in _TYPE_WRAPPERS:
        inner = node.child_by_field_name("name" if node.type == "scoped_type_identifier"
                                         else "type")
        node = inner if inner is not None else next(
            (child for child in node.named_children if child.type != "lifetime"), None)
    return node


def adjust(kind: str, name: str, parent_kind: str | None, parent_name: str,
           scope: tuple[str, ...]) -> str:
    if kind == "function" and parent_kind in ("impl", "trait"):
        return "method"
    return kind
