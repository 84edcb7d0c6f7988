"""file.delete against real files, symlinks, directories and FIFOs."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest

from chorus_tools.tools.confine.reserved import TEMP_PREFIX
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.mutate.delete import delete
from chorus_tools.tools.errors import ToolError


def _raises(ctx: ToolContext, path: str) -> ToolError:
    with pytest.raises(ToolError) as exc:
        delete(ctx, path)
    return exc.value


def test_deletes_regular_file(ctx: ToolContext, root: Path) -> None:
    (root / "sub").mkdir()
    (root / "sub/a.txt").write_text("x")
    assert delete(ctx, "sub/a.txt") == {"success": True}
    assert list((root / "sub").iterdir()) == []


def test_missing_file(ctx: ToolContext, root: Path) -> None:
    err = _raises(ctx, "nope.txt")
    assert err.code == "file_not_found" and err.details["path"] == "nope.txt"
    assert _raises(ctx, "nodir/nope.txt").code == "file_not_found"


@pytest.mark.parametrize("path", [".", "sub", "sub/", "sub/inner/..", "link/", "f/x/.."])
def test_directories_refused(ctx: ToolContext, root: Path, path: str) -> None:
    (root / "sub/inner").mkdir(parents=True)
    (root / "link").symlink_to("sub")
    (root / "f").write_text("keep")
    assert _raises(ctx, path).code == "is_directory"
    assert (root / "sub/inner").is_dir() and (root / "link").is_symlink()
    assert (root / "f").read_text() == "keep"


def test_symlink_removed_not_its_target(ctx: ToolContext, root: Path) -> None:
    (root / "real.txt").write_text("keep")
    (root / "link").symlink_to("real.txt")
    (root / "dirlink").symlink_to(".")
    delete(ctx, "link")
    delete(ctx, "dirlink")
    assert sorted(p.name for p in root.iterdir()) == ["real.txt"]
    assert (root / "real.txt").read_text() == "keep"


def test_symlinks_leading_outside_are_removed_only(ctx: ToolContext, root: Path,
                                                   outside: Path) -> None:
    (root / "abs").symlink_to(outside / "canary.txt")
    (root / "rel").symlink_to("../outside/canary.txt")
    (root / "dangling").symlink_to("nowhere")
    for name in ("abs", "rel", "dangling"):
        delete(ctx, name)
    assert list(root.iterdir()) == []
    assert (outside / "canary.txt").read_text() == "CANARY-OUTSIDE\n"


def test_escaping_parent_refused(ctx: ToolContext, root: Path, outside: Path) -> None:
    (root / "out").symlink_to("../outside")
    (root / "absout").symlink_to(outside)
    for path in ("out/canary.txt", "absout/canary.txt", "../outside/canary.txt",
                 str(outside / "canary.txt")):
        assert _raises(ctx, path).code == "path_outside_workspace", path
    assert (outside / "canary.txt").exists()


def test_symlinked_parent_inside_is_followed(ctx: ToolContext, root: Path) -> None:
    (root / "real").mkdir()
    (root / "real/f.txt").write_text("x")
    (root / "alias").symlink_to("real")
    delete(ctx, "alias/f.txt")
    assert list((root / "real").iterdir()) == []
    assert (root / "alias").is_symlink()


def test_fifo_refused(ctx: ToolContext, root: Path) -> None:
    os.mkfifo(root / "pipe")
    err = _raises(ctx, "pipe")
    assert err.code == "not_a_regular_file"
    assert stat.S_ISFIFO(os.lstat(root / "pipe").st_mode)


def test_file_as_parent(ctx: ToolContext, root: Path) -> None:
    (root / "f").write_text("x")
    assert _raises(ctx, "f/g").code == "not_a_directory"


def test_hard_link_other_name_survives(ctx: ToolContext, root: Path) -> None:
    (root / "a").write_text("shared")
    os.link(root / "a", root / "b")
    delete(ctx, "a")
    assert (root / "b").read_text() == "shared"


def test_stale_temp_removed(ctx: ToolContext, root: Path) -> None:
    (root / (TEMP_PREFIX + "00112233445566ff")).write_text("stale")
    (root / "a").write_text("x")
    delete(ctx, "a")
    assert list(root.iterdir()) == []


def test_audit_record(ctx: ToolContext, root: Path) -> None:
    (root / "a").write_bytes(b"12345")
    (root / "link").symlink_to("a")
    ctx.record = {}
    delete(ctx, "a")
    assert ctx.record == {"sha256_before": hashlib.sha256(b"12345").hexdigest(),
                          "sha256_after": None, "bytes": 5}
    ctx.record = {}
    delete(ctx, "link")
    assert ctx.record == {"sha256_before": hashlib.sha256(b"a").hexdigest(),
                          "sha256_after": None, "bytes": 1}
