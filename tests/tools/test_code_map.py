"""code.map: definitions ranked by how much the rest of the code refers to them, rendered
within the byte budget (docs/protocol.md, "Code by structure"); and the ranking itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from chorus_tools.tools.code.codemap import code_map
from chorus_tools.tools.code.rank import Summary, rank
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError

ENGINE = '''\
class Engine:
    """Runs things."""

    def start(self):
        return self

    def _quiet(self):
        pass


def unused_helper():
    return None
'''


@pytest.fixture
def tree(root: Path) -> Path:
    (root / "core").mkdir()
    (root / "core" / "engine.py").write_text(ENGINE)
    for i in range(5):
        (root / f"user{i}.py").write_text(
            f"from core.engine import Engine\n\n\ndef run_{i}():\n    return Engine().start()\n")
    (root / "lonely.py").write_text("def lonely_function():\n    return 0\n")
    (root / "README.md").write_text("# Engine\n\nEngine docs.\n")
    return root


def test_the_most_referenced_definition_comes_first(ctx: ToolContext, tree: Path) -> None:
    found = code_map(ctx)
    text = found["map"]
    assert text.startswith("core/engine.py:\n  class Engine:\n    def start(self):\n")
    assert "README.md" not in text and "# Engine" not in text
    assert found["files"] == 7 and not found["truncated"]
    assert found["symbols"] == 4 + 5 + 1
    assert text.index("core/engine.py") < text.index("lonely.py")


def test_the_budget_holds_and_truncates(ctx: ToolContext, tree: Path) -> None:
    whole = code_map(ctx)
    size = len(whole["map"].encode())
    for budget in range(1, size, 13):
        found = code_map(ctx, max_bytes=budget)
        assert len(found["map"].encode()) <= budget
        assert found["truncated"]
    assert code_map(ctx, max_bytes=size) == whole
    assert code_map(ctx, max_bytes=1)["map"] == ""
    first = code_map(ctx, max_bytes=60)["map"]
    assert first.startswith("core/engine.py:\n  class Engine:")
    assert len(whole["map"].encode()) <= 4096


def test_elided_definitions_are_marked(ctx: ToolContext, tree: Path) -> None:
    found = code_map(ctx, max_bytes=70)
    assert found["map"] == "core/engine.py:\n  class Engine:\n    def start(self):\n  ⋮"


def test_focus_and_path_choose_what_ranks(ctx: ToolContext, tree: Path) -> None:
    focused = code_map(ctx, focus=["lonely.py"], max_bytes=60)
    assert focused["map"].startswith("lonely.py:\n  def lonely_function():")
    by_name = code_map(ctx, focus=["lonely_function"], max_bytes=60)
    assert by_name["map"] == focused["map"]
    inside = code_map(ctx, path="core")
    assert inside["files"] == 1 and inside["map"].startswith("core/engine.py:")
    globbed = code_map(ctx, glob="user*.py")
    assert globbed["files"] == 5 and "core/" not in globbed["map"]


def test_a_path_naming_one_file_maps_that_file(ctx: ToolContext, tree: Path) -> None:
    """code.symbols and code.references take one file as their path; code.map answered
    not_a_directory ("a component of the path is not a directory")."""
    found = code_map(ctx, path="core/engine.py")
    assert found["map"] == ("core/engine.py:\n  class Engine:\n    def start(self):\n"
                            "    def _quiet(self):\n  def unused_helper():")
    assert (found["files"], found["symbols"]) == (1, 4)
    assert code_map(ctx, path="README.md")["files"] == 0  # prose: never in the map
    with pytest.raises(ToolError) as named_as_directory:
        code_map(ctx, path="core/engine.py/")
    assert named_as_directory.value.code == "not_a_directory"


def test_the_map_is_deterministic(ctx: ToolContext, tree: Path) -> None:
    assert code_map(ctx) == code_map(ctx)


def test_rank_passes_rank_through_names_to_their_definers() -> None:
    files = ["a.py", "b.py", "c.py", "d.py"]
    summaries = [
        Summary(("alpha",), tuple(sorted({"alpha"}))),
        Summary(("beta",), tuple(sorted({"beta", "alpha"}))),
        Summary(("gamma",), tuple(sorted({"gamma", "alpha", "beta"}))),
        Summary((), tuple(sorted({"alpha"})))]
    ranked = rank(files, summaries)
    assert [files[f] for _, f, _ in ranked] == ["a.py", "b.py", "c.py"]
    assert ranked[0][0] > ranked[1][0] > ranked[2][0] > 0


def test_a_name_defined_twice_shares_its_rank() -> None:
    files = ["x.py", "y.py", "z.py"]
    summaries = [Summary(("shared",), tuple(sorted({"shared"}))),
                 Summary(("shared",), tuple(sorted({"shared"}))),
                 Summary((), tuple(sorted({"shared"})))]
    first, second = rank(files, summaries)
    assert first[0] == pytest.approx(second[0]) and (first[1], second[1]) == (0, 1)


def test_no_definitions_no_map() -> None:
    assert rank(["a.py"], [Summary((), tuple(sorted({"x"})))]) == []
