"""The JS/TS checker's process is confined like ripgrep (docs/protocol.md, Diagnostics;
tools/patch/oxlint.py): under its Landlock domain it may open the config beside its text
and nothing of the workspace, nor any other file, whatever the binary tries."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_elf import opens, write_elf

from chorus_tools.tools.confine import landlock
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.mutate.write import write
from chorus_tools.tools.patch import oxlint

pytestmark = pytest.mark.skipif(landlock.abi_version() == 0, reason="needs Landlock")


@pytest.mark.parametrize("target, status", [
    (b"oxlintrc.json", 3),  # beside its text: granted (the fake's own sanity)
    (b"{root}/secret.txt", 4),  # the workspace
    (b"{outside}/secret.txt", 4),  # a sibling of it
    (b"/etc/passwd", 4),
])
def test_the_checker_opens_only_what_it_was_given(ctx: ToolContext, root: Path,
                                                  outside: Path, tmp_path: Path,
                                                  target: bytes, status: int) -> None:
    (root / "secret.txt").write_text("s")
    (outside / "secret.txt").write_text("s")
    path = target.replace(b"{root}", bytes(root)).replace(b"{outside}", bytes(outside))
    ctx.oxlint = oxlint.start(str(write_elf(tmp_path / "oxlint", opens(path))))
    done = write(ctx, "a.js", "x;\n")
    assert done["diagnostics"]["problems"] == {
        "skipped": f"the checker (oxlint) failed (exit status {status})"}
