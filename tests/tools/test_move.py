"""file.move: one renameat2 between confined directories; files, symlinks, directories."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.mutate.move import move
from chorus_tools.tools.confine.sandbox import version_of
from rpc_client import snapshot


def code_of(call) -> str:
    with pytest.raises(ToolError) as err:
        call()
    return err.value.code


def test_moves_a_file_and_returns_the_version_at_its_new_place(ctx: ToolContext,
                                                               root: Path) -> None:
    (root / "a.txt").write_text("hello")
    out = move(ctx, "a.txt", "b.txt")
    assert out["success"] is True
    assert not (root / "a.txt").exists() and (root / "b.txt").read_text() == "hello"
    assert out["version"] == version_of(os.stat(root / "b.txt"))


def test_creates_missing_parents_unless_told_not_to(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("x")
    assert code_of(lambda: move(ctx, "a.txt", "n/e/w.txt", create_dirs=False)) == \
        "file_not_found"
    assert not (root / "n").exists()
    move(ctx, "a.txt", "n/e/w.txt")
    assert (root / "n/e/w.txt").read_text() == "x"


def test_existing_destination_needs_overwrite(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("new")
    (root / "b.txt").write_text("old")
    assert code_of(lambda: move(ctx, "a.txt", "b.txt")) == "already_exists"
    assert (root / "a.txt").read_text() == "new" and (root / "b.txt").read_text() == "old"
    move(ctx, "a.txt", "b.txt", overwrite=True)
    assert (root / "b.txt").read_text() == "new" and not (root / "a.txt").exists()


def test_moves_a_directory_with_its_tree(ctx: ToolContext, root: Path) -> None:
    (root / "d/sub").mkdir(parents=True)
    (root / "d/sub/f.txt").write_text("deep")
    move(ctx, "d", "e/d2")
    assert (root / "e/d2/sub/f.txt").read_text() == "deep" and not (root / "d").exists()


def test_directory_overwrite_rules_follow_rename(ctx: ToolContext, root: Path) -> None:
    (root / "d").mkdir()
    (root / "d/f").write_text("1")
    (root / "full").mkdir()
    (root / "full/x").write_text("2")
    (root / "file").write_text("3")
    assert code_of(lambda: move(ctx, "d", "full", overwrite=True)) == "already_exists"
    assert code_of(lambda: move(ctx, "d", "file", overwrite=True)) == "not_a_directory"
    assert code_of(lambda: move(ctx, "file", "full", overwrite=True)) == "is_directory"
    (root / "empty").mkdir()
    move(ctx, "d", "empty", overwrite=True)
    assert (root / "empty/f").read_text() == "1"


@pytest.mark.parametrize("source, destination, code", [
    ("missing.txt", "b.txt", "file_not_found"),
    ("no/such/dir.txt", "b.txt", "file_not_found"),
    ("a.txt", "../outside/stolen.txt", "path_outside_workspace"),
    ("../outside/canary.txt", "in.txt", "path_outside_workspace"),
    ("a.txt", "/etc/passwd-moved", "path_outside_workspace"),
    ("a.txt", "a.txt", "invalid_params"),
    ("a.txt", "./x/../a.txt", "invalid_params"),
    ("d", "d/inner/d", "invalid_params"),
    ("a.txt", "a.txt/inner", "not_a_directory"),
    (".", "elsewhere", "invalid_params"),
    ("a.txt", ".", "invalid_params"),
    ("a.txt", ".chorus-tmp-0123456789abcdef", "invalid_params"),
    ("a.txt", "", "invalid_params"),
    ("a.txt", "b/", "not_a_directory"),
])
def test_bad_moves_are_refused_and_change_nothing(ctx: ToolContext, root: Path,
                                                  outside: Path, source: str,
                                                  destination: str, code: str) -> None:
    (root / "a.txt").write_text("a")
    (root / "d").mkdir()
    before, world = snapshot(root), snapshot(outside)
    assert code_of(lambda: move(ctx, source, destination)) == code
    assert snapshot(root) == before and snapshot(outside) == world


def test_a_directory_into_its_own_subtree_through_a_symlink(ctx: ToolContext,
                                                            root: Path) -> None:
    """The lexical check cannot see an alias; the kernel's EINVAL is the same error."""
    (root / "d/inner").mkdir(parents=True)
    os.symlink("d/inner", root / "alias")
    assert code_of(lambda: move(ctx, "d", "alias/d")) == "invalid_params"
    assert (root / "d/inner").is_dir()


def test_a_symlink_is_moved_itself_never_its_target(ctx: ToolContext, root: Path,
                                                    outside: Path) -> None:
    os.symlink(str(outside / "canary.txt"), root / "out-link")
    (root / "t.txt").write_text("target")
    os.symlink("t.txt", root / "in-link")
    world = snapshot(outside)
    move(ctx, "out-link", "moved-out-link")
    move(ctx, "in-link", "sub/moved-in-link")
    assert os.readlink(root / "moved-out-link") == str(outside / "canary.txt")
    assert os.readlink(root / "sub/moved-in-link") == "t.txt"
    assert (root / "t.txt").read_text() == "target" and snapshot(outside) == world


def test_a_destination_parent_that_is_a_symlink_out_is_refused(ctx: ToolContext, root: Path,
                                                              outside: Path) -> None:
    os.symlink(str(outside), root / "abs")
    os.symlink("../outside", root / "rel")
    (root / "a.txt").write_text("a")
    world = snapshot(outside)
    for link in ("abs", "rel"):
        assert code_of(functools.partial(move, ctx, "a.txt", f"{link}/a.txt")) == \
            "path_outside_workspace"
        assert code_of(functools.partial(move, ctx, f"{link}/canary.txt", "c.txt")) == \
            "path_outside_workspace"
    assert snapshot(outside) == world and (root / "a.txt").exists()


def test_overwriting_a_symlink_replaces_the_link_not_its_target(ctx: ToolContext,
                                                                root: Path,
                                                                outside: Path) -> None:
    os.symlink(str(outside / "canary.txt"), root / "link")
    (root / "a.txt").write_text("a")
    world = snapshot(outside)
    move(ctx, "a.txt", "link", overwrite=True)
    assert not (root / "link").is_symlink() and (root / "link").read_text() == "a"
    assert snapshot(outside) == world
