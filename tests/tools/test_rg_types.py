"""The python engine's file types are ripgrep's: the committed table is what the bundled
rg lists, and an unknown type is refused by both engines alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.search import rg_types, types_gen
from chorus_tools.tools.search.filetypes import FileTypes

from fanout_runner import RG_PATH, run_search


def test_committed_table_is_the_bundled_ripgreps() -> None:
    assert RG_PATH is not None
    listed = types_gen.type_list(RG_PATH)
    assert rg_types.TYPES == listed, "rerun python -m chorus_tools.tools.search.types_gen"
    assert Path(rg_types.__file__).read_text() == types_gen.render(listed)


def test_type_globs_match_names_as_ripgrep_does() -> None:
    py, c = FileTypes(("py",)), FileTypes(("c",))
    assert py.matches("a.py") and py.matches("stub.pyi") and not py.matches("a.pyc")
    assert c.matches("x.h") and c.matches("x.H") and c.matches("x.c.in") and not c.matches("x.cc")


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
def test_unknown_type_is_invalid_params(ctx: ToolContext, root: Path, engine: str) -> None:
    (root / "a.py").write_text("x\n")
    with pytest.raises(ToolError) as err:
        run_search(ctx, engine, pattern="x", type="pythonn")
    assert err.value.code == "invalid_params" and err.value.details["param"] == "type"
    assert "pythonn" in err.value.message
