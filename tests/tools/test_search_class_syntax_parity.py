"""Bugs where the python engine read a character class otherwise than ripgrep does, so the
engines disagreed on the same tree (docs/protocol.md: both give the same results):
- a negated POSIX class `[[:^alpha:]]` took the `regex` module's Unicode meaning, where
  ripgrep's POSIX classes are ASCII-only: `K` (KELVIN SIGN) was a letter to python alone;
- a range bounded by a class escape (`[\\w-.]`, `[\\d-z]`, `[a-\\d]`, `[\\pL-z]`) is
  refused by ripgrep ("invalid range boundary") but searched by the python engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from chorus_tools.tools.errors import ToolError

from fanout_runner import ENGINES, search_tree


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "kelvin.txt").write_text("K\u212aelvin\n")
    (tmp_path / "ascii.txt").write_text("abc-def.ghi 123\n")
    return tmp_path


@pytest.mark.parametrize("engine", ENGINES)
def test_a_negated_posix_class_is_ascii_only(tree: Path, engine: str) -> None:
    reply = search_tree(tree, engine, pattern="K[[:^alpha:]]e", output_mode="count")
    assert reply["counts"] == [{"path": "kelvin.txt", "count": 1}]
    reply = search_tree(tree, engine, pattern="^[[:^digit:][:alpha:]]+$", output_mode="count")
    assert reply["counts"] == [{"path": "kelvin.txt", "count": 1}]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("pattern", [r"[\w-.]+", r"[\d-z]", r"[a-\d]", r"[\pL-z]",
                                     r"[\p{L}-z]", r"[\S-x]"])
def test_a_range_bounded_by_a_class_is_invalid(tree: Path, engine: str, pattern: str) -> None:
    with pytest.raises(ToolError) as caught:
        search_tree(tree, engine, pattern=pattern)
    assert caught.value.code == "invalid_pattern"
    assert caught.value.details["param"] == "pattern"


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("pattern, count", [(r"[\w-]+\.", 1), (r"[-\w]+\.", 1),
                                            (r"[\w--a]", 2), (r"[\--z]", 2),
                                            (r"[\p{L}-]", 2)])
def test_a_class_beside_a_literal_dash_still_searches(tree: Path, engine: str, pattern: str,
                                                      count: int) -> None:
    assert search_tree(tree, engine, pattern=pattern, output_mode="count")["total"] == count


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("klass, lines", [
    ("alpha", [1, 4]), ("^alpha", [2, 3, 5, 6]), ("digit", [3]), ("space", [5, 6]),
    ("punct", [2]), ("word", [1, 3, 4]), ("cntrl", [6]), ("xdigit", [])])
def test_posix_classes_are_unicode_where_ripgrep_runs_pcre2(tmp_path: Path, engine: str,
                                                           klass: str,
                                                           lines: list[int]) -> None:
    """Bug: a pattern that needs PCRE2 (look-around, back-references) runs in ripgrep's
    PCRE2 mode, whose POSIX classes are Unicode (PCRE2_UCP): `(?<!x)[[:alpha:]]` found
    `ü` on ripgrep but not on the python engine, which kept them ASCII."""
    (tmp_path / "p.txt").write_text("ü\n«\n٣\nǅ\n\u00a0\n\u0085\n")
    found = search_tree(tmp_path, engine, pattern=f"(?<!x)^[[:{klass}:]]$")
    assert [m["line"] for m in found["matches"]] == lines
