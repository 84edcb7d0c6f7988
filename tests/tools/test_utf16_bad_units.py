"""UTF-16 (behind its BOM) that is not well formed: a lone surrogate, or a last unit cut to
one byte, reads as U+FFFD; an edit keeps those bytes where it did not touch them, as a
UTF-8 file's bad bytes are kept (docs/protocol.md, `file.patch`: every byte outside the
changed text is unchanged)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.patch.patch import patch
from chorus_tools.tools.read.read import read

LE, BE = b"\xff\xfe", b"\xfe\xff"


@pytest.mark.parametrize(("before", "after"), [
    pytest.param(LE + b"h\x00i\x00\n", LE + b"H\x00i\x00\n", id="cut-last-unit"),
    pytest.param(LE + b"h\x00\x00\xd8a\x00\n\x00", LE + b"H\x00\x00\xd8a\x00\n\x00",
                 id="lone-surrogate-le"),
    pytest.param(BE + b"\x00h\xd8\x00\x00a\x00\n", BE + b"\x00H\xd8\x00\x00a\x00\n",
                 id="lone-surrogate-be"),
])
def test_regression_utf16_patch_rewrote_bad_units_outside_the_edit(
        ctx: ToolContext, root: Path, before: bytes, after: bytes) -> None:
    """Regression: the text was encoded afresh, so each U+FFFD the file read as was
    written as the character U+FFFD (FD FF): bytes nowhere near the edit changed."""
    (root / "u.txt").write_bytes(before)
    assert "\ufffd" in read(ctx, "u.txt")["content"]
    patch(ctx, "u.txt", [{"find": "h", "replace": "H"}])
    assert (root / "u.txt").read_bytes() == after


def test_a_kept_bad_unit_moves_with_its_text(ctx: ToolContext, root: Path) -> None:
    (root / "u.txt").write_bytes(LE + b"h\x00\x00\xd8a\x00\n\x00")
    patch(ctx, "u.txt", [{"find": "\ufffda", "replace": "b\ufffd"}])
    assert (root / "u.txt").read_bytes() == LE + b"h\x00b\x00\x00\xd8\n\x00"


def test_a_cut_last_byte_that_new_text_follows_becomes_the_character(
        ctx: ToolContext, root: Path) -> None:
    """Kept in the middle, a lone byte would shift every unit after it: the U+FFFD is
    then written as the character, and the file reads back as the text the edit made."""
    (root / "u.txt").write_bytes(LE + b"h\x00i\x00\n")
    patch(ctx, "u.txt", [{"find": "i\ufffd", "replace": "i\ufffdX"}])
    assert (root / "u.txt").read_bytes() == LE + "hi\ufffdX".encode("utf-16-le")
    assert read(ctx, "u.txt", raw=True)["content"] == "hi\ufffdX"


def test_a_real_u_fffd_and_a_bad_unit_each_keep_their_own_bytes(
        ctx: ToolContext, root: Path) -> None:
    """A real U+FFFD (FD FF) beside a lone surrogate: both read as U+FFFD, each keeps its
    bytes, and an FD FF straddling two units (00 FD, FF 00) is no U+FFFD at all."""
    body = "h\ufffdx\n".encode("utf-16-le") + b"\x00\xd8" + b"\x00\xfd\xff\x00"
    (root / "u.txt").write_bytes(LE + body)
    patch(ctx, "u.txt", [{"find": "x", "replace": "y"}])
    assert (root / "u.txt").read_bytes() == LE + body.replace(b"x\x00", b"y\x00")
