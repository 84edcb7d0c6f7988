"""Bugs in file.list's `pattern`, as docs/protocol.md words it:
- a pattern ending in `/` (`src/`, `*/`, `**/`: directories, in an ignore file or a shell)
  matched nothing at all, with no hint: every entry's path was tested with the `/` on;
- "A leading `./` of `pattern` is dropped; `pattern: ""` means none": `./` listed
  nothing where `""` lists the directory.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.walk.listing import file_list
from fanout_runner import run_list


@pytest.fixture
def tree(root: Path) -> Path:
    for rel in ("g/x.py", "g/sub/y.py", "g/sub/deep/z.py", "s/a/b", "s/a-b", "top.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    (root / "sub").write_text("a file named sub\n")
    (root / "glink").symlink_to("g")
    return root


def _listed(ctx: ToolContext, **params: object) -> list[tuple[str, str]]:
    return [(f["path"], f["type"]) for f in run_list(ctx, **params)["files"]]


def test_a_trailing_slash_matches_directories_only(ctx: ToolContext, tree: Path) -> None:
    assert _listed(ctx, pattern="g/") == [("g", "dir")]
    assert _listed(ctx, pattern="*/") == [("g", "dir"), ("s", "dir")]
    assert _listed(ctx, pattern="**/") == [("g", "dir"), ("g/sub", "dir"),
                                          ("g/sub/deep", "dir"), ("s", "dir"), ("s/a", "dir")]
    assert _listed(ctx, pattern="s/a/") == [("s/a", "dir")]
    assert _listed(ctx, pattern="s/a-b/") == []  # a file
    assert _listed(ctx, pattern="glink/") == []  # a symlink, never descended
    assert _listed(ctx, pattern="sub/", path="g") == [("g/sub", "dir")]


def test_a_trailing_slash_name_matches_at_any_depth_when_recursive(
        ctx: ToolContext, tree: Path) -> None:
    assert _listed(ctx, pattern="sub/", recursive=True) == [("g/sub", "dir")]
    assert _listed(ctx, pattern="deep/", depth=3) == [("g/sub/deep", "dir")]
    assert file_list(ctx, pattern="deep/") == {
        "files": [], "truncated": False, "hint": {"pattern": "**/deep/", "count": 1}}


def test_a_pattern_of_only_dot_slash_is_none(ctx: ToolContext, tree: Path) -> None:
    assert _listed(ctx, pattern="./", path="g") == _listed(ctx, pattern="", path="g") == [
        ("g/sub", "dir"), ("g/x.py", "file")]
    assert _listed(ctx, pattern="./", path="g", recursive=True) == _listed(
        ctx, path="g", recursive=True)
