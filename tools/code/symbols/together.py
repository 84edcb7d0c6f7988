"""One walk of a tree for both the definitions and the identifiers of a file, as the
symbol index reads it (tools/code/codemap.read_summary). A tree-sitter query cursor
costs about 0.13 µs a node to walk a tree whatever it finds (0.5 ms of a standard library
file's 4.5): the definitions query (tools/code/symbols/queries.py) and the identifiers
query (tools/code/identifiers.py) walked it once each; one query holding both walks it
once.

One walk gives captures, not matches (matches cost a dict a match, and a file has a
thousand identifiers): each definition pattern's captures are named apart here
(`name.7`, `definition.class.7`), and each captured name is given back to its match's
definition, the nearest node holding it that the same pattern captured as one. The
matches come back in no particular order: tools/code/symbols/extract.py says when
their order could change its answer, and asks the definitions query itself then.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from tree_sitter import Node, Query, QueryCursor, Tree

from chorus_tools.tools.code.identifiers import source as identifiers_source
from chorus_tools.tools.code.languages import parser
from chorus_tools.tools.code.symbols.queries import definition_patterns

Reading = tuple[str, Node, Node | None]  # a match's hint, definition and name
_OWN = re.compile(r"@(definition\.\w+|name)(?![\w.])")  # the captures a pattern names apart
_DEPTH = 4  # levels a name may lie below its definition (3 in the queries: `a.b = ...`)


class Together(NamedTuple):
    query: Query
    roles: dict[str, tuple[int, str]]  # capture -> (pattern, "name" or the hint)
    named: frozenset[int]  # the definition patterns that capture a name


_compiled: dict[str, Together | None] = {}


def together(grammar: str) -> Together | None:
    """The grammar's query of both (made on first use); None for a grammar without
    identifiers (Markdown: its one query is its headings'), or with a definition pattern
    capturing two definitions (whose names the captures could not give back: the two
    queries are asked then)."""
    if grammar in _compiled:
        return _compiled[grammar]
    said = identifiers_source(grammar)
    if said is None:
        _compiled[grammar] = None
        return None
    parts = [said]
    for pattern, text in definition_patterns(grammar):
        parts.append(_OWN.sub(rf"@\1.{pattern}", text))
    language = parser(grammar).language
    assert language is not None
    query = Query(language, "\n".join(parts))
    roles: dict[str, tuple[int, str]] = {}
    named = set()
    for i in range(query.capture_count):
        capture = query.capture_name(i)
        own, _, pattern = capture.rpartition(".")
        if own.startswith("definition.") or own == "name":
            roles[capture] = (int(pattern), own.removeprefix("definition."))
            if own == "name":
                named.add(int(pattern))
        elif capture not in ("id", "type_id", "callee", "import", "type_context"):
            query.disable_capture(capture)  # a doc comment, a scope: no one reads them
    defining = [pattern for pattern, hint in roles.values() if hint != "name"]
    if len(defining) != len(set(defining)):
        _compiled[grammar] = None
        return None
    found = _compiled[grammar] = Together(query, roles, frozenset(named))
    return found


def captures(grammar: str, tree: Tree) -> dict[str, list[Node]] | None:
    """The tree's captures of the grammar's query of both, or None (no such query)."""
    found = together(grammar)
    return None if found is None else QueryCursor(found.query).captures(tree.root_node)


def readings(grammar: str, caught: dict[str, list[Node]]) -> list[Reading] | None:
    """The definitions query's matches, in no particular order, from the captures of
    the query of both, as (hint, definition, name): one a name, with the definition
    holding it (one a definition in a pattern without a name); None when a name has no
    such definition or a definition no name (then the definitions query must say)."""
    found = together(grammar)
    assert found is not None
    defined: dict[int, tuple[str, list[Node]]] = {}
    names: dict[int, list[Node]] = {}
    for capture, nodes in caught.items():
        role = found.roles.get(capture)
        if role is None:
            continue
        pattern, hint = role
        if hint == "name":
            names[pattern] = nodes
        else:
            defined[pattern] = (hint, nodes)
    if not names.keys() <= defined.keys():
        return None
    result: list[Reading] = []
    for pattern, (hint, nodes) in defined.items():
        if pattern not in found.named:
            result += [(hint, node, None) for node in nodes]
            continue
        holders = {node.id: node for node in nodes}
        unnamed = set(holders)
        for name in names.get(pattern, ()):
            holder = _holder(name, holders)
            if holder is None:
                return None
            unnamed.discard(holder.id)
            result.append((hint, holder, name))
        if unnamed:
            return None
    return result


def _holder(name: Node, holders: dict[int, Node]) -> Node | None:
    """The nearest of `holders` at or above `name` (within _DEPTH levels)."""
    node: Node | None = name
    for _ in range(_DEPTH + 1):
        if node is None:
            return None
        if node.id in holders:
            return holders[node.id]
        node = node.parent
    return None
