"""file.list, one sentence of docs/protocol.md's file.list at a time."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.listing import file_list, list_files
from fanout_runner import run_list


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def tree(root: Path, outside: Path) -> Path:
    _write(root, {"a.py": "1", "b.md": "22", "src/x.py": "333", "src/deep/y.py": "4444",
                  "docs/r.md": "x", ".hidden.py": "x", ".cfg/c.py": "x",
                  ".gitignore": "*.log\nout/\n", "debug.log": "x", "out/o.py": "x"})
    (root / "link_src").symlink_to("src")
    (root / "link_out").symlink_to(outside)
    os.mkfifo(root / "pipe")
    return root


def _paths(result: dict) -> list[str]:
    return [f["path"] for f in result["files"]]


def test_direct_entries_with_types(ctx: ToolContext, tree: Path) -> None:
    result = list_files(ctx)
    types = {f["path"]: f["type"] for f in result["files"]}
    assert types == {"a.py": "file", "b.md": "file", "docs": "dir", "link_out": "symlink",
                     "link_src": "symlink", "pipe": "other", "src": "dir"}
    assert result["truncated"] is False


def test_entry_fields(ctx: ToolContext, tree: Path) -> None:
    os.utime(tree / "a.py", ns=(0, 1_700_000_000_123_456_789))
    entry = next(f for f in list_files(ctx)["files"] if f["path"] == "a.py")
    assert entry == {"path": "a.py", "size": 1, "modified": "2023-11-14T22:13:20.123456Z",
                     "type": "file"}


@pytest.mark.parametrize("path", ["", ".", "./", "src/.."])
def test_root_spellings(ctx: ToolContext, tree: Path, path: str) -> None:
    assert _paths(list_files(ctx, path=path)) == _paths(list_files(ctx))


def test_subdirectory_paths_are_workspace_relative(ctx: ToolContext, tree: Path) -> None:
    assert _paths(list_files(ctx, path="src")) == ["src/deep", "src/x.py"]
    assert _paths(list_files(ctx, path=str(tree / "src"))) == ["src/deep", "src/x.py"]


def test_pattern_star_matches_only_in_path_itself(ctx: ToolContext, tree: Path) -> None:
    assert _paths(list_files(ctx, pattern="*.py")) == ["a.py"]
    assert _paths(list_files(ctx, path="src", pattern="*.py")) == ["src/x.py"]


def test_globstar_crosses_directories_not_symlinks(ctx: ToolContext, tree: Path) -> None:
    assert _paths(list_files(ctx, pattern="**/*.py")) == ["a.py", "src/deep/y.py",
                                                          "src/x.py"]
    assert _paths(list_files(ctx, pattern="**")) == [
        "a.py", "b.md", "docs", "docs/r.md", "link_out", "link_src", "pipe", "src",
        "src/deep", "src/deep/y.py", "src/x.py"]


@pytest.mark.parametrize("pattern, expected", [
    ("?.py", ["a.py"]),
    ("[ab].*", ["a.py", "b.md"]),
    ("{src,docs}/*", ["docs/r.md", "src/deep", "src/x.py"]),
    ("src/**", ["src/deep", "src/deep/y.py", "src/x.py"]),
    ("**/deep/*.py", ["src/deep/y.py"]),
    ("./*.md", ["b.md"]),
])
def test_glob_forms(ctx: ToolContext, tree: Path, pattern: str, expected: list[str]) -> None:
    assert _paths(list_files(ctx, pattern=pattern)) == expected


def test_hidden_entries_on_request(ctx: ToolContext, tree: Path) -> None:
    assert ".hidden.py" not in _paths(list_files(ctx))
    shown = _paths(list_files(ctx, pattern="**/*.py", include_hidden=True))
    assert ".hidden.py" in shown and ".cfg/c.py" in shown


def test_ignored_entries_on_request(ctx: ToolContext, tree: Path) -> None:
    assert "debug.log" not in _paths(list_files(ctx))
    assert "out" not in _paths(list_files(ctx))
    shown = _paths(list_files(ctx, pattern="**", include_ignored=True))
    assert "debug.log" in shown and "out/o.py" in shown


def test_gitignore_without_git_repository(ctx: ToolContext, tree: Path) -> None:
    assert not (tree / ".git").exists()
    assert "debug.log" not in _paths(list_files(ctx, pattern="*"))


def test_nested_ignore_and_negation(ctx: ToolContext, tree: Path) -> None:
    _write(tree, {"src/.gitignore": "!keep.log\n", "src/keep.log": "x", "src/no.log": "x",
                  "src/.ignore": "deep/\n"})
    assert _paths(list_files(ctx, path="src")) == ["src/keep.log", "src/x.py"]


def test_symlink_to_outside_is_listed_not_followed(ctx: ToolContext, tree: Path) -> None:
    everything = _paths(list_files(ctx, pattern="**", include_hidden=True,
                                   include_ignored=True))
    assert "link_out" in everything
    assert not any(p.startswith(("link_out/", "link_src/")) for p in everything)


def test_sort_by_modified_newest_first_ties_by_path(ctx: ToolContext, tree: Path) -> None:
    for name, t in [("a.py", 100), ("b.md", 300), ("src", 200), ("docs", 200)]:
        os.utime(tree / name, ns=(t * 10**9, t * 10**9), follow_symlinks=False)
    assert _paths(list_files(ctx, pattern="*.*", sort="modified")) == ["b.md", "a.py"]
    got = _paths(list_files(ctx, sort="modified"))
    assert got.index("b.md") < got.index("docs") < got.index("src") < got.index("a.py")


def test_sort_by_size_largest_first(ctx: ToolContext, tree: Path) -> None:
    assert _paths(list_files(ctx, pattern="**/*.py", sort="size")) == [
        "src/deep/y.py", "src/x.py", "a.py"]


@pytest.mark.parametrize("sort", ["path", "modified", "size"])
def test_max_results_keeps_first_in_sort_order(ctx: ToolContext, tree: Path,
                                               sort: str) -> None:
    full = list_files(ctx, pattern="**", sort=sort)
    cut = list_files(ctx, pattern="**", sort=sort, max_results=3)
    assert cut["files"] == full["files"][:3] and cut["truncated"] is True
    exact = list_files(ctx, pattern="**", sort=sort, max_results=len(full["files"]))
    assert exact["truncated"] is False


def test_deterministic(ctx: ToolContext, tree: Path) -> None:
    assert list_files(ctx, pattern="**") == list_files(ctx, pattern="**")


def test_temp_files_never_listed(ctx: ToolContext, tree: Path) -> None:
    (tree / ".chorus-tmp-0123456789abcdef").write_text("half")
    assert not any(".chorus-tmp-" in p for p in _paths(list_files(
        ctx, pattern="**", include_hidden=True, include_ignored=True)))


def test_file_path_is_not_a_directory(ctx: ToolContext, tree: Path) -> None:
    with pytest.raises(ToolError) as err:
        list_files(ctx, path="a.py")
    assert err.value.code == "not_a_directory" and err.value.details["path"] == "a.py"


@pytest.mark.parametrize("path, code", [("missing", "file_not_found"),
                                        ("../x", "path_outside_workspace"),
                                        ("link_out", "path_outside_workspace"),
                                        ("/etc", "path_outside_workspace")])
def test_path_errors(ctx: ToolContext, tree: Path, path: str, code: str) -> None:
    with pytest.raises(ToolError) as err:
        list_files(ctx, path=path)
    assert err.value.code == code


def test_symlinked_directory_as_path_is_listed(ctx: ToolContext, tree: Path) -> None:
    assert _paths(list_files(ctx, path="link_src")) == ["link_src/deep", "link_src/x.py"]


@pytest.mark.parametrize("pattern", ["[abc", "{a,b", "a}", "x\\"])
def test_invalid_glob(ctx: ToolContext, tree: Path, pattern: str) -> None:
    with pytest.raises(ToolError) as err:
        list_files(ctx, pattern=pattern)
    assert err.value.code == "invalid_pattern"
    assert err.value.details["param"] == "pattern" and err.value.details["reason"]


def test_large_tree_with_globstar(ctx: ToolContext, root: Path) -> None:
    for i in range(50):
        d = root / f"d{i:02d}"
        d.mkdir()
        for j in range(40):
            (d / f"f{j:02d}.{'md' if j % 4 == 0 else 'txt'}").touch()
    result = run_list(ctx, pattern="**/*.md", max_results=100000)
    assert len(result["files"]) == 500 and not result["truncated"]
    assert all(re.fullmatch(r"d\d\d/f\d\d\.md", f["path"]) for f in result["files"])


def test_recursive_lists_everything_beneath_with_directories(ctx: ToolContext,
                                                             tree: Path) -> None:
    assert _paths(run_list(ctx, recursive=True)) == [
        "a.py", "b.md", "docs", "docs/r.md", "link_out", "link_src", "pipe", "src",
        "src/deep", "src/deep/y.py", "src/x.py"]


@pytest.mark.parametrize("params, expected", [
    ({"recursive": True, "depth": 1}, ["deep", "x.py"]),
    ({"depth": 2}, ["deep", "deep/y.py", "x.py"]),  # depth alone recurses
    ({"pattern": "**/*.py", "depth": 1}, ["x.py"]),
    ({"pattern": "**/*.py", "depth": 2}, ["deep/y.py", "x.py"]),
])
def test_depth_counts_levels_below_path(ctx: ToolContext, tree: Path,
                                        params: dict[str, Any], expected: list[str]) -> None:
    assert _paths(run_list(ctx, path="src", **params)) == [f"src/{p}" for p in expected]


@pytest.mark.parametrize("params, expected", [
    ({"pattern": "*.py", "recursive": True}, ["a.py", "src/deep/y.py", "src/x.py"]),
    ({"pattern": "*.py", "depth": 2}, ["a.py", "src/x.py"]),
    ({"pattern": "*.py", "depth": 1}, ["a.py"]),
    ({"pattern": "*.md", "recursive": True}, ["b.md", "docs/r.md"]),
    ({"pattern": "{x,y}.py", "depth": 3}, ["src/deep/y.py", "src/x.py"]),
    ({"pattern": "deep", "recursive": True}, ["src/deep"]),
    ({"pattern": "src/*.py", "recursive": True}, ["src/x.py"]),  # a '/' anchors it
])
def test_a_pattern_without_a_slash_matches_names_at_any_depth_when_recursive(
        ctx: ToolContext, tree: Path, params: dict[str, Any], expected: list[str]) -> None:
    """Issue 35: `*.py` with `recursive: true` or `depth: 3` answered [] when src/app.py
    existed, while file.search's glob `*.md` matches at any depth."""
    assert _paths(run_list(ctx, **params)) == expected


