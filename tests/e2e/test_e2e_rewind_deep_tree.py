"""A rewind after dir.delete or file.move of a tree nested deeper than Python's call stack
(docs/protocol.md, History): the rewind asked whether a parent of each file to put back
is now a file by recursing up the path one parent per call, so a tree 1,200 directories
deep answered internal_error (RecursionError) instead of putting the tree back."""

from __future__ import annotations

from pathlib import Path

import pytest

from deep_tree import empty, nest
from rpc_client import RpcServer

DEPTH = 1200  # beyond Python's default recursion limit (1,000)


@pytest.mark.long  # seconds of the default suite; CI runs it in -m long
@pytest.mark.parametrize("method, params", [
    ("dir.delete", {"path": "t", "recursive": True}),
    ("file.move", {"source": "t", "destination": "moved"}),
])
def test_rewind_after_deep_tree_change_is_not_internal_error(
        tmp_path: Path, method: str, params: dict) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    leaf = nest(root, "t", DEPTH)
    try:
        _rewind_puts_back(tmp_path, root, leaf, method, params)
    finally:
        empty(root)


def _rewind_puts_back(tmp_path: Path, root: Path, leaf: str, method: str,
                      params: dict) -> None:
    with RpcServer(root, "--history", str(tmp_path / "hist")) as server:
        checkpoint = server.result("workspace.checkpoint", {})["checkpoint"]
        server.result(method, params)
        dry = server.call("workspace.rewind", {"checkpoint": checkpoint, "dry_run": True})
        assert "result" in dry, dry
        assert leaf in dry["result"]["restored"]
        done = server.result("workspace.rewind", {"checkpoint": checkpoint})
        assert leaf in done["restored"]
        assert server.result("file.read", {"path": leaf, "raw": True})["content"] == "leaf\n"
        moved = "moved" + leaf[1:]
        assert server.error("file.info", {"path": moved})["data"]["error"] == "file_not_found"


@pytest.mark.long  # seconds of the default suite; CI runs it in -m long
def test_a_file_back_in_place_of_a_deep_tree_the_server_wrote_is_not_internal_error(
        tmp_path: Path) -> None:
    """The other shape: a file deleted, then a file written DEPTH directories beneath its
    name. The rewind looked for what else the directory holds, and then removed its
    emptied directories, with os.fwalk, which recursed once per level (RecursionError);
    both walk with the iterative fwalk, and the file comes back."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "f").write_text("F\n")
    deep = "/".join(["f", *["a"] * DEPTH, "leaf.txt"])
    try:
        with RpcServer(root, "--history", str(tmp_path / "hist")) as server:
            checkpoint = server.result("workspace.checkpoint", {})["checkpoint"]
            server.result("file.delete", {"path": "f"})
            server.result("file.write", {"path": deep, "content": "deep\n"})
            done = server.call("workspace.rewind", {"checkpoint": checkpoint})
        assert "result" in done, done
        assert done["result"]["restored"] == ["f"] and done["result"]["conflicts"] == []
        assert (root / "f").read_text() == "F\n"
    finally:
        empty(root)
