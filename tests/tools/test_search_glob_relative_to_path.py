"""Bug: file.search matched a `glob` holding a `/` against the workspace-relative path,
whatever `path` was: `{path: "sub", glob: "deep/*.py"}` found nothing and
`glob: "sub/deep/*.py"` was needed, where docs/protocol.md has such a glob matched
relative to `path`, as file.list's `pattern` is (as if ripgrep ran inside `path`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.search.search import file_search
from chorus_tools.tools.walk.globs import beneath

from fanout_runner import ENGINES, RG_PATH, RG_PCRE2, settle


@pytest.fixture
def tree(root: Path) -> Path:
    for rel in ("sub/deep/z.py", "sub/deep/y.md", "sub/top.py", "deep/root.py",
                "we[1]/deep/w.py", "!bang/deep/b.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("needle\n")
    return root


def _files(root: Path, engine: str, path: str, glob: str | list[str]) -> list[str]:
    """file.search's answer on `engine` (the method's own function, as the registry has)."""
    ctx = ToolContext(ws=Workspace(str(root)))
    ctx.search_engine = engine
    ctx.rg_path, ctx.rg_has_pcre2 = (RG_PATH, RG_PCRE2) if engine == "ripgrep" else (None, False)
    return settle(ctx, file_search(ctx, pattern="needle", path=path, glob=glob,
                                   output_mode="files_with_matches"))["files"]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_glob_with_a_slash_is_relative_to_path(tree: Path, engine: str) -> None:
    assert _files(tree, engine, "sub", "deep/*.py") == ["sub/deep/z.py"]
    assert _files(tree, engine, "sub/", "/deep/*.py") == ["sub/deep/z.py"]
    assert _files(tree, engine, "./sub", "**/*.py") == ["sub/deep/z.py", "sub/top.py"]
    assert _files(tree, engine, "sub", ["*.py", "!deep/**"]) == ["sub/top.py"]
    assert _files(tree, engine, "sub", "sub/deep/*.py") == []
    assert _files(tree, engine, "we[1]", "deep/*.py") == ["we[1]/deep/w.py"]
    assert _files(tree, engine, "!bang", "deep/*") == ["!bang/deep/b.py"]


@pytest.mark.parametrize("engine", ENGINES)
def test_at_the_root_and_without_a_slash_nothing_changes(tree: Path, engine: str) -> None:
    assert _files(tree, engine, ".", "deep/*.py") == ["deep/root.py"]
    assert _files(tree, engine, "sub", "*.md") == ["sub/deep/y.md"]


def test_beneath_anchors_only_globs_with_a_slash() -> None:
    assert beneath(".", ["a/b"]) == ["a/b"]
    assert beneath("s", ["a/b", "!a/*", "/x/y", "*.py", "d/", "\\!c/d"]) == [
        "s/a/b", "!s/a/*", "s/x/y", "*.py", "d/", "s/\\!c/d"]
    assert beneath("a[1]/{b}", ["x/y"]) == ["a\\[1\\]/\\{b\\}/x/y"]
