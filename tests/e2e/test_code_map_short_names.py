"""Regression: code.map answered an empty map (`files: 0`) for code whose definitions all
have names shorter than three characters (`def f`, `class A`): such names carry no rank,
and with no name to rank the ranking returned nothing at all, though the map's promise is
the code's definitions within the budget. They are mapped in the files' order (the
focused files first), by the warm server and the cold one alike."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from chorus_tools.tools.code.rank import Summary, rank
from warm_support import Pair, paired

FILES = {
    "a.py": "def f():\n    return g()\n",
    "b.py": "def g():\n    return 1\n\n\nclass A:\n    pass\n",
    "c.js": "function h() { return 2; }\n",
}


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Pair]:
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    yield from paired(tmp_path, "ripgrep")


def test_short_names_are_mapped_in_the_files_order() -> None:
    summaries = [Summary(("f",), ("g",)), Summary(("g", "A"), ()), Summary(("h",), ())]
    assert rank(["a.py", "b.py", "c.js"], summaries) == [
        (pytest.approx(1e-6 / 3), 0, 0), (pytest.approx(1e-6 / 3), 1, 0),
        (pytest.approx(1e-6 / 3), 1, 1), (pytest.approx(1e-6 / 3), 2, 0)]
    focused = rank(["a.py", "b.py", "c.js"], summaries, focus=["c.js"])
    assert [(f, p) for _, f, p in focused] == [(2, 0), (0, 0), (1, 0), (1, 1)]
    assert rank([], []) == [] and rank([], [], focus=["a.py"]) == []  # no code at all


def test_warm_and_cold_map_short_names(pair: Pair) -> None:
    for params, first in (({}, "a.py:"), ({"focus": ["c.js"]}, "c.js:")):
        warm, cold = pair.ask("code.map", params)
        assert warm == cold, (warm, cold)
        reply = pair.cold.call("code.map", params)["result"]
        assert reply["files"] == 3 and reply["symbols"] == 4 and not reply["truncated"]
        assert reply["map"].startswith(first)
        for line in ("  def f():", "  def g():", "  class A:", "  function h()"):
            assert line in reply["map"].split("\n"), reply["map"]
