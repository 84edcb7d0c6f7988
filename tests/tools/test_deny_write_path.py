"""Every change refuses a --deny'd place itself, for a path that reaches it through a
symlinked directory: the worker's check before a call runs (tools/confine/policy.py) can
be overtaken by a link swapped in afterwards, so the one atomic write path, the move, the
deletes and dir.create judge where the directory they hold really is (docs/protocol.md,
--deny). Regression: the write did; move, file.delete, dir.delete and dir.create went
through the link."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from chorus_tools.tools.confine.deny import DenyRules
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.mutate import delete, dirs
from chorus_tools.tools.mutate.move import move
from chorus_tools.tools.mutate.write import write


SECRETS = ["empty", "key.txt"]


@pytest.fixture(params=[True, False], ids=["openat2", "walk"])
def denying(request: pytest.FixtureRequest, root: Path) -> Iterator[ToolContext]:
    """A context on `root` denying secrets/**, `seclink` -> `secrets` there as if swapped
    in once the call was checked (the tool is called without the worker's check)."""
    (root / "secrets/empty").mkdir(parents=True)
    (root / "secrets/key.txt").write_text("SECRET\n")
    (root / "mine.txt").write_text("mine\n")
    os.symlink("secrets", root / "seclink")
    ctx = ToolContext(ws=Workspace(str(root), use_openat2=request.param,
                                   deny=DenyRules(["secrets/**"])))
    yield ctx
    os.close(ctx.ws.root_fd)


def _untouched(root: Path) -> None:
    assert sorted(os.listdir(root / "secrets")) == SECRETS
    assert not os.listdir(root / "secrets/empty")
    assert (root / "secrets/key.txt").read_text() == "SECRET\n"
    assert (root / "mine.txt").read_text() == "mine\n"


def test_a_write_through_a_link_swapped_in_after_the_check_lands_nowhere(
        root: Path, denying: ToolContext) -> None:
    for path in ("seclink/key.txt", "seclink/new.txt", "seclink/made/new.txt"):
        with pytest.raises(ToolError) as err:
            write(denying, path, "PWNED\n")
        assert err.value.code == "permission_denied" and err.value.details["path"] == path
    _untouched(root)
    write(denying, "ok.txt", "fine\n")  # a write elsewhere goes on
    assert (root / "ok.txt").read_text() == "fine\n"


@pytest.mark.parametrize(("source", "destination", "shown"), [
    ("seclink/key.txt", "out.txt", "seclink/key.txt"),   # a secret moved out
    ("mine.txt", "seclink/mine.txt", "seclink/mine.txt"),  # a file moved in
    ("mine.txt", "seclink/key.txt", "seclink/key.txt"),  # a secret replaced
])
def test_a_move_through_a_link_swapped_in_after_the_check_moves_nothing(
        root: Path, denying: ToolContext, source: str, destination: str, shown: str) -> None:
    with pytest.raises(ToolError) as err:
        move(denying, source, destination, overwrite=True)
    assert err.value.code == "permission_denied", err.value
    assert shown in err.value.message
    _untouched(root)
    assert not (root / "out.txt").exists()


@pytest.mark.parametrize(("change", "path"), [
    (lambda ctx, path: delete.delete(ctx, path), "seclink/key.txt"),
    (lambda ctx, path: dirs.delete(ctx, path), "seclink/empty"),
    (lambda ctx, path: dirs.delete(ctx, path, recursive=True), "seclink/empty"),
    (lambda ctx, path: dirs.create(ctx, path), "seclink/new"),
    (lambda ctx, path: dirs.create(ctx, path), "seclink/made/new"),
], ids=["file.delete", "dir.delete", "dir.delete-recursive", "dir.create", "dir.create-parents"])
def test_a_delete_or_mkdir_through_a_link_swapped_in_after_the_check_changes_nothing(
        root: Path, denying: ToolContext, change: Callable[[ToolContext, str], Any],
        path: str) -> None:
    with pytest.raises(ToolError) as err:
        change(denying, path)
    assert err.value.code == "permission_denied" and err.value.details["path"] == path
    _untouched(root)
