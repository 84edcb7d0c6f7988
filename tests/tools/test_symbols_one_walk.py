"""The symbol index's read of a file (tools/code/occurrences.file_definitions: one query
walk for its definitions and its identifiers, Definitions instead of Symbols) says what
the walking read says (file_table: two walks, whole Symbols), on every sample language
and on standard library modules; where the one walk's matches could be taken in another
order with another answer, the definitions query decides."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import numpy as np
import pytest

from chorus_tools.tools.code.occurrences import file_definitions, file_table
from chorus_tools.tools.code.symbols import queries, supported, together
from chorus_tools.tools.code.symbols.extract import FAMILIES, _found, tree_of

SAMPLES = Path(__file__).parent.parent / "samples" / "code"
STDLIB = ("argparse", "asyncio/base_events", "dataclasses", "email/_header_value_parser",
          "typing", "unittest/mock")
FIELDS = ("name", "kind", "name_path", "end_byte", "name_byte", "parent", "start_byte")


def _agrees(path: str, data: bytes) -> None:
    grammar = supported(path, data)
    assert grammar is not None
    symbols, walked = file_table(grammar, path, data)
    definitions, indexed = file_definitions(grammar, path, data)
    assert [tuple(getattr(d, f) for f in FIELDS) for d in definitions] == \
        [tuple(getattr(s, f) for f in FIELDS) for s in symbols]
    assert indexed.names == walked.names and indexed.holders == walked.holders
    for array in ("name", "offset", "kind", "inside"):
        assert np.array_equal(getattr(indexed, array), getattr(walked, array)), array


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.iterdir()))
def test_the_index_reads_a_sample_as_the_walk_does(name: str) -> None:
    _agrees(name, (SAMPLES / name).read_bytes())


def test_the_index_reads_the_standard_library_as_the_walk_does() -> None:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for module in STDLIB:
        path = stdlib / f"{module}.py"
        if path.exists():
            _agrees(str(path), path.read_bytes())


def _unordered(grammar: str, path: str, data: bytes) -> list | None:
    tree = tree_of(grammar, path, data, keep=False)
    caught = together.captures(grammar, tree)
    assert caught is not None
    readings = together.readings(grammar, caught)
    assert readings is not None
    return _found(FAMILIES[grammar].classify, readings, ordered=False)


def test_the_one_walk_answers_where_the_order_cannot_matter() -> None:
    data = (SAMPLES / "shapes.py").read_bytes()
    found = _unordered("python", "shapes.py", data)
    assert found and [f.name for f in found][:3] == ["MAX_SIDES", "default_name", "Shape"]


def test_two_names_of_one_declaration_are_left_to_the_definitions_query() -> None:
    """`X, Y int`: two fields of one range, from two matches: their order is the matches'
    (X first), which captures do not say; the definitions query's matches decide."""
    data = b"package c\n\ntype P struct{ X, Y int }\n"
    assert _unordered("go", "c.go", data) is None
    definitions, _ = file_definitions("go", "c.go", data)
    assert [d.name_path for d in definitions] == ["P", "P/X", "P/Y"]
    _agrees("c.go", data)


def test_the_query_of_both_is_made_without_the_grammar_packages_files(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker makes it inside its Landlock domain, where the tags.scm files the
    definitions query was read from before (queries.preload) cannot be read."""
    queries.preload()

    def unreadable(package: str) -> str:
        raise PermissionError(f"{package}'s tags.scm is outside the domain")
    monkeypatch.setattr(queries, "_tags", unreadable)
    monkeypatch.setattr(together, "_compiled", {})
    for grammar in FAMILIES:
        assert together.together(grammar) is not None


def test_a_pattern_with_two_definitions_is_left_to_the_two_queries(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Its captures could not say which name is whose: the grammar has no query of
    both, and the index reads the file as the walk does."""
    two = ("(class_definition name: (identifier) @name body: (block (function_definition)"
           " @definition.method)) @definition.class\n")
    monkeypatch.setitem(queries._EXTRA, "python", queries._EXTRA["python"] + two)
    for module, cache in ((queries, "_compiled"), (queries, "_sources"),
                          (together, "_compiled")):
        monkeypatch.setattr(module, cache, {})
    assert together.together("python") is None
    _agrees("shapes.py", (SAMPLES / "shapes.py").read_bytes())