def test_an_empty_answer_to_a_name_pattern_says_how_many_match_deeper(
        ctx: ToolContext, root: Path) -> None:
    """Issue 35: `{"pattern": "*.py"}` answered [] with src/app.py there, and an agent
    read it as "no Python files"."""
    _write(root, {"src/app.py": "x", "src/lib/util.py": "y", ".hidden/h.py": "z",
                  "build/b.py": "w", ".gitignore": "build/\n", "README.md": "r"})
    assert file_list(ctx, pattern="*.py") == {
        "files": [], "truncated": False, "hint": {"pattern": "**/*.py", "count": 2}}
    # counted under the call's own rules
    assert file_list(ctx, pattern="*.py", include_hidden=True,
                     include_ignored=True)["hint"]["count"] == 4  # type: ignore[index]
    assert file_list(ctx, pattern="*.py", exclude="lib")["hint"] == {  # type: ignore[index]
        "pattern": "**/*.py", "count": 1}
    assert file_list(ctx, path="src", pattern="*.py")["files"][0]["path"] == "src/app.py"
    # nothing deeper, a pattern with '/', an answer that is not empty: no hint
    for params in [{"pattern": "*.rs"}, {"pattern": "./*.py"}, {"pattern": "src/*.md"},
                   {"pattern": "*.md"}, {"pattern": "*.py", "recursive": True}]:
        assert "hint" not in file_list(ctx, **params), params
    assert "hint" not in list_files(ctx, pattern="*.py")  # a tool set's listing


