"""Bug: without multiline ripgrep matches each line on its own, so `\\A` (start of text)
matches at the start of every line, but the python engine searched the file as one text
and `\\Aend` found only a first line: the engines disagreed (docs/protocol.md: both give
the same results). With multiline `\\A` is the file's start on both."""

from __future__ import annotations

from pathlib import Path

import pytest


from fanout_runner import ENGINES, search_tree


@pytest.mark.parametrize("engine", ENGINES)
def test_start_of_text_is_each_line_start_line_by_line(tmp_path: Path, engine: str) -> None:
    (tmp_path / "a.txt").write_text("abc\nend one\nx end\nend\n")
    found = search_tree(tmp_path, engine, pattern=r"\Aend")
    assert [m["line"] for m in found["matches"]] == [2, 4]
    assert search_tree(tmp_path, engine, pattern=r"\A\w", output_mode="count")["total"] == 4
    found = search_tree(tmp_path, engine, pattern=r"\A\w+\n", multiline=True)
    assert [m["line"] for m in found["matches"]] == [1]
