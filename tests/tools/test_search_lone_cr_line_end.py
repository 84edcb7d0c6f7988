"""Bug: a lone `\\r` (a classic-Mac line end, or one stray in a line) was an ordinary
character to the python engine but a line end to ripgrep's `--crlf`, so the engines gave
different answers on the same file: `needle$` and `^next` found `needle\\rnext\\r` on
ripgrep only, `needle.next`, `needle\\snext` and `e\\W` on python only; and the python
engine showed `dbl\\r\\r\\n` as `dbl` where ripgrep shows `dbl\\r` (only the `\\r\\n` is a
line ending). docs/protocol.md: both engines give the same results on the same tree."""

from __future__ import annotations

from pathlib import Path

import pytest


from fanout_runner import ENGINES, search_tree


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "cronly.txt").write_bytes(b"needle\rnext\r")
    (tmp_path / "midcr.txt").write_bytes(b"mid\rcr here\nplain line\n")
    (tmp_path / "dbl.txt").write_bytes(b"dbl\r\r\nz\n")
    return tmp_path


def _found(root: Path, engine: str, **params: object) -> list[tuple[str, int, str]]:
    return [(m["path"], m["line"], m["content"])
            for m in search_tree(root, engine, **params)["matches"]]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("pattern", ["needle$", "^next", "next$", "mid$", "^cr here"])
def test_anchors_match_beside_a_lone_cr(tree: Path, engine: str, pattern: str) -> None:
    found = _found(tree, engine, pattern=pattern)
    assert [(path, line) for path, line, _ in found] in (
        [("cronly.txt", 1)], [("midcr.txt", 1)]), found


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("pattern", ["needle.next", r"needle\snext", r"needle[^a]next",
                                     r"e\W", r"d\s+c"])
def test_nothing_matches_a_lone_cr(tree: Path, engine: str, pattern: str) -> None:
    assert _found(tree, engine, pattern=pattern) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_only_the_crlf_is_a_line_ending_shown_away(tree: Path, engine: str) -> None:
    assert _found(tree, engine, pattern="dbl") == [("dbl.txt", 1, "dbl\r")]
    assert _found(tree, engine, pattern="^cr", context_lines=1) == [
        ("midcr.txt", 1, "--> mid\rcr here\n    plain line")]


@pytest.mark.parametrize("engine", ENGINES)
def test_multiline_reads_a_lone_cr_as_a_character(tree: Path, engine: str) -> None:
    assert _found(tree, engine, pattern=r"needle.next", multiline=True) == [
        ("cronly.txt", 1, "needle\rnext")]
