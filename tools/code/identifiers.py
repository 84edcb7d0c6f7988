"""Every identifier of a file, with its use, from one pass of one query over its tree: the
table code.references filters by name, walking (tools/code/occurrences.py) and in the
warm process's symbol index alike, so both answer the same (docs/protocol.md, "Code by
structure").

An identifier is a token of a kind whose name ends in `identifier` (`identifier`,
`type_identifier`, `property_identifier`, ...; not the composite `scoped_`, `nested_` or
`qualified_` ones, whose parts are tokens themselves): strings and comments hold none.
Its use, first that applies:
- `definition`: a symbol's own name (tools/code/symbols);
- `call`: the callee of a call, through member accesses (`a.b.c()`: `c`);
- `type`: a type identifier;
- `import` / `type`: inside the innermost import statement or type context around it;
- `reference`: any other.
The query captures the identifiers, the callees and the contexts, and the rest is done
on arrays, so the cost is the tree walk, not Python per identifier.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np
from tree_sitter import Language, Node, Query, QueryCursor, QueryError, Tree

from chorus_tools.tools.code.languages import parser
from chorus_tools.tools.code.symbols.record import Definition, Symbol

KINDS = ("reference", "call", "type", "import", "definition")
REFERENCE, CALL, TYPE, IMPORT, DEFINITION = range(len(KINDS))
ENCLOSING = frozenset({"class", "interface", "struct", "enum", "trait", "impl", "function",
                       "method", "constructor", "property"})
_IMPORTS = ("import_statement", "import_from_statement", "future_import_statement",
            "import_declaration", "import_spec", "use_declaration",
            "extern_crate_declaration", "import_alias", "using_declaration",
            "preproc_include")
_TYPE_CONTEXTS = ("type", "type_annotation", "type_arguments", "generic_type")
_CALLS = {"call": "function", "call_expression": "function", "new_expression": "constructor",
          "method_invocation": "name", "macro_invocation": "macro",
          "object_creation_expression": "type"}
_MEMBERS = {"attribute": "attribute", "member_expression": "property",
            "selector_expression": "field", "field_expression": "field",
            "scoped_identifier": "name", "qualified_identifier": "name",
            "generic_function": "function", "template_function": "name"}
_COMPOSITE = ("scoped_", "nested_", "qualified_")
_CHAIN = 2  # member accesses between a call and its callee's name, at most
_compiled: dict[str, Query | None] = {}
_sources: dict[str, str | None] = {}


class Table(NamedTuple):
    """A file's identifiers in file order: `names` the distinct texts, `name` each one's
    index among them, its byte offset, its use (an index into KINDS) and the innermost
    enclosing symbol (an index into `holders`, -1 at the top)."""

    names: list[str]
    name: np.ndarray  # int32
    offset: np.ndarray  # uint32
    kind: np.ndarray  # uint8
    inside: np.ndarray  # int32
    holders: tuple[str, ...]  # name paths of the classes, functions and methods


def table(grammar: str, tree: Tree, data: bytes, found: Sequence[Symbol] | Sequence[Definition],
          caught: dict[str, list[Node]] | None = None) -> Table:
    """The identifier table of `data` (parsed as `tree`, whose symbols are `found`), from
    `caught` when the caller has the tree's captures of a query holding this one's."""
    holders = [s for s in found if s.kind in ENCLOSING]
    if caught is None:
        query = _query(grammar)
        if query is None:
            return _empty(holders)
        caught = QueryCursor(query).captures(tree.root_node)
    typed = caught.get("type_id", [])
    nodes = caught.get("id", []) + typed
    if not nodes:
        return _empty(holders)
    starts = np.array([n.start_byte for n in nodes], dtype=np.uint32)
    order = np.argsort(starts, kind="stable")
    offset = starts[order]
    ends = np.array([n.end_byte for n in nodes], dtype=np.uint32)[order]
    kind = np.zeros(len(nodes), dtype=np.uint8)
    for label, use in (("import", IMPORT), ("type_context", TYPE)):
        spans = sorted((n.start_byte, -n.end_byte) for n in caught.get(label, ()))
        if not spans:
            continue
        bounds = np.searchsorted(offset, np.array(spans, dtype=np.int64).T * [[1], [-1]])
        for low, high in bounds.T.tolist():  # outer first: an inner context has the last word
            kind[low:high] = use
    if typed:
        kind[np.isin(offset, np.array([n.start_byte for n in typed], dtype=np.uint32))] = TYPE
    callees = caught.get("callee", [])
    _mark(kind, offset, ends, [n.start_byte for n in callees], [n.end_byte for n in callees],
          CALL)
    named = [s.name_byte for s in found if s.name_byte >= 0]
    _mark(kind, offset, None, named, named, DEFINITION)
    local: dict[bytes, int] = {}
    name = np.array([local.setdefault(data[s:e], len(local))
                     for s, e in zip(offset.tolist(), ends.tolist())], dtype=np.int32)
    return Table([t.decode("utf-8", "surrogateescape") for t in local], name, offset, kind,
                 _inside(offset, holders), tuple(s.name_path for s in holders))


def _mark(kind: np.ndarray, offset: np.ndarray, ends: np.ndarray | None, starts: list[int],
          stops: list[int], use: int) -> None:
    """Set `use` on the identifiers that start at one of `starts` (and end at the
    matching one of `stops`, unless `ends` is None)."""
    if not starts or not len(offset):
        return
    wanted = np.array(starts, dtype=np.int64)
    at = np.minimum(np.searchsorted(offset, wanted), len(offset) - 1)
    hit = offset[at] == wanted
    if ends is not None:
        hit &= ends[at] == np.array(stops, dtype=np.int64)
    kind[at[hit]] = use


def _inside(offset: np.ndarray, holders: Sequence[Symbol | Definition]) -> np.ndarray:
    """Each identifier's innermost holder: of the symbols whose range holds it (and whose
    own name it is not), the one that starts last."""
    inside = np.full(len(offset), -1, dtype=np.int32)
    if not holders or not len(offset):
        return inside
    order = sorted(range(len(holders)), key=lambda i: holders[i].start_byte)
    spans = np.array([(holders[j].start_byte, holders[j].end_byte, holders[j].name_byte)
                      for j in order], dtype=np.int64)
    found = np.searchsorted(offset, spans).tolist()
    names = spans[:, 2].tolist()
    for j, (low, high, own), name in zip(order, found, names):
        if low >= high:
            continue
        keep = inside[own] if low <= own < high and offset[own] == name else None
        inside[low:high] = j
        if keep is not None:
            inside[own] = keep
    return inside


def _empty(holders: Sequence[Symbol | Definition]) -> Table:
    return Table([], np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.uint32),
                 np.zeros(0, dtype=np.uint8), np.zeros(0, dtype=np.int32),
                 tuple(s.name_path for s in holders))


def _query(grammar: str) -> Query | None:
    """The grammar's query (made on first use); None for a grammar without identifiers."""
    if grammar not in _compiled:
        said = source(grammar)
        _compiled[grammar] = None if said is None else Query(_language(grammar), said)
    return _compiled[grammar]


