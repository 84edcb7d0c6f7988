"""Bug: file.search with `path: "a.txt/"` searched the file a.txt, where docs/protocol.md
has a path ending in `/`, `/.` or `/..` name a directory (file.list, file.read and
file.info of a file through it are `not_a_directory`): the search is too, and so is a
FIFO named that way."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.read.info import info
from chorus_tools.tools.read.read import read

from fanout_runner import ENGINES, run_search


@pytest.mark.parametrize("engine", ENGINES)
def test_a_file_named_as_a_directory_is_not_a_directory(root: Path, engine: str) -> None:
    (root / "a.txt").write_text("hello\n")
    (root / "d").mkdir()
    (root / "d/b.txt").write_text("hello\n")
    ctx = ToolContext(ws=Workspace(str(root)))
    for path in ("a.txt/", "a.txt/.", "d/b.txt/"):
        with pytest.raises(ToolError) as caught:
            run_search(ctx, engine, pattern="hello", path=path)
        assert (caught.value.code, caught.value.details["path"]) == ("not_a_directory", path)
    for path, found in (("a.txt", "a.txt"), ("d/", "d/b.txt"), ("d/b.txt/..", "d/b.txt")):
        reply = run_search(ctx, engine, pattern="hello", path=path)
        assert [m["path"] for m in reply["matches"]] == [found], path


@pytest.mark.parametrize("engine", ENGINES)
def test_a_fifo_named_as_a_directory_is_not_a_directory(root: Path, engine: str) -> None:
    """file.read and file.search of `fifo/` answered not_a_regular_file where file.info
    answered not_a_directory: the path's shape decides first, for every kind."""
    os.mkfifo(root / "fifo")
    ctx = ToolContext(ws=Workspace(str(root)))
    for call in (lambda: read(ctx, "fifo/"), lambda: info(ctx, "fifo/"),
                 lambda: run_search(ctx, engine, pattern="x", path="fifo/")):
        with pytest.raises(ToolError) as caught:
            call()
        assert caught.value.code == "not_a_directory"
    with pytest.raises(ToolError) as caught:
        read(ctx, "fifo")
    assert caught.value.code == "not_a_regular_file"
