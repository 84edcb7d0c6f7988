"""JavaScript's and TypeScript's definitions: classes, functions (declared, or a function
given a name by a declaration, an assignment or an object key), methods (`constructor`
the constructor, `get`/`set` accessors properties; a private member named with its `#`,
a computed one by its source text, `[Symbol.iterator]`; a generator or async generator a
method), class fields (a field holding a function a method), module-level
declarations (ALL_CAPS constants, else variables), and TypeScript's interfaces (with their
members), type aliases, enums, namespaces and ambient declarations."""

from __future__ import annotations

from tree_sitter import Node

from chorus_tools.tools.code.symbols.found import Found, module_kind, sole, text, wrapped

PREFIX = frozenset({"comment", "decorator"})
_WRAPPERS = frozenset({"export_statement", "ambient_declaration"})
_DECLARATIONS = frozenset({"lexical_declaration", "variable_declaration"})
_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function",
                              "generator_function"})
_KINDS = {
    "class_declaration": "class", "class": "class", "abstract_class_declaration": "class",
    "function_declaration": "function", "generator_function_declaration": "function",
    "function_expression": "function", "function": "function",
    "generator_function": "function", "function_signature": "function",
    "method_signature": "method", "abstract_method_signature": "method",
    "construct_signature": "constructor",  # an interface's `new (...)`, named `new`
    "interface_declaration": "interface", "type_alias_declaration": "type",
    "enum_declaration": "enum", "internal_module": "namespace", "module": "namespace",
    "field_definition": "field", "public_field_definition": "field",
    "property_signature": "field", "pair": "function", "assignment_expression": "function",
}


def classify(node: Node, name: Node | None, hint: str) -> list[Found]:
    if name is None:
        return []
    word = _member_name(name)
    kind = _KINDS.get(node.type)
    if node.type == "method_definition":
        return [Found(_method_kind(node, word), word, node, node, name)]
    if kind == "field" and _holds_function(node):
        kind = "method"
    if node.type == "variable_declarator":
        return _declarator(node, name, word, hint)
    if kind is None:
        return []
    if kind == "namespace":
        word = word.strip("\"'`")
    outer = node
    if node.type == "assignment_expression" and node.parent is not None and \
            node.parent.type == "expression_statement":
        outer = node.parent
    return [Found(kind, word, node, wrapped(outer, _WRAPPERS), name)]


def _declarator(node: Node, name: Node, word: str, hint: str) -> list[Found]:
    value = node.child_by_field_name("value")
    if value is not None and value.type in _FUNCTION_VALUES:
        kind = "function"
    elif hint == "variable":
        kind = module_kind(word)
    else:
        return []
    statement = sole(node, _DECLARATIONS)
    return [Found(kind, word, node, wrapped(statement, _WRAPPERS), name, head=statement)]


def _method_kind(node: Node, word: str) -> str:
    if word == "constructor":
        return "constructor"
    for child in node.children:
        if child.type in ("get", "set"):
            return "property"
        if child.is_named:
            break
    return "method"



def _member_name(name: Node) -> str:
    """A name as the source spells it: `#x` with its `#`, a computed `[Symbol.iterator]`
    in its brackets, a quoted `'key'` without its quotes (docs/protocol.md, "Code by
    structure")."""
    if name.type == "string":
        return text(name)[1:-1]
    return text(name)


def _holds_function(node: Node) -> bool:
    """A class field whose value is an arrow function or function expression: a method
    to whoever calls it (`handler = () => {}`)."""
    value = node.child_by_field_name("value")
    return value is not None and value.type in _FUNCTION_VALUES
