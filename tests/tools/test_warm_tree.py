"""The warm tree in-process (tools/warm/answers.py over tree.py and events.py): after its
build and after every change made on disk, its listings and a search's selection equal
what a walk of the disk gives right then. The server's end-to-end parity suite is
tests/e2e/test_warm_parity.py; this one reaches the corners a spawned server hides
(an overflowed queue, the watch limit, the memory budget)."""

from __future__ import annotations

import os
import pickle
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest

from warm_support import run_background
from chorus_tools.tools.confine.deny import DenyRules
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.walk.listing import list_files
from chorus_tools.tools.walk.walk import walk_files
from chorus_tools.tools.warm import events as events_module
from chorus_tools.tools.warm import answers as answers_module
from chorus_tools.tools.warm.answers import Memory, Warm
from chorus_tools.tools.warm.events import OVERFLOW, Event, Events, WatchLimit

QUERIES: list[dict[str, Any]] = [
    {"pattern": "**"},
    {"pattern": "**/*.py", "sort": "modified"},
    {"pattern": "**", "include_hidden": True, "include_ignored": True, "sort": "size"},
    {"path": "src", "pattern": "*", "depth": 1},
    {"pattern": "**/*.md", "exclude": ["deep"], "max_results": 2},
]


def make_tree(root: Path) -> None:
    (root / "src" / "deep" / "er").mkdir(parents=True)
    (root / "src" / "a.py").write_text("def alpha():\n    pass\n")
    (root / "src" / "deep" / "b.py").write_text("beta = 2\n")
    (root / "src" / "deep" / "er" / "c.md").write_text("# gamma\n")
    (root / "src" / "d.py").write_text("d\n")
    (root / "src" / "d").mkdir()
    (root / "src" / "d" / "e.md").write_text("sort trap\n")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "h.py").write_text("hidden\n")
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("built\n")
    (root / "x.log").write_text("log\n")
    (root / "README.md").write_text("readme\n")
    (root / "link").symlink_to("src")
    (root / "secrets").mkdir()
    (root / "secrets" / "key.md").write_text("KEY\n")


@pytest.fixture
def workspace(root: Path) -> Iterator[ToolContext]:
    make_tree(root)
    ws = Workspace(str(root), deny=DenyRules(["secrets"]))
    yield ToolContext(ws=ws)
    os.close(ws.root_fd)


@pytest.fixture
def warm(workspace: ToolContext) -> Iterator[Warm]:
    found = Warm(workspace, 1 << 30, Events(), Memory())
    run_background(found)
    yield found
    found.events.close()


def assert_same(warm: Warm, ctx: ToolContext) -> None:
    assert warm.current(), "the tree should be current after a barrier"
    for query in QUERIES:
        assert pickle.loads(warm.listing(query)) == list_files(ctx, **query), query
    for hidden in (False, True):
        chosen = warm.select("", hidden, False, [], (), None, True)
        disk = [p for p, _ in walk_files(ctx, "", include_hidden=hidden, include_ignored=False)]
        assert chosen["files"] == disk and chosen["total"] == len(disk)


def test_the_built_tree_lists_what_the_disk_walk_lists(warm: Warm,
                                                        workspace: ToolContext) -> None:
    assert warm.status()["tree"] == "ready"
    assert_same(warm, workspace)


def test_denied_directories_are_never_entered(warm: Warm) -> None:
    assert warm.tree is not None
    assert not any(d.startswith("secrets") for d in warm.tree.dirs)
    assert "secrets" not in warm.tree.dirs[""].entries


@pytest.mark.parametrize("change", [
    "create", "modify", "delete", "rename_dir", "gitignore_rule", "gitignore_removed",
    "dir_replaced_by_file", "file_replaced_by_dir", "move_in", "move_out", "deep_create",
    "chmod"])
