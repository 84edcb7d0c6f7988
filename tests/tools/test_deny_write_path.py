"""The one atomic write path refuses a --deny'd place itself, for a path that reaches it
through a symlinked directory: the worker's check before a call runs (tools/confine/
policy.py) can be overtaken by a link swapped in afterwards, so the write judges where
the directory it holds really is (docs/protocol.md, --deny)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chorus_tools.tools.confine.deny import DenyRules
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.mutate.write import write


@pytest.mark.parametrize("use_openat2", [True, False])
def test_a_write_through_a_link_swapped_in_after_the_check_lands_nowhere(
        root: Path, use_openat2: bool) -> None:
    (root / "secrets").mkdir()
    (root / "secrets/key.txt").write_text("SECRET\n")
    os.symlink("secrets", root / "seclink")  # as if swapped in once the call was checked
    ctx = ToolContext(ws=Workspace(str(root), use_openat2=use_openat2,
                                   deny=DenyRules(["secrets/**"])))
    for path in ("seclink/key.txt", "seclink/new.txt", "seclink/made/new.txt"):
        with pytest.raises(ToolError) as err:
            write(ctx, path, "PWNED\n")
        assert err.value.code == "permission_denied" and err.value.details["path"] == path
    assert sorted(os.listdir(root / "secrets")) == ["key.txt"]
    assert (root / "secrets/key.txt").read_text() == "SECRET\n"
    write(ctx, "ok.txt", "fine\n")  # a write elsewhere goes on
    assert (root / "ok.txt").read_text() == "fine\n"
