"""Bug: code.map given a path naming a FIFO (or another non-regular file) answered
not_a_directory, "A component of the path is not a directory", and one naming a file
with a trailing `/` did too, in other words than every other method: the path is refused
as code.symbols and file.search refuse it (not_a_regular_file; not_a_directory saying
the trailing `/` names a directory)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chorus_tools.tools.code.codemap import code_map
from chorus_tools.tools.code.find import find_symbols
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError


def _refusal(call: object) -> tuple[str, str]:
    with pytest.raises(ToolError) as caught:
        call()  # type: ignore[operator]
    return caught.value.code, caught.value.message


@pytest.mark.parametrize("path", ["pipe.py", "a.py/"])
def test_code_map_refuses_the_path_as_code_symbols_does(ctx: ToolContext, root: Path,
                                                        path: str) -> None:
    (root / "a.py").write_text("def f():\n    pass\n")
    os.mkfifo(root / "pipe.py")
    mapped = _refusal(lambda: code_map(ctx, path))
    assert mapped == _refusal(lambda: find_symbols(ctx, "f", path=path))
    assert mapped[0] == ("not_a_regular_file" if path == "pipe.py" else "not_a_directory")
    assert "component" not in mapped[1]


def test_a_file_and_a_directory_still_map(ctx: ToolContext, root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("def f():\n    pass\n")
    assert code_map(ctx, "src/a.py")["map"] == "src/a.py:\n  def f():"
    assert code_map(ctx, "src")["map"] == "src/a.py:\n  def f():"
