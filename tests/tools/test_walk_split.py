"""A glob listing split across the pool (tools/walk/split.py) answers exactly as one walk
of the whole tree does: the same entries, order, sorts and truncation, and a directory
swapped for a symlink between the split and a part is skipped, never followed."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

import chorus_tools.tools.walk.listing as listing
from rpc_client import RpcServer
from fanout_runner import run_list, settle
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.walk.fanout import FanOut
from chorus_tools.tools.walk.globs import ListPattern
from chorus_tools.tools.walk.ignore import IgnoreStack
from chorus_tools.tools.walk.listing import Merge, list_files
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.timefmt import iso_utc
from chorus_tools.tools.walk.walk import walk_entries
from chorus_tools.tools.walk.split import Listed, Pending, cut

SORT_KEYS = {"path": lambda e: e.path,
             "modified": lambda e: (-e.stat.st_mtime_ns, e.path),
             "size": lambda e: (-e.stat.st_size, e.path)}


def one_walk(ctx: ToolContext, pattern: str, path: str = ".", include_hidden: bool = False,
             include_ignored: bool = False, sort: str = "path",
             max_results: int = 5000) -> dict[str, Any]:
    """file.list's answer as one walk gives it (how it was computed before the split)."""
    matcher = ListPattern(pattern)
    cut_at = 0 if path == "." else len(path) + 1
    entries = sorted(walk_entries(ctx, path, include_hidden=include_hidden,
                                  include_ignored=include_ignored,
                                  select=lambda p, _kind: matcher.matches(p[cut_at:]),
                                  descend=lambda p: matcher.may_descend(p[cut_at:])),
                     key=SORT_KEYS[sort])
    return {"files": [{"path": e.path, "size": e.stat.st_size,
                       "modified": iso_utc(e.stat.st_mtime_ns), "type": e.kind}
                      for e in entries[:max_results]],
            "truncated": len(entries) > max_results}


@pytest.fixture
def split_into(monkeypatch: pytest.MonkeyPatch, ctx: ToolContext) -> Any:
    """Make file.list split any frontier of `runs` directories or more into `runs` runs."""
    def force(runs: int) -> None:
        monkeypatch.setattr(listing, "DIRS_PER_RUN", 1)
        ctx.workers = runs
    return force


def random_tree(root: Path, outside: Path, seed: int) -> None:
    """Nested ignore files with negations, hidden and ignored directories, symlinked
    directories (inside and out), temp files of atomic writes, a FIFO, varied sizes and
    modification times (ties included)."""
    rnd = random.Random(seed)
    root.mkdir(exist_ok=True)
    names = ["a", "b", "src", ".h", "node_modules", "build", "k", "Z", "a-b", "ü"]
    exts = [".md", ".py", ".log", ".tmp", ""]
    rules = ["*.log", "!keep.log", "build/", "/b", ".h", "!.h", "k/**", "!k/x.md",
             "*.tmp", "node_modules/", "src/*.py", "!src/a.py"]
    dirs = [root]
    for _ in range(rnd.randint(15, 30)):
        parent = rnd.choice(dirs)
        if len(parent.relative_to(root).parts) < 4:
            child = parent / rnd.choice(names)
            child.mkdir(exist_ok=True)
            dirs.append(child)
    for i in range(rnd.randint(80, 160)):
        d = rnd.choice(dirs)
        name = rnd.choice(["x", "a", "keep", "f%d" % i, ".dot", ".chorus-tmp-0123456789abcdef"])
        path = d / (name + rnd.choice(exts))
        if path.exists():
            continue
        path.write_text("x" * rnd.randint(0, 50))
        t = rnd.choice([10**18, 2 * 10**18, rnd.randint(1, 3 * 10**18)])
        os.utime(path, ns=(t, t))
    for d in rnd.sample(dirs, min(len(dirs), 8)):
        (d / rnd.choice([".gitignore", ".ignore", ".rgignore"])).write_text(
            "\n".join(rnd.sample(rules, 3)) + "\n")
    (rnd.choice(dirs) / "link_in").symlink_to(os.path.relpath(rnd.choice(dirs),
                                                              rnd.choice(dirs)))
    (root / "link_out").symlink_to(outside)
    os.mkfifo(rnd.choice(dirs) / "fifo")


@pytest.mark.long  # seconds of the default suite; CI runs it under -m long
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("runs", [2, 5])
def test_split_answers_as_one_walk(ctx: ToolContext, root: Path, outside: Path,
                                   split_into: Any, seed: int, runs: int) -> None:
    random_tree(root, outside, seed)
    split_into(runs)
    parts = []
    for pattern in ["**", "**/*.md", "*", "a/**", "{src,k}/**/*.py", "**/x*"]:
        for hidden, ignored in [(False, False), (True, False), (False, True), (True, True)]:
            for sort in ["path", "modified", "size"]:
                for limit in [1, 7, 10**6]:
                    params = dict(pattern=pattern, include_hidden=hidden,
                                  include_ignored=ignored, sort=sort, max_results=limit)
                    fan = list_files(ctx, **params)
                    parts.append(len(fan.parts) if isinstance(fan, FanOut) else 0)
                    assert run_list(ctx, **params) == one_walk(ctx, **params), params
    assert max(parts) == runs  # the split did happen


