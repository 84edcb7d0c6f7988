"""No outline crashes (issue 45): code.outline and code.symbols on any bytes in every
grammar answer or raise a clean ToolError, never an internal error. Random bytes,
truncations of the real sample files with bytes spliced in, and deep nesting, bounded by
fuzz_support's budget; a longer run of the same properties is marked `long`. The C header
that failed (linux/atmmpc.h) has its own regression test, named after the bug."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from fuzz_support import budget, no_hang
from hypothesis import given, settings
from hypothesis import strategies as st

from chorus_tools.tools.code.find import find_symbols
from chorus_tools.tools.code.outline import outline
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError

SAMPLES = Path(__file__).parent.parent / "samples" / "code"
# one file per grammar: the samples, and `.h` for the C grammar of headers
NAMES = {"python": "shapes.py", "javascript": "cart.js", "typescript": "shapes.ts",
         "tsx": "view.tsx", "go": "server.go", "rust": "point.rs", "java": "Inventory.java",
         "c": "list.c", "cpp": "shapes.cpp", "markdown": "guide.md"}
OPENERS = ["(", "[", "{", "<", "/*", "#if X\n", "class A {", "def f():\n ", "- ", "> ",
           "fn f() {", "\"", "`${"]


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, ToolContext]]:
    """One workspace for every example, its root descriptor closed at the end."""
    root = tmp_path_factory.mktemp("outline-fuzz")
    ws = Workspace(str(root))
    yield root, ToolContext(ws)
    os.close(ws.root_fd)


def answers_or_refuses(fuzzed: tuple[Path, ToolContext], name: str, data: bytes) -> None:
    """The file holding `data` gets an outline and a symbol search, or a ToolError (the
    ones an undecodable or binary file earns); nothing else escapes."""
    root, ctx = fuzzed
    (root / name).write_bytes(data)
    with no_hang():
        try:
            found = outline(ctx, name, depth=9)
        except ToolError as err:
            assert err.code != "internal_error", err
            return
        assert found["total"] >= 0 and found["syntax_errors"] >= 0
        try:
            find_symbols(ctx, "a", path=name)
        except ToolError as err:
            assert err.code != "internal_error", err


def test_atmmpc_h_min_of_empty_sequence(fuzzed: tuple[Path, ToolContext]) -> None:
    """linux/atmmpc.h's shape: a `#define` whose trailing comment is followed by a space.
    tree-sitter marks the definition as holding an error (a MISSING token after the
    comment) that no child shows; the outline failed with `min() arg is an empty
    sequence`. Now it answers, counting the error where the definition is."""
    root, ctx = fuzzed
    (root / "atmmpc.h").write_bytes(b"#ifndef _ATMMPC_H_\n#define _ATMMPC_H_\n\n"
                                    b"#define MPC_P1 10  /* Shortcut-Setup Frame Count */ \n"
                                    b"#define MPC_P2 1   /* Shortcut-Setup Frame Time  */\n"
                                    b"#endif\n")
    found = outline(ctx, "atmmpc.h")
    assert found["syntax_errors"] == 1
    names = [s["name"] for s in found["symbols"]]
    assert {"MPC_P1", "MPC_P2"} <= set(names), names


def samples() -> st.SearchStrategy[tuple[str, bytes]]:
    return st.sampled_from([(name, (SAMPLES / name).read_bytes())
                            for name in NAMES.values()])


def truncated() -> st.SearchStrategy[tuple[str, bytes]]:
    """A real sample cut anywhere, with up to a few random bytes spliced in anywhere."""
    @st.composite
    def build(draw: st.DrawFn) -> tuple[str, bytes]:
        name, data = draw(samples())
        cut = draw(st.integers(0, len(data)))
        text = data[:cut]
        at = draw(st.integers(0, len(text)))
        noise = draw(st.binary(max_size=6))
        return name, text[:at] + noise + text[at:]
    return build()


def nested() -> st.SearchStrategy[tuple[str, bytes]]:
    """An opener repeated hundreds to thousands of times, closed or not."""
    @st.composite
    def build(draw: st.DrawFn) -> tuple[str, bytes]:
        name = draw(st.sampled_from(sorted(NAMES.values())))
        opener = draw(st.sampled_from(OPENERS))
        depth = draw(st.integers(1, 3000))
        closer = draw(st.sampled_from(["", ")", "]", "}", ">", "*/", "\n#endif\n"]))
        return name, (opener * depth + closer * draw(st.integers(0, depth))).encode()
    return build()


def random_bytes() -> st.SearchStrategy[tuple[str, bytes]]:
    return st.tuples(st.sampled_from(sorted(NAMES.values())), st.binary(max_size=400))


INPUTS = st.one_of(random_bytes(), truncated(), nested())


@budget()
@given(INPUTS)
def test_any_bytes_in_any_grammar_answer_or_refuse(fuzzed: tuple[Path, ToolContext],
                                                   case: tuple[str, bytes]) -> None:
    answers_or_refuses(fuzzed, *case)


@pytest.mark.parametrize("name", sorted(NAMES.values()))
def test_every_grammar_survives_each_kind_of_input(fuzzed: tuple[Path, ToolContext],
                                                   name: str) -> None:
    """Each grammar sees at least each kind once, whatever hypothesis draws above."""
    data = (SAMPLES / name).read_bytes()
    for case in (data[: len(data) // 2], data[:-1] + b"\xff\x00", b"\x00\xff" * 64,
                 b"(" * 2000, b"{" * 2000 + b"}" * 1000, b"/*" * 500):
        answers_or_refuses(fuzzed, name, case)


@pytest.mark.long
@settings(max_examples=3000, deadline=None)
@given(INPUTS)
def test_any_bytes_long_run(fuzzed: tuple[Path, ToolContext],
                            case: tuple[str, bytes]) -> None:
    answers_or_refuses(fuzzed, *case)
