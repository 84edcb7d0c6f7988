"""Bug: `$` did not match at the end of a CRLF line on either engine (`beta$` missed every
`beta\\r\\n`, `^$` every empty CRLF line), and `\\s+$` took every CRLF line for one with
trailing whitespace, where docs/protocol.md has `$` match before `\\r\\n` as before `\\n`,
as ripgrep's `--crlf` does: the agent never sees the `\\r`."""

from __future__ import annotations

from pathlib import Path

import pytest

from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.search.syntax import analyse

from fanout_runner import ENGINES, search_tree


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "crlf.txt").write_bytes(b"alpha beta\r\n\r\nbeta gamma\r\nend beta\r\n")
    (tmp_path / "lf.txt").write_bytes(b"alpha beta\n\nbeta gamma\nend beta")
    return tmp_path


@pytest.mark.parametrize("engine", ENGINES)
def test_dollar_matches_before_crlf_as_before_lf(tree: Path, engine: str) -> None:
    reply = search_tree(tree, engine, pattern="beta$")
    assert [(m["path"], m["line"], m["content"]) for m in reply["matches"]] == [
        ("crlf.txt", 1, "alpha beta"), ("crlf.txt", 4, "end beta"),
        ("lf.txt", 1, "alpha beta"), ("lf.txt", 4, "end beta")]


@pytest.mark.parametrize("engine", ENGINES)
def test_empty_line_pattern_finds_empty_crlf_lines(tree: Path, engine: str) -> None:
    reply = search_tree(tree, engine, pattern="^$", output_mode="count")
    assert reply["counts"] == [{"path": "crlf.txt", "count": 1}, {"path": "lf.txt", "count": 1}]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_multiline_dollar_spans_a_crlf_break(tree: Path, engine: str) -> None:
    reply = search_tree(tree, engine, pattern=r"beta$\n^beta", multiline=True)
    assert [(m["path"], m["line"]) for m in reply["matches"]] == []
    reply = search_tree(tree, engine, pattern=r"alpha beta$\n^$", multiline=True)
    assert [(m["path"], m["line"]) for m in reply["matches"]] == [("crlf.txt", 1), ("lf.txt", 1)]


@pytest.mark.parametrize("engine", ENGINES)
def test_an_escaped_or_classed_dollar_stays_a_character(tmp_path: Path, engine: str) -> None:
    (tmp_path / "money.txt").write_bytes(b"cost $5\r\nend$\r\n")
    reply = search_tree(tmp_path, engine, pattern=r"\$5|[$]$")
    assert [m["line"] for m in reply["matches"]] == [1, 2]


@pytest.mark.parametrize("engine", ENGINES)
def test_the_cr_is_no_trailing_whitespace(tmp_path: Path, engine: str) -> None:
    (tmp_path / "ws.txt").write_bytes(b"clean\r\ndirty \r\nx\r\ntab\t\r\n")
    reply = search_tree(tmp_path, engine, pattern=r"\s+$")
    assert [m["line"] for m in reply["matches"]] == [2, 4]
    reply = search_tree(tmp_path, engine, pattern=r"x[^y]|x\s|x.")
    assert reply["matches"] == []


@pytest.mark.parametrize("engine", ENGINES)
def test_a_literal_cr_is_refused_without_multiline(tree: Path, engine: str) -> None:
    for pattern in (r"beta\r", r"beta[\r]", "beta\r", r"\x0D", r"\x{d}"):
        with pytest.raises(ToolError) as caught:
            search_tree(tree, engine, pattern=pattern)
        assert caught.value.code == "invalid_pattern", pattern
        assert caught.value.details["param"] == "pattern"
    reply = search_tree(tree, engine, pattern=r"beta\r\n", multiline=True, output_mode="count")
    assert reply["counts"] == [{"path": "crlf.txt", "count": 2}]


def test_only_anchors_are_rewritten_and_only_for_multiline() -> None:
    assert analyse(r"a$|\$[$]", literal=False, multiline=True).ripgrep == r"a(?:\r?$)|\$[$]"
    assert analyse(r"a$|\$[$]", literal=False).ripgrep == r"a$|\$[$]"
    assert analyse("a$", literal=True, multiline=True).ripgrep == "a$"


def test_an_error_position_counts_in_the_clients_pattern(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as caught:
        search_tree(tmp_path, "python", pattern="x$$(", multiline=True)
    assert caught.value.details["reason"] == "missing ) at position 4"
