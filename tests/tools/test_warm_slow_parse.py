"""Bug: the symbol index parsed every code file in the warm process (or a helper) with
no bound, so one file tree-sitter's error recovery chews on (700 KiB of junk C++: 45 s)
stalled every answer the warm process gives meanwhile: workspace.status took 20 s, a
file.search 10 s. A file whose parse runs past symbol_index.PARSE_SECONDS stays unknown,
as a file too big to index does: parsed by whoever asks, so the answers are unchanged
(docs/protocol.md, "Code by structure": the same with or without the index), and a
map needing it is made by the worker, never in the warm process."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Iterator

import pytest

from warm_support import built_warm
from chorus_tools.tools.code.codemap import code_map
from chorus_tools.tools.code.query import NameQuery
from chorus_tools.tools.warm import code_answers, symbol_index
from chorus_tools.tools.warm.answers import Warm

TOKENS = ["{", "}", "(", ")", "<", ">", "template", "class", "::", "int", ";", "=",
          "typename", "operator", "[", "]"]


def _junk(size: int) -> str:
    """C++ tokens in random order: tree-sitter's error recovery works hard on them."""
    rng = random.Random(7)
    return " ".join(rng.choice(TOKENS) for _ in range(size // 4)) + "\nint junk_marker;\n"


@pytest.fixture
def warm(root: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Warm]:
    # a bound no parse of the junk meets, however fast the machine (the others' too: a
    # tiny file's parse may finish before tree-sitter first asks whether to go on)
    monkeypatch.setattr(symbol_index, "PARSE_SECONDS", 1e-9)
    (root / "vendor").mkdir()
    (root / "vendor" / "junk.cpp").write_text(_junk(60_000))
    (root / "app.py").write_text("def junk_marker():\n    pass\n")
    with built_warm(root) as found:
        yield found


def test_a_file_too_slow_to_parse_stays_unknown(warm: Warm) -> None:
    index = warm.symbols
    assert "vendor/junk.cpp" in index.slow and "vendor/junk.cpp" in index.unknown()
    assert "vendor/junk.cpp" not in index.files
    assert warm.status()["symbols"] == "ready"  # nothing left to parse: not waiting on it


def test_the_asker_parses_it(warm: Warm) -> None:
    assert warm.current()
    asked = NameQuery.read("junk_marker")
    found = code_answers.code_symbols(warm, "", [], False, False, asked.needle,
                                      asked.parts[-1], "exact", True, asked, 100)
    assert found is not None and "vendor/junk.cpp" in found["files"]


def test_a_map_needing_it_is_the_workers(warm: Warm) -> None:
    assert warm.current()
    assert code_answers.code_map(warm, "", [], [], 4096) is None
    assert "app.py" in code_map(warm.ctx, "app.py")["map"]
