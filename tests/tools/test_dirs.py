"""dir.create (mkdir -p) and dir.delete (rmdir, rm -r) confined to the workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.mutate.dirs import create, delete
from chorus_tools.tools.errors import ToolError
from rpc_client import snapshot


def code_of(call) -> str:
    with pytest.raises(ToolError) as err:
        call()
    return err.value.code


def test_create_makes_parents_and_is_idempotent(ctx: ToolContext, root: Path) -> None:
    assert create(ctx, "a/b/c") == {"success": True, "created": True}
    assert (root / "a/b/c").is_dir()
    assert create(ctx, "a/b/c") == {"success": True, "created": False}
    assert create(ctx, "a/b/") == {"success": True, "created": False}
    assert create(ctx, ".") == {"success": True, "created": False}


def test_create_without_parents_needs_the_parent(ctx: ToolContext, root: Path) -> None:
    assert code_of(lambda: create(ctx, "x/y", parents=False)) == "file_not_found"
    assert not (root / "x").exists()
    assert create(ctx, "x", parents=False)["created"] is True


def test_a_dangling_link_on_the_way_never_says_pass_parents_true(ctx: ToolContext,
                                                                  root: Path) -> None:
    """Regression: with parents already true, a parent that is a dangling symlink was
    answered 'Pass parents: true to create it too', an advice that changes nothing."""
    os.symlink("nowhere", root / "dang")
    with pytest.raises(ToolError) as err:
        create(ctx, "dang/x")
    assert err.value.code == "file_not_found"
    assert "Pass parents: true" not in err.value.message
    assert "symlink" in err.value.message and not (root / "nowhere").exists()


def test_create_through_an_inside_symlink_like_mkdir_p(ctx: ToolContext, root: Path) -> None:
    (root / "real").mkdir()
    os.symlink("real", root / "link")
    assert create(ctx, "link")["created"] is False
    assert create(ctx, "link/new")["created"] is True and (root / "real/new").is_dir()


@pytest.mark.parametrize("path, code", [
    ("f.txt", "not_a_directory"),
    ("f.txt/sub", "not_a_directory"),
    ("../outside/new", "path_outside_workspace"),
    ("out/new", "path_outside_workspace"),
    ("rel/new", "path_outside_workspace"),
    ("", "invalid_params"),
    ("a\0b", "invalid_params"),
    (".chorus-tmp-0123456789abcdef", "invalid_params"),
])
def test_create_refuses(ctx: ToolContext, root: Path, outside: Path, path: str,
                        code: str) -> None:
    (root / "f.txt").write_text("file")
    os.symlink(str(outside), root / "out")
    os.symlink("../outside", root / "rel")
    before, world = snapshot(root), snapshot(outside)
    assert code_of(lambda: create(ctx, path)) == code
    assert snapshot(root) == before and snapshot(outside) == world


def test_delete_an_empty_directory(ctx: ToolContext, root: Path) -> None:
    (root / "e").mkdir()
    assert delete(ctx, "e") == {"success": True, "removed": 1}
    assert not (root / "e").exists()


def test_a_non_empty_directory_needs_recursive(ctx: ToolContext, root: Path) -> None:
    (root / "d/sub").mkdir(parents=True)
    (root / "d/sub/f").write_text("12345")
    (root / "d/g").write_text("xy")
    with pytest.raises(ToolError) as err:
        delete(ctx, "d")
    assert err.value.code == "invalid_params" and err.value.details["param"] == "recursive"
    assert (root / "d/sub/f").exists()
    assert delete(ctx, "d", recursive=True) == {"success": True, "removed": 4}
    assert not (root / "d").exists()


def test_recursive_delete_unlinks_symlinks_never_their_targets(ctx: ToolContext, root: Path,
                                                               outside: Path) -> None:
    (root / "d/sub").mkdir(parents=True)
    (root / "keep").mkdir()
    (root / "keep/k.txt").write_text("keep")
    os.symlink(str(outside), root / "d/abs")
    os.symlink("../../outside", root / "d/sub/rel")
    os.symlink("../keep", root / "d/inside")
    world = snapshot(outside)
    assert delete(ctx, "d", recursive=True)["removed"] == 5
    assert snapshot(outside) == world and (root / "keep/k.txt").read_text() == "keep"


@pytest.mark.parametrize("path, code", [
    (".", "invalid_params"),
    ("", "invalid_params"),
    ("d/..", "invalid_params"),
    ("missing", "file_not_found"),
    ("f.txt", "not_a_directory"),
    ("link-to-d", "not_a_directory"),
    ("out", "not_a_directory"),
    ("out/", "not_a_directory"),
    ("out/x", "path_outside_workspace"),
    ("../outside", "path_outside_workspace"),
])
def test_delete_refuses(ctx: ToolContext, root: Path, outside: Path, path: str,
                        code: str) -> None:
    (root / "d").mkdir()
    (root / "d/f").write_text("f")
    (root / "f.txt").write_text("file")
    os.symlink("d", root / "link-to-d")
    os.symlink(str(outside), root / "out")
    (outside / "x").mkdir()
    before, world = snapshot(root), snapshot(outside)
    with pytest.raises(ToolError) as err:
        delete(ctx, path, recursive=True)
    assert err.value.code == code
    assert snapshot(root) == before and snapshot(outside) == world


def test_a_directory_swapped_for_a_symlink_mid_delete_is_not_followed(
        ctx: ToolContext, root: Path, outside: Path, monkeypatch) -> None:
    """The subdirectory is listed as a directory, then replaced by a symlink to the
    outside before the walk opens it: it is unlinked as a link, the outside untouched."""
    (root / "d/sub").mkdir(parents=True)
    (root / "d/sub/f").write_text("f")
    (outside / "keep").write_text("keep")
    world = snapshot(outside)
    listdir = os.listdir

    def swap_after_listing(fd):
        names = listdir(fd)
        if "sub" in names and (root / "d/sub").is_dir() and not (root / "d/sub").is_symlink():
            os.rename(root / "d/sub", root / "moved-sub")
            os.symlink(str(outside), root / "d/sub")
        return names

    monkeypatch.setattr(os, "listdir", swap_after_listing)
    assert delete(ctx, "d", recursive=True)["removed"] == 2
    assert snapshot(outside) == world and (root / "moved-sub/f").exists()


@pytest.mark.parametrize("make", ["dir.create", "file.write"])
def test_regression_reserved_name_made_as_a_missing_parent(ctx: ToolContext, root: Path,
                                                          make: str) -> None:
    """Found by the params fuzzer (20,000 examples): the reserved temp prefix was refused
    as a path's last name only, so `d/.chorus-tmp-1/x` made `.chorus-tmp-1` as a missing
    parent. Refused now, before any parent is made."""
    from chorus_tools.tools.mutate.write import write
    path = "d/e/.chorus-tmp-1/x"
    before = snapshot(root)
    with pytest.raises(ToolError) as err:
        if make == "dir.create":
            create(ctx, path)
        else:
            write(ctx, path, "x", create_dirs=True)
    assert err.value.code == "invalid_params" and ".chorus-tmp-" in err.value.message
    assert snapshot(root) == before
