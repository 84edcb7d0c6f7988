"""Bug: a repetition repeated (`a++`, `a*+`, `a?+`, `a**`, `a+*`, `x{2}+`, `x{2}{3}`,
`a*{2}`) is ripgrep's nested repetition, `(?:a+)+`, but the python engine read `++`,
`*+`, `?+`, `{2}+` as possessive (so `^a++a$` found nothing in `aaa`, `^\\d{2}+$` nothing
in `1234`, where ripgrep finds them) and refused `**`, `+*`, `{2}{3}` as a "multiple
repeat": the engines disagreed (docs/protocol.md: both give the same results)."""

from __future__ import annotations

from pathlib import Path

import pytest


from fanout_runner import ENGINES, search_tree


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("aaa\n12345\nab\n")
    (tmp_path / "c.txt").write_text("1234\nxxxxxx\nabab\n")
    return tmp_path


def _lines(root: Path, engine: str, pattern: str, path: str = ".") -> list[tuple[str, int]]:
    reply = search_tree(root, engine, pattern=pattern, path=path)
    return [(m["path"], m["line"]) for m in reply["matches"]]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("pattern, lines", [
    (r"^a++a$", [1]), (r"^a*+a$", [1]), (r"^a?+a", [1, 3]), (r"^\d++5$", [2]),
    (r"^a**$", [1]), (r"^a+*$", [1]), (r"^a?*b", [3]), (r"^(a)++$", [1]),
    (r"^[ab]*+b$", [3]), (r"^a*?a$", [1]), (r"^a\*+", [])])
def test_a_repeated_repetition_is_nested(tree: Path, engine: str, pattern: str,
                                        lines: list[int]) -> None:
    assert _lines(tree, engine, pattern, "a.txt") == [("a.txt", n) for n in lines]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("pattern, found", [
    (r"^\d{2}+$", [("c.txt", 1)]), (r"^x{2}{3}$", [("c.txt", 2)]),
    (r"^(ab){2}+$", [("c.txt", 3)]), (r"^a{1}*b", [("a.txt", 3), ("c.txt", 3)]),
    (r"^\d*{2}4$", [("c.txt", 1)]), (r"^x{2}*$", [("c.txt", 2)]),
    (r"^x{2}?x", [("c.txt", 2)])])
def test_a_repeated_counted_repetition_is_nested(tree: Path, engine: str, pattern: str,
                                                found: list[tuple[str, int]]) -> None:
    assert _lines(tree, engine, pattern) == found
