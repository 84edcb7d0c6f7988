"""JavaScript's and TypeScript's class and object members as the language defines them
(issue 45): private names with their `#`, computed names by their source text, generators
and async generators, accessors, class fields holding functions, object-literal methods,
and generator functions given a name by a declaration; and TypeScript's construct
signatures. A static block has no name and is no symbol."""

from __future__ import annotations

import pytest

from chorus_tools.tools.code.symbols import Symbol, symbols

SOURCE = b"""class A {
  #x = 1;
  static #count = 0;
  #slurp(ex) { return ex; }
  static [Symbol.hasInstance](x) { return true; }
  get [kRunning]() { return 1; }
  *[Symbol.iterator]() {}
  async *processBodyChunk(c) {}
  set size(v) {}
  static { init(); }
  handler = () => {};
  'quoted'() {}
}
const o = {
  *items() {},
  [Symbol.asyncIterator]() {},
  stream: async function* () {},
};
function outer() {
  const chunks = async function* (bytes) {};
}
"""

EXPECTED = [
    ("class", "A", 1), ("field", "A/#x", 2), ("field", "A/#count", 3),
    ("method", "A/#slurp", 4), ("method", "A/[Symbol.hasInstance]", 5),
    ("property", "A/[kRunning]", 6), ("method", "A/[Symbol.iterator]", 7),
    ("method", "A/processBodyChunk", 8), ("property", "A/size", 9),
    ("method", "A/handler", 11), ("method", "A/quoted", 12),
    ("variable", "o", 14), ("method", "o/items", 15), ("method", "o/[Symbol.asyncIterator]", 16),
    ("function", "o/stream", 17), ("function", "outer", 19), ("function", "outer/chunks", 20),
]


def path_of(found: list[Symbol], i: int) -> str:
    parts = []
    while i >= 0:
        parts.append(found[i].name)
        i = found[i].parent
    return "/".join(reversed(parts))


@pytest.mark.parametrize("name", ["m.js", "m.ts"])
def test_members_are_named_as_the_language_names_them(name: str) -> None:
    found = symbols(name, SOURCE)
    assert [(s.kind, path_of(found, i), s.line) for i, s in enumerate(found)] == EXPECTED


def test_a_typescript_construct_signature_is_a_constructor_named_new() -> None:
    found = symbols("p.d.ts", b"interface PromiseConstructor {\n"
                              b"  new <T>(executor: (resolve: any) => void): Promise<T>;\n}\n")
    assert [(s.kind, s.name, s.line) for s in found] == [
        ("interface", "PromiseConstructor", 1), ("constructor", "new", 2)]