def test_a_change_on_disk_is_in_the_next_answer(change: str, warm: Warm,
                                                 workspace: ToolContext, root: Path,
                                                 tmp_path: Path) -> None:
    src = root / "src"
    if change == "create":
        (src / "new.py").write_text("new\n")
    elif change == "modify":
        (src / "a.py").write_text("much longer content than before\n" * 10)
    elif change == "delete":
        (src / "a.py").unlink()
    elif change == "rename_dir":
        (src / "deep").rename(root / "moved")
    elif change == "gitignore_rule":
        (root / ".gitignore").write_text("*.log\nbuild/\n*.md\n")
    elif change == "gitignore_removed":
        (root / ".gitignore").unlink()
    elif change == "dir_replaced_by_file":
        shutil.rmtree(src / "deep")
        (src / "deep").write_text("now a file\n")
    elif change == "file_replaced_by_dir":
        (src / "a.py").unlink()
        (src / "a.py").mkdir()
        (src / "a.py" / "inner.py").write_text("inner\n")
    elif change == "move_in":
        (tmp_path / "incoming" / "sub").mkdir(parents=True)
        (tmp_path / "incoming" / "sub" / "f.md").write_text("moved in\n")
        (tmp_path / "incoming").rename(root / "incoming")
    elif change == "move_out":
        (src / "deep").rename(tmp_path / "gone")
    elif change == "deep_create":
        (root / "n1" / "n2" / "n3").mkdir(parents=True)
        (root / "n1" / "n2" / "n3" / "leaf.py").write_text("leaf\n")
    elif change == "chmod":
        os.utime(src / "a.py", ns=(1_000_000_000, 1_000_000_000))
    assert_same(warm, workspace)


def test_a_write_through_a_link_outside_the_workspace_is_seen(
        workspace: ToolContext, root: Path, tmp_path: Path) -> None:
    """inotify reports a write only to the directory it went through: a file with another
    link is looked at again on every sync (tools/warm/tree.py)."""
    other = tmp_path / "other-link"
    os.link(root / "src" / "d.py", other)
    warm = Warm(workspace, 1 << 30, Events(), Memory())
    run_background(warm)
    assert_same(warm, workspace)
    other.write_text("written through a link outside the workspace\n")
    assert_same(warm, workspace)


def test_a_lost_queue_builds_the_tree_again(warm: Warm, workspace: ToolContext,
                                            root: Path) -> None:
    warm.note([Event(-1, OVERFLOW, "")])
    (root / "src" / "after.py").write_text("after the overflow\n")
    assert not warm.current(), "an overflowed tree must not answer until built again"
    assert warm.answer("list", {"pattern": "**"}, False) is None
    run_background(warm)
    assert_same(warm, workspace)


