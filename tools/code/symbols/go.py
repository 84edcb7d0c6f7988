"""Go's definitions: functions, methods (named by their receiver's type: `Server/Start`),
type specs (a struct, an interface, or a type), aliases, interface methods, struct
fields, and package-level constants and variables."""

from __future__ import annotations

from tree_sitter import Node

from chorus_tools.tools.code.symbols.found import Found, module_kind, sole, text

PREFIX = frozenset({"comment"})
_TYPE_KINDS = {"struct_type": "struct", "interface_type": "interface"}
_SPECS = frozenset({"type_declaration", "const_declaration", "var_declaration"})


def classify(node: Node, name: Node | None, hint: str) -> list[Found]:
    if name is None:
        return []
    word = text(name)
    kind = node.type
    if kind == "function_declaration":
        return [Found("function", word, node, node, name)]
    if kind == "method_declaration":
        receiver = _receiver(node)
        return [Found("method", word, node, node, name, (receiver,) if receiver else ())]
    if kind in ("type_spec", "type_alias"):
        shape = node.child_by_field_name("type")
        found = _TYPE_KINDS.get(shape.type, "type") if shape is not None else "type"
        return [_spec(found, word, node, name)]
    if kind == "method_elem":
        return [Found("method", word, node, node, name)]
    if kind == "field_declaration":
        return [Found("field", word, node, node, name)]
    if kind == "const_spec":
        return [_spec("constant", word, node, name)]
    if kind == "var_spec":
        return [_spec(module_kind(word), word, node, name)]
    return []


def _spec(kind: str, word: str, node: Node, name: Node) -> Found:
    """A spec alone in its declaration takes the declaration's range (`type X struct`)."""
    holder = node.parent
    if holder is not None and holder.type == "var_spec_list":
        listed = sole(node, frozenset({"var_spec_list"}))
        outer = sole(holder, _SPECS) if listed is holder else node
    else:
        outer = sole(node, _SPECS)
    return Found(kind, word, node, outer, name, head=outer)


def _receiver(node: Node) -> str:
    """The type a method's receiver names, without pointer or type arguments."""
    receiver = node.child_by_field_name("receiver")
    parameter = receiver.named_children[0] if receiver and receiver.named_children else None
    shape = parameter.child_by_field_name("type") if parameter is not None else None
    while shape is not None and shape.type in ("pointer_type", "generic_type",
                                               "parenthesized_type"):
        inner = shape.child_by_field_name("type")
        shape = inner if inner is not None else (
            shape.named_children[0] if shape.named_children else None)
    return text(shape) if shape is not None else ""