def source(grammar: str) -> str | None:
    """The text of the grammar's query: identifiers as @id (type identifiers as
    @type_id), callees as @callee, import statements as @import, type contexts as
    @type_context; None for a grammar without identifiers (Markdown)."""
    if grammar in _sources:
        return _sources[grammar]
    language = _language(grammar)
    kinds = {k for i in range(language.node_kind_count)
             if language.node_kind_is_named(i) and (k := language.node_kind_for_id(i))}
    tokens = sorted(k for k in kinds if k.endswith("identifier")
                    and not k.startswith(_COMPOSITE) and k != "type_identifier")
    if not tokens:
        _sources[grammar] = None
        return None
    parts = ["[" + " ".join(f"({k})" for k in tokens) + "] @id"]
    if "type_identifier" in kinds:
        parts.append("(type_identifier) @type_id")
    for label, group in (("import", _IMPORTS), ("type_context", _TYPE_CONTEXTS)):
        present = [k for k in group if k in kinds]
        if present:
            parts.append("[" + " ".join(f"({k})" for k in present) + f"] @{label}")
    parts += _callees(language, kinds)
    found = _sources[grammar] = "\n".join(parts)
    return found


def _language(grammar: str) -> Language:
    language = parser(grammar).language
    assert language is not None
    return language


def _callees(language: Language, kinds: set[str]) -> list[str]:
    """A pattern per way a call names its callee: the call's field, then up to _CHAIN
    member accesses' fields, kept where the grammar allows it."""
    members = [(m, f) for m, f in _MEMBERS.items() if m in kinds]
    chains: list[str] = ["(_) @callee"]
    every = list(chains)
    for _ in range(_CHAIN):
        chains = [f"({m} {f}: {inner})" for inner in chains for m, f in members]
        every += chains
    found = []
    for call, field in _CALLS.items():
        if call not in kinds:
            continue
        for inner in every:
            pattern = f"({call} {field}: {inner})"
            try:
                Query(language, pattern)
            except QueryError:
                continue  # a field or a nesting this grammar does not have
            found.append(pattern)
    return found
