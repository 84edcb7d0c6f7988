"""Issue 25's kinds of indentation-tier edit, each row with the exact bytes it must write or
the refusal it must get, in-process through file.patch and through the claude Edit and
MultiEdit and the shadow Edit (the rows live in tests/patch_kinds.py).

A refusal is `find_not_found` with the hint on the region the lines matched and a reason
naming the first line that disagrees; the file is untouched.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from patch_kinds import ROWS, Row
from syntax_support import broken

from chorus_tools.tools.confine.sandbox import version_of
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.dialects import claude, shadow
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.patch.patch import patch


def _file_patch(ctx: ToolContext, root: Path, row: Row) -> Any:
    return patch(ctx, row.path, [{"find": row.find, "replace": row.replace}])


def _claude_edit(ctx: ToolContext, root: Path, row: Row) -> Any:
    read = version_of(os.stat(root / row.path))  # what the dispatcher passes once read
    return claude.edit_tool(ctx, file_path=row.path, old_string=row.find,
                            new_string=row.replace, read_version=read)


def _claude_multi_edit(ctx: ToolContext, root: Path, row: Row) -> Any:
    read = version_of(os.stat(root / row.path))
    return claude.multi_edit_tool(ctx, file_path=row.path, read_version=read, edits=[
        {"old_string": row.find, "new_string": row.replace}])


def _shadow_edit(ctx: ToolContext, root: Path, row: Row) -> Any:
    return shadow.edit_tool(ctx, file_path=row.path, old_string=row.find,
                            new_string=row.replace)


EDITORS: dict[str, Callable[[ToolContext, Path, Row], Any]] = {
    "file.patch": _file_patch, "claude Edit": _claude_edit,
    "claude MultiEdit": _claude_multi_edit, "shadow Edit": _shadow_edit,
}


@pytest.mark.parametrize("editor", list(EDITORS))
@pytest.mark.parametrize("name", list(ROWS))
def test_each_kind_is_applied_exactly_or_refused(ctx: ToolContext, root: Path, name: str,
                                                 editor: str) -> None:
    row = ROWS[name]
    f = root / row.path
    f.write_bytes(row.before.encode())
    if row.after is not None:
        EDITORS[editor](ctx, root, row)
        assert f.read_bytes() == row.after.encode()
        assert broken(row.path, row.before, row.after) is None
        return
    with pytest.raises(ToolError) as info:
        EDITORS[editor](ctx, root, row)
    assert info.value.code == "find_not_found", info.value.message
    details = info.value.details
    assert "reason" in details and details["hint"] is not None
    assert row.before.splitlines()[details["hint"]["start_line"] - 1].strip() == \
        row.find.splitlines()[0].strip()
    if row.find_line is not None:
        assert details["find_line"] == row.find_line
        assert f"find line {row.find_line}" in details["reason"]
    assert f.read_bytes() == row.before.encode()


@pytest.mark.parametrize("crlf", [False, True], ids=["lf", "crlf"])
@pytest.mark.parametrize("bom", [False, True], ids=["plain", "bom"])
def test_a_kind_keeps_crlf_and_bom(ctx: ToolContext, root: Path, crlf: bool,
                                   bom: bool) -> None:
    row = ROWS["JS/TS 2 <-> 4 spaces inside open brackets: 4-space find on a 2-space file, ("]
    def raw(text: str) -> bytes:
        return (b"\xef\xbb\xbf" if bom else b"") + (
            text.replace("\n", "\r\n") if crlf else text).encode()
    f = root / row.path
    f.write_bytes(raw(row.before))
    patch(ctx, row.path, [{"find": row.find, "replace": row.replace}])
    assert row.after is not None
    assert f.read_bytes() == raw(row.after)


def test_replace_all_maps_each_region_on_its_own(ctx: ToolContext, root: Path) -> None:
    f = root / "a.py"
    f.write_text("def a():\n    x = 1\n    y = 2\n\n\nclass B:\n    def b(self):\n"
                 "        x = 1\n        y = 2\n")
    patch(ctx, "a.py", [{"find": "x = 1\ny = 2\n", "replace": "x = 1\ny = 3\n",
                         "replace_all": True}])
    assert f.read_text() == ("def a():\n    x = 1\n    y = 3\n\n\nclass B:\n    def b(self):\n"
                             "        x = 1\n        y = 3\n")


def test_a_region_no_mapping_fits_refuses_replace_all_whole(ctx: ToolContext,
                                                            root: Path) -> None:
    before = "if a:\n    x = 1\n    y = 2\nif b:\n    x = 1\ny = 2\n"
    f = root / "a.py"
    f.write_text(before)
    with pytest.raises(ToolError) as info:
        patch(ctx, "a.py", [{"find": "  x = 1\n  y = 2\n", "replace": "  x = 1\n  y = 3\n",
                             "replace_all": True}])
    assert info.value.code == "find_not_found"
    assert info.value.details["hint"]["start_line"] == 5
    assert f.read_text() == before


def test_trailing_whitespace_never_decides(ctx: ToolContext, root: Path) -> None:
    f = root / "a.py"
    f.write_text("def f():\n    a = 1    \n    b = 2\n")
    patch(ctx, "a.py", [{"find": "  a = 1\n  b = 2   \t\n", "replace": "  a = 1\n  b = 3\n"}])
    assert f.read_text() == "def f():\n    a = 1\n    b = 3\n"


def test_never_mixes_tabs_into_a_space_region(ctx: ToolContext, root: Path) -> None:
    f = root / "a.py"
    before = "def f():\n    a = 1\n    b = 2\n"
    f.write_text(before)
    with pytest.raises(ToolError) as info:
        patch(ctx, "a.py", [{"find": "a = 1\nb = 2\n", "replace": "a = 1\n\tb = 3\n"}])
    assert info.value.code == "find_not_found"
    assert info.value.details["replace_line"] == 2
    assert f.read_text() == before