def test_split_of_a_subdirectory(ctx: ToolContext, root: Path, outside: Path,
                                 split_into: Any) -> None:
    random_tree(root / "sub", outside, 4)
    (root / ".gitignore").write_text("*.md\n!keep.md\n")
    split_into(3)
    for pattern in ["**", "**/*.py", "**/keep*"]:
        params = dict(path="sub", pattern=pattern, include_hidden=True)
        assert isinstance(list_files(ctx, **params), FanOut)
        assert run_list(ctx, **params) == one_walk(ctx, **params)


def test_small_trees_and_one_worker_are_walked_inline(ctx: ToolContext, root: Path,
                                                      monkeypatch: pytest.MonkeyPatch
                                                      ) -> None:
    for i in range(40):
        (root / f"d{i:02d}").mkdir()
        (root / f"d{i:02d}" / "f.md").write_text("x")
    ctx.workers = 2
    assert isinstance(list_files(ctx, pattern="**"), FanOut)  # 40 directories: split
    ctx.workers = 1
    assert not isinstance(list_files(ctx, pattern="**"), FanOut)
    ctx.workers = 3  # 24 directories needed
    for i in range(20):
        shutil.rmtree(root / f"d{i:02d}")
    assert list_files(ctx, pattern="**/*.md") == one_walk(ctx, "**/*.md")


def _fanned(ctx: ToolContext, root: Path, split_into: Any, **params: Any) -> FanOut:
    for i in range(8):
        (root / f"d{i}" / "in").mkdir(parents=True)
        (root / f"d{i}" / "in" / "f.md").write_text("x")
    split_into(4)
    fan = list_files(ctx, **params)
    assert isinstance(fan, FanOut)
    return fan


def _parts(ctx: ToolContext, fan: FanOut) -> list[str]:
    return [f["path"] for f in settle(ctx, fan)["files"]]


def test_directory_swapped_for_a_symlink_after_the_split_is_skipped(
        ctx: ToolContext, root: Path, outside: Path, split_into: Any) -> None:
    fan = _fanned(ctx, root, split_into, pattern="**")
    (root / "d2").rename(root / "old2")
    (root / "d2").symlink_to(outside)  # leads out
    shutil.rmtree(root / "d5" / "in")
    (root / "d5" / "in").symlink_to("../d6/in")  # stays inside
    paths = _parts(ctx, fan)
    assert not any(p.startswith(("d2/", "d5/in/")) for p in paths)
    assert "d1/in/f.md" in paths and "d6/in/f.md" in paths and "d7/in/f.md" in paths


def test_start_replaced_after_the_split_lists_nothing(ctx: ToolContext, root: Path,
                                                      split_into: Any) -> None:
    for i in range(8):
        (root / "s" / f"d{i}" / "in").mkdir(parents=True)
    split_into(4)
    fan = list_files(ctx, path="s", pattern="**")
    assert isinstance(fan, FanOut)
    (root / "s").rename(root / "s_old")
    (root / "s" / "d0" / "in").mkdir(parents=True)
    assert _parts(ctx, fan) == []


def test_merge_by_path_stops_once_the_prefix_has_enough() -> None:
    one = {"files": [{"path": "a"}, {"path": "b"}], "numbers": []}
    args = {"sort": "path", "max_results": 1}
    assert Merge(args).add(one) == {"files": [{"path": "a"}], "truncated": True}
    two = Merge({**args, "max_results": 2})
    assert two.add(one) is None
    assert two.finish() == {"files": one["files"], "truncated": False}


def test_merge_by_number_waits_for_every_part() -> None:
    first = {"files": [{"path": "b"}, {"path": "c"}], "numbers": [9, 5]}
    second = {"files": [{"path": "a"}, {"path": "d"}], "numbers": [9, 1]}
    args = {"sort": "size", "max_results": 3}
    merger = Merge(args)
    assert merger.add(first) is None
    assert merger.add(second) is None
    assert merger.finish() == {
        "files": [{"path": "a"}, {"path": "b"}, {"path": "c"}], "truncated": True}


def test_cut_keeps_order_and_shares_directories() -> None:
    items = [Listed("a", "file")] + [
        x for i in range(9) for x in (Pending(f"d{i}", IgnoreStack(), 1),
                                      Listed(f"e{i}", "file"))]
    runs = cut(items, 4)
    assert [x for run in runs for x in run] == items
    assert [sum(type(x) is Pending for x in run) for run in runs] == [3, 2, 2, 2]
    assert cut(items[:1], 4) == [items[:1]]


def test_split_listing_through_the_server(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    for i in range(60):
        for j in range(12):
            path = root / f"p{i % 6}" / f"d{i:02d}" / f"f{j}.{'md' if j % 3 else 'py'}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x" * (i * j % 17))
    (root / ".gitignore").write_text("p3/\n*.py\n!f0.py\n")
    ctx = ToolContext(ws=Workspace(str(root)))
    with RpcServer(root, "--workers", "2") as server:
        for params in [dict(pattern="**"), dict(pattern="**/*.md", max_results=100),
                       dict(pattern="**", sort="size", max_results=50),
                       dict(pattern="**", sort="modified", include_ignored=True)]:
            assert server.result("file.list", params) == one_walk(ctx, **params)