def test_the_watch_limit_turns_the_tree_off(workspace: ToolContext,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    watched = []

    def watch(self: Events, dir_fd: int) -> int:
        if len(watched) >= 2:
            raise WatchLimit(self.limit_text())
        watched.append(dir_fd)
        return len(watched)

    monkeypatch.setattr(Events, "watch", watch)
    warm = Warm(workspace, 1 << 30, Events(), Memory())
    run_background(warm)
    status = warm.status()
    assert status["tree"] == "off" and "max_user_watches" in status["reason"]
    assert not warm.current()
    assert warm.answer("select", {}, warm.current()) is None


class _Resident:
    """A stand-in for the process's resident memory: `grown` bytes over its first figure
    once the first look (the baseline) is taken."""

    def __init__(self, grown: int) -> None:
        self.grown = grown
        self.looks = 0

    def __call__(self) -> int:
        self.looks += 1
        return 40_000_000 + (self.grown if self.looks > 1 else 0)


def test_an_index_over_the_budget_stays_off(workspace: ToolContext) -> None:
    warm = Warm(workspace, 4096, Events(), _Resident(0))  # nothing grows: the tree fits
    run_background(warm)
    status = warm.status()
    assert status["tree"] == "ready" and status["index"] == "off"
    assert "--index-memory" in status["reason"]
    chosen = warm.select("", False, False, [], (), [1, 2, 3], True)
    assert chosen["narrowed"] is False  # no index: every file is searched


def test_a_small_tree_over_the_budget_turns_off(workspace: ToolContext) -> None:
    """Regression (issue 36): the budget was looked at every 256 directories only, so a
    smaller tree was kept whatever it cost (--index-memory 1 left it on). The budget
    counts what the tree adds over the process's baseline, so no value is below it."""
    warm = Warm(workspace, 1, Events(), _Resident(1 << 20))
    run_background(warm)
    status = warm.status()
    assert (status["tree"], status["index"]) == ("off", "off")
    assert "--index-memory" in status["reason"] and "1048576 bytes" in status["reason"]
    assert not warm.current()


def test_the_index_narrows_and_sees_a_rewrite(warm: Warm, workspace: ToolContext,
                                              root: Path) -> None:
    from chorus_tools.tools.warm.grams import query_grams
    grams = query_grams("alpha", literal=True, case_sensitive=True, multiline=False,
                        needs_pcre2=False)
    assert warm.current()
    assert warm.select("", False, False, [], (), grams, True)["files"] == ["src/a.py"]
    (root / "src" / "deep" / "b.py").write_text("alpha moved here\n")
    assert warm.current()
    found = warm.select("", False, False, [], (), grams, True)
    assert "src/deep/b.py" in found["files"], "a rewritten file must be a candidate at once"
    assert found["total"] == 6


def test_a_burst_of_rewrites_is_read_once_after_it_settles(
        warm: Warm, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file rewritten again and again (an agent's edits, a build) is a candidate of
    every search meanwhile and read into the index once, SETTLE after its last write,
    not once a write."""
    from chorus_tools.tools.warm import content as content_module
    from chorus_tools.tools.warm.grams import query_grams
    reads: list[str] = []
    read = content_module.Content._read
    monkeypatch.setattr(content_module.Content, "_read",
                        lambda self, path: (reads.append(path), read(self, path))[1])
    grams = query_grams("omega", literal=True, case_sensitive=True, multiline=False,
                        needs_pcre2=False)
    target = root / "src" / "deep" / "b.py"
    for n in range(5):
        target.write_text(f"omega {n}\n")
        assert warm.current()
        warm.work(0.05)
        assert "src/deep/b.py" in warm.select("", False, False, [], (), grams, True)["files"]
    due = warm.wait()
    assert reads == [] and due is not None and 0 < due <= content_module.SETTLE
    run_background(warm)
    assert reads == ["src/deep/b.py"]
    target.write_text("gone\n")
    os.utime(target, (1, 1))  # a time long past: read at once
    assert warm.current() and warm.wait() == 0
    run_background(warm)
    assert warm.select("", False, False, [], (), grams, True)["files"] == []


def test_a_directory_turned_into_a_file_and_back_is_listed_anew(
        warm: Warm, workspace: ToolContext, root: Path) -> None:
    """Regression (issue 36, seed 2528268591): removed and made again at once, a directory
    often gets its old inode number back, and the tree kept the old one's node, unwatched:
    a file made in the new one was never seen. The node's watch, gone with the old
    directory, now tells them apart."""
    deep = root / "src" / "deep"
    shutil.rmtree(deep)
    deep.write_text("a file for a moment\n")
    deep.unlink()
    deep.mkdir()
    (deep / "inner.py").write_text("needle_3\n")
    assert_same(warm, workspace)
    (deep / "later.py").write_text("made in the new directory once the tree knows it\n")
    assert_same(warm, workspace)


def test_a_rewrite_within_one_tick_of_the_clock_is_read_again(
        warm: Warm, workspace: ToolContext, root: Path) -> None:
    """Regression: a same-size rewrite whose lstat does not change (a coarse clock: the
    same mtime and ctime tick) left the index with the old content's grams, so a search
    for the new content skipped the file. The write's own event now has it read again."""
    from chorus_tools.tools.warm.entry import pack
    from chorus_tools.tools.warm.grams import query_grams
    grams = query_grams("zzz", literal=True, case_sensitive=True, multiline=False,
                        needs_pcre2=False)
    assert warm.tree is not None and warm.select("", False, False, [], (), grams,
                                                 True)["files"] == []
    (root / "src" / "d.py").write_text("zzz\n")
    # the clock did not tick: the tree's lstat of the file is the new one already
    warm.tree.dirs["src"].entries["d.py"] = pack("file", os.lstat(root / "src" / "d.py"))
    assert warm.current()
    run_background(warm)
    assert warm.select("", False, False, [], (), grams, True)["files"] == ["src/d.py"]


def test_an_unreadable_watch_limit_is_said_plainly(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    """Issue 36: never `max_user_watches = ?`; a file that cannot be read is named."""
    monkeypatch.setattr(events_module, "LIMIT_FILE", str(tmp_path / "no-such-limit"))
    events = Events()
    try:
        reason = events.limit_text()
    finally:
        events.close()
    assert f"{tmp_path / 'no-such-limit'} could not be read: No such file" in reason
    assert "?" not in reason


def test_pages_of_a_selection_in_path_order_until_the_tree_changes(
        warm: Warm, root: Path) -> None:
    """ripgrep's pages (issue 32): the candidates in path order, each with its place
    among the files covered and whether the index read it free of NULs; a page asked
    after the tree changed is None (the search walks instead)."""
    from chorus_tools.tools.warm.grams import query_grams
    for i in range(30):
        (root / "src" / f"p{i:02}.py").write_text(f"pagedword {i}\n")
    (root / "src" / "p05.py").write_bytes(b"pagedword \0 binary\n")
    grams = query_grams("pagedword", literal=True, case_sensitive=True, multiline=False,
                        needs_pcre2=False)
    assert warm.current()
    run_background(warm)
    assert warm.current()
    every = warm.select("", False, False, [], (), None, True)["files"]
    chosen = warm.select("", False, False, [], (), grams, False, page=4, max_bytes=1 << 20)
    assert chosen["files"] is None and chosen["total"] == len(every)
    pages = [chosen["page"]]
    while pages[-1]["files"]:
        pages.append(warm.page(chosen["key"], sum(len(p["files"]) for p in pages), 7,
                               1 << 20))
    files = [f for p in pages for f in p["files"]]
    assert files == [f"src/p{i:02}.py" for i in range(30)]
    assert [n for p in pages for n in p["positions"]] == [every.index(f) for f in files]
    assert [c for p in pages for c in p["clean"]] == [i != 5 for i in range(30)]
    few = warm.page(chosen["key"], 0, 30, 40)  # names past 40 bytes of argv wait
    assert few is not None and len(few["files"]) == 2
    (root / "src" / "p99.py").write_text("pagedword late\n")
    assert warm.current()
    assert warm.page(chosen["key"], 0, 4, 1 << 20) is None


def test_regression_a_selection_walked_again_after_every_answer_once_rss_passed_the_budget(
        workspace: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32's warm rows: once the process's RSS was over the budget (malloc keeps what
    a large reply freed), every answer emptied what was kept, so each search walked its
    selection again (0.4 s at 200k files). Kept replies are now bounded by their own
    bytes, whatever the RSS says."""
    resident = _Resident(0)
    warm = Warm(workspace, 1 << 30, Events(), resident)
    run_background(warm)
    walked = []
    real = answers_module._selection
    monkeypatch.setattr(answers_module, "_selection",
                        lambda *args: walked.append(1) or real(*args))
    resident.grown = 2 << 30  # far over the budget, as after a large reply
    ask = {"rel": "", "include_hidden": False, "include_ignored": False, "globs": [],
           "types": (), "grams": None, "want_files": True}
    first = warm.answer("select", ask, current=True)
    assert warm.answer("select", ask, current=True) == first
    assert len(walked) == 1