@pytest.mark.parametrize("exclude, expected", [
    ("*.md", ["a.py", "docs", "link_out", "link_src", "pipe", "src", "src/deep",
              "src/deep/y.py", "src/x.py"]),
    (["src", "link_*", "pipe"], ["a.py", "b.md", "docs", "docs/r.md"]),
    (["deep/"], ["a.py", "b.md", "docs", "docs/r.md", "link_out", "link_src", "pipe",
                 "src", "src/x.py"]),  # a directory rule, at any depth
    (["/src/x.py", "docs/*"], ["a.py", "b.md", "docs", "link_out", "link_src", "pipe",
                               "src", "src/deep", "src/deep/y.py"]),
])
def test_exclude_drops_entries_and_directories_with_their_contents(
        ctx: ToolContext, tree: Path, exclude: Any, expected: list[str]) -> None:
    assert _paths(run_list(ctx, recursive=True, exclude=exclude)) == expected


def test_exclude_in_a_direct_listing_and_a_glob(ctx: ToolContext, tree: Path) -> None:
    assert _paths(run_list(ctx, exclude=["*.py", "link_*", "pipe"])) == ["b.md", "docs", "src"]
    assert _paths(run_list(ctx, path="src", pattern="**/*.py", exclude="deep")) == ["src/x.py"]


def test_exclude_glob_that_does_not_compile(ctx: ToolContext, tree: Path) -> None:
    with pytest.raises(ToolError) as err:
        run_list(ctx, exclude=["a{b"])
    assert err.value.code == "invalid_pattern" and err.value.details["param"] == "exclude"


def test_depth_and_exclude_survive_a_split_walk(ctx: ToolContext, root: Path) -> None:
    _write(root, {f"d{i:02}/s{j}/deep/f.txt": "x" for i in range(40) for j in range(3)})
    ctx.workers = 2
    result = run_list(ctx, recursive=True, depth=2, exclude=["s1"], max_results=10**6)
    paths = _paths(result)
    assert len(paths) == 40 + 40 * 2 and "d00/s0" in paths and "d00/s1" not in paths
    assert not any(p.count("/") > 1 for p in paths)


@pytest.mark.parametrize("sort", ["path", "size"])
@pytest.mark.parametrize("pattern", [None, "**/*.py"])
def test_a_max_results_beyond_a_machine_int_means_all(ctx: ToolContext, tree: Path,
                                                      sort: str, pattern: str | None) -> None:
    """Found by fuzzing: max_results 2**63 was internal_error (islice's limit)."""
    everything = run_list(ctx, pattern=pattern, sort=sort, max_results=10**6)
    assert run_list(ctx, pattern=pattern, sort=sort, max_results=2**63) == everything
