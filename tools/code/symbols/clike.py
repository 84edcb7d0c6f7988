"""C's and C++'s definitions: functions (their prototypes too: bodiless declarations count),
methods (in a class body, or `Shape::area` outside it; one named as its class is a
constructor), structs and unions (struct), classes, enums, typedefs and `using` aliases
(type), namespaces, `#define` (macro), fields, and file- or namespace-level variables.

A function is found by its declarator (tags.scm's pattern) and grows to what holds it:
a definition, a prototype, or a member declaration, through pointer and reference
declarators and a template head; a declarator inside a parameter list, a local
declaration or a typedef is no function.
"""

from __future__ import annotations

from tree_sitter import Node

from chorus_tools.tools.code.symbols.found import CLASSLIKE, Found, module_kind, text

PREFIX = frozenset({"comment"})
NAMES = frozenset({"identifier", "field_identifier", "type_identifier", "qualified_identifier",
                   "operator_name", "destructor_name", "template_function", "template_type",
                   "operator_cast",  # `operator bool()`
                   "primitive_type"})  # `typedef __ssize_t ssize_t;`: a name it knows
_THROUGH = frozenset({"pointer_declarator", "reference_declarator", "attributed_declarator"})
_HOLDERS = frozenset({"function_definition", "declaration", "field_declaration"})
_LOCAL = frozenset({"compound_statement", "parameter_list", "lambda_expression",
                    "condition_clause", "for_statement", "catch_clause"})
_SPECIFIERS = {"struct_specifier": "struct", "union_specifier": "struct",
               "class_specifier": "class", "enum_specifier": "enum"}


def classify(node: Node, name: Node | None, hint: str) -> list[Found]:
    kind = node.type
    if kind == "function_declarator":
        return _function(node, name)
    if kind == "operator_cast":
        return _function(node, node)
    if kind in _SPECIFIERS and name is not None:
        return [_named(_SPECIFIERS[kind], name, node, _template(node))]
    if kind == "namespace_definition" and name is not None:
        return [_named("namespace", name, node, node)]
    if kind in ("preproc_def", "preproc_function_def") and name is not None:
        return [_named("macro", name, node, node)]
    if kind == "alias_declaration" and name is not None:
        return [_named("type", name, node, _template(node))]
    if kind == "type_definition":
        return [_named("type", named, node, node) for named, _ in _declared(node)]
    if kind == "field_declaration":
        return [_named("field", named, node, node)
                for named, function in _declared(node) if not function]
    if kind == "declaration" and not _is_local(node):
        return [_named(module_kind(_last(named)), named, node, node)
                for named, function in _declared(node) if not function]
    return []


def _function(declarator: Node, name: Node | None) -> list[Found]:
    if name is None or name.type not in NAMES:
        return []
    while name.parent is not None and name.parent.type == "qualified_identifier":
        name = name.parent  # tags.scm names `area` in `Shape::area`: the scope counts too
    holder = (name if declarator.type == "operator_cast" else declarator).parent
    while holder is not None and holder.type in _THROUGH:
        holder = holder.parent
    if holder is None or holder.type not in _HOLDERS or _is_local(holder):
        return []
    return [_named("function", name, holder, _template(holder))]


def _named(kind: str, name: Node, node: Node, outer: Node) -> Found:
    scope: list[str] = []
    while name.type == "qualified_identifier":
        scoped = name.child_by_field_name("scope")
        if scoped is not None:
            scope.append(_last_text(scoped))
        inner = name.child_by_field_name("name")
        if inner is None:
            break
        name = inner
    return Found(kind, _last_text(name), node, outer, name, tuple(scope))


def _last_text(node: Node) -> str:
    """A name without template arguments (`Point<T>` is `Point`); a conversion operator
    as ctags names it (`operator bool`)."""
    if node.type == "operator_cast":
        return " ".join(["operator", *text(node.child_by_field_name("type")).split()])
    if node.type in ("template_type", "template_function"):
        inner = node.child_by_field_name("name")
        if inner is not None:
            return text(inner)
    return text(node)


def _last(name: Node) -> str:
    return _last_text(name).rsplit("::", 1)[-1]


def _declared(node: Node) -> list[tuple[Node, bool]]:
    """Each name a declaration declares, and whether it declares a function there."""
    found = []
    for child in node.children_by_field_name("declarator"):
        function = False
        while child is not None and child.type not in NAMES:
            if child.type == "function_declarator":
                inner = child.child_by_field_name("declarator")
                function = inner is not None and inner.type in NAMES
                child = inner
            elif child.type == "parenthesized_declarator":  # skip a macro it misread
                child = next((c for c in child.named_children if c.type != "ERROR"), None)
            else:  # a reference declarator names no field: its declarator is its last child
                child = child.child_by_field_name("declarator") or (
                    child.named_children[-1] if child.named_children else None)
        if child is not None:
            found.append((child, function))
    return found


def _is_local(node: Node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in _LOCAL:
            return True
        if parent.type in ("translation_unit", "declaration_list", "field_declaration_list"):
            return False
        parent = parent.parent
    return False


def _template(node: Node) -> Node:
    parent = node.parent
    while parent is not None and parent.type == "template_declaration":
        node, parent = parent, parent.parent
    return node


def adjust(kind: str, name: str, parent_kind: str | None, parent_name: str,
           scope: tuple[str, ...]) -> str:
    if kind == "function" and (parent_kind in CLASSLIKE or scope):
        owner = scope[-1] if scope else parent_name
        return "constructor" if name == owner else "method"
    return kind
