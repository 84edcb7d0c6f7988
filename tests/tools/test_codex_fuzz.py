"""Fuzzing apply_patch (hypothesis, bounded by fuzz_support's budget): any text is a patch
or a clear invalid_params naming a line of it; any patch of generated hunks against a
generated file either applies, leaving the file as a plain splice would, or fails with a
structured error (docs/protocol.md, "Errors") and the file untouched. Never a crash."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from fuzz_support import budget
from hypothesis import given
from hypothesis import strategies as st

from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.dialects.codex import apply_patch
from chorus_tools.tools.dialects.v4a import parse
from chorus_tools.tools.errors import ToolError

MARKERS = ["*** Begin Patch", "*** End Patch", "*** Add File: a.txt", "*** Delete File: a.txt",
           "*** Update File: a.txt", "*** Move to: b.txt", "*** End of File", "@@", "@@ x",
           "<<'EOF'", "EOF", " x", "-x", "+x", "", "  ", "*", "@@@"]
LINE = st.one_of(st.sampled_from(MARKERS), st.text(max_size=12))
FILE_LINES = st.lists(st.sampled_from(["a", "b", "c", "  a", "a  ", "\u2014", ""]),
                      max_size=8)
ERRORS = {"invalid_params", "find_not_found", "find_not_unique", "file_not_found",
          "is_directory", "not_a_directory"}


@budget(2)
@given(st.lists(LINE, max_size=14))
def test_any_text_parses_or_names_a_line(lines: list[str]) -> None:
    text = "\n".join(lines)
    try:
        parse(text)
    except ToolError as err:
        assert err.code == "invalid_params" and err.details["param"] == "input"
        assert 1 <= err.details["line"] <= text.count("\n") + 1


@pytest.fixture(scope="module")
def patched(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, ToolContext]]:
    """One workspace for every example, its root descriptor closed at the end: a
    Workspace per example held one each, and 20,000 examples ran out of descriptors."""
    root = tmp_path_factory.mktemp("fuzz")
    ws = Workspace(str(root))
    yield root, ToolContext(ws)
    os.close(ws.root_fd)


@budget()
@given(FILE_LINES, st.lists(st.tuples(st.sampled_from([" ", "-", "+"]),
                                      st.sampled_from(["a", "b", "c", "d", ""])),
                            min_size=1, max_size=5),
       st.booleans())
def test_generated_hunks_apply_or_change_nothing(patched: tuple[Path, ToolContext],
                                                 file_lines: list[str],
                                                 hunk: list[tuple[str, str]],
                                                 eof: bool) -> None:
    root, ctx = patched
    original = "".join(line + "\n" for line in file_lines)
    (root / "a.txt").write_text(original)
    text = "\n".join(["*** Begin Patch", "*** Update File: a.txt", "@@",
                      *(kind + line for kind, line in hunk),
                      *(["*** End of File"] if eof else []), "*** End Patch"])
    try:
        apply_patch(ctx, text)
    except ToolError as err:
        assert err.code in ERRORS, err.message
        assert (root / "a.txt").read_text() == original
        return
    added = sum(kind == "+" for kind, _ in hunk)
    removed = sum(kind == "-" for kind, _ in hunk)
    expected = original.count("\n") + added - removed
    allowed = {expected}
    old = [line for kind, line in hunk if kind != "+"]
    if old and old[-1] == "":  # lines ending in an empty one may stand for the file's
        allowed |= {expected + 1, expected - 1}  # last line break (Codex's retry)
    assert (root / "a.txt").read_text().count("\n") in allowed
