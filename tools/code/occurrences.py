"""Where a name occurs as an identifier in one file, and how it is used there: a `call`,
an `import`, a `type`, a `definition` (a symbol's own name) or another `reference`; the
parser decides, so text in strings and comments never counts (docs/protocol.md, "Code by
structure"). Candidates are found in the bytes and confirmed on the tree: a candidate
counts only where the smallest node spanning it is an identifier of exactly that text.
"""

from __future__ import annotations

import bisect
import re
from typing import NamedTuple

from tree_sitter import Node

from chorus_tools.tools.code.symbols import Symbol, symbols
from chorus_tools.tools.code.symbols.extract import tree_of

ENCLOSING = frozenset({"class", "interface", "struct", "enum", "trait", "impl", "function",
                       "method", "constructor", "property"})
_IMPORTS = frozenset({"import_statement", "import_from_statement", "future_import_statement",
                      "import_declaration", "import_spec", "use_declaration",
                      "extern_crate_declaration", "import_alias", "using_declaration",
                      "preproc_include"})
_CALLS = {"call": "function", "call_expression": "function", "new_expression": "constructor",
          "method_invocation": "name", "macro_invocation": "macro",
          "object_creation_expression": "type"}
_MEMBERS = {"attribute": "attribute", "member_expression": "property",
            "selector_expression": "field", "field_expression": "field",
            "scoped_identifier": "name", "qualified_identifier": "name",
            "generic_function": "function", "template_function": "name"}
_TYPE_CONTEXTS = frozenset({"type", "type_annotation", "type_arguments", "generic_type"})
_CLIMB = 8  # ancestors looked at for an import or a type context


class Occurrence(NamedTuple):
    line: int  # 1-based
    column: int  # 1-based, in characters of the line
    kind: str
    inside: str  # name_path of the innermost enclosing class or function, "" at the top
    text: str  # the whole line, without its line break


def occurrences(grammar: str, path: str, data: bytes, name: str) -> list[Occurrence]:
    """Every identifier `name` in `data` (the content of `path` in `grammar`), in order.
    A file where the name never stands alone as a word is not parsed."""
    wanted = name.encode("utf-8", "surrogateescape")
    spots = [m.start() for m in _word(wanted).finditer(data)]
    if not spots:
        return []
    found = symbols(path, data)  # its parse is the one looked at below (tools/code/parse.py)
    root = tree_of(grammar, path, data).root_node
    defined = {s.name_byte for s in found}
    holders = sorted((s for s in found if s.kind in ENCLOSING), key=lambda s: s.start_byte)
    starts = [s.start_byte for s in holders]
    result = []
    for start in spots:
        node = root.descendant_for_byte_range(start, start + len(wanted))
        if node is None or node.start_byte != start or node.end_byte != start + len(wanted) \
                or not node.type.endswith("identifier"):
            continue
        line_start = data.rfind(b"\n", 0, start) + 1
        line_end = data.find(b"\n", start)
        line = data[line_start:len(data) if line_end < 0 else line_end].rstrip(b"\r")
        result.append(Occurrence(
            line=node.start_point[0] + 1,
            column=len(data[line_start:start].decode("utf-8", "replace")) + 1,
            kind="definition" if start in defined else _kind(node),
            inside=_inside(holders, starts, start), text=line.decode("utf-8", "replace")))
    return result


def _word(name: bytes) -> re.Pattern[bytes]:
    """`name` where no identifier character touches it on either side."""
    return re.compile(rb"(?<![\w$\x80-\xff])" + re.escape(name) + rb"(?![\w$\x80-\xff])")


def _kind(node: Node) -> str:
    callee = node
    parent = node.parent
    while parent is not None and (field := _MEMBERS.get(parent.type)) is not None \
            and parent.child_by_field_name(field) == callee:
        callee, parent = parent, parent.parent
    if parent is not None and (field := _CALLS.get(parent.type)) is not None \
            and parent.child_by_field_name(field) == callee:
        return "call"
    if node.type == "type_identifier":
        return "type"
    above = node.parent
    for _ in range(_CLIMB):
        if above is None:
            break
        if above.type in _IMPORTS:
            return "import"
        if above.type in _TYPE_CONTEXTS:
            return "type"
        above = above.parent
    return "reference"


def _inside(holders: list[Symbol], starts: list[int], offset: int) -> str:
    """The innermost class, function or method holding `offset` (not the symbol whose
    name is written there): of those holding it, the one that starts last."""
    for i in range(bisect.bisect_right(starts, offset) - 1, -1, -1):
        s = holders[i]
        if s.end_byte > offset and s.name_byte != offset:
            return s.name_path
    return ""
