"""The V4A grammar of Codex's apply_patch (tools/dialects/v4a.py): one test per construct,
the lenient forms Codex accepts, and every malformed patch a clear error naming its line."""

from __future__ import annotations

import pytest

from chorus_tools.tools.dialects.v4a import FileOp, Hunk, parse, paths
from chorus_tools.tools.errors import ToolError


def patch(*body: str) -> str:
    return "\n".join(["*** Begin Patch", *body, "*** End Patch"])


def test_add_file_takes_every_plus_line_with_a_final_line_break() -> None:
    assert parse(patch("*** Add File: src/new.py", "+def f():", "+    return 1", "+")) == [
        FileOp("add", "src/new.py", 2, content="def f():\n    return 1\n\n")]


def test_add_file_without_lines_is_an_empty_file() -> None:
    assert parse(patch("*** Add File: empty.txt")) == [FileOp("add", "empty.txt", 2)]


def test_delete_file() -> None:
    assert parse(patch("*** Delete File: old.txt")) == [FileOp("delete", "old.txt", 2)]


def test_update_with_every_line_kind() -> None:
    [op] = parse(patch("*** Update File: a.py", "@@ def f():", " keep", "-gone", "+came",
                       " keep2"))
    assert op == FileOp("update", "a.py", 2, hunks=(Hunk(
        ("def f():",), ("keep", "gone", "keep2"), ("keep", "came", "keep2"), False, 3),))


def test_first_hunk_may_omit_its_at_at() -> None:
    [op] = parse(patch("*** Update File: a.py", " import os", "+import re"))
    assert op.hunks == (Hunk((), ("import os",), ("import os", "import re"), False, 3),)


def test_bare_at_at_has_no_anchor() -> None:
    [op] = parse(patch("*** Update File: a", "@@", "-x", "+y"))
    assert op.hunks[0].anchors == ()


def test_stacked_anchors_each_narrow_the_search() -> None:
    [op] = parse(patch("*** Update File: a.py", "@@ class Base:", "@@     def run(self):",
                       "-        pass", "+        return 1"))
    assert op.hunks[0].anchors == ("class Base:", "    def run(self):")


def test_move_to() -> None:
    [op] = parse(patch("*** Update File: old/a.py", "*** Move to: new/b.py", "@@", "-x",
                       "+y"))
    assert (op.path, op.move_to) == ("old/a.py", "new/b.py")


def test_end_of_file_marks_the_hunk() -> None:
    [op] = parse(patch("*** Update File: a", "@@", " last", "+after", "*** End of File"))
    assert op.hunks[0].end_of_file is True


def test_several_hunks_and_operations_in_order() -> None:
    ops = parse(patch("*** Add File: n", "+1", "*** Update File: u", "@@ one", "-a", "+b",
                      "", "@@ two", "-c", "+d", "*** Delete File: d"))
    assert [(o.action, o.path, o.line) for o in ops] == [("add", "n", 2), ("update", "u", 4),
                                                         ("delete", "d", 12)]
    assert [h.line for h in ops[1].hunks] == [5, 9]
    assert ops[1].hunks[0].old == ("a", "")  # the blank line is an empty context line


def test_an_empty_line_in_a_hunk_is_an_empty_context_line() -> None:
    [op] = parse(patch("*** Update File: a", "@@", " x", "", "-y"))
    assert op.hunks[0].old == ("x", "", "y") and op.hunks[0].new == ("x", "")


@pytest.mark.parametrize("text", [
    " *** Begin Patch\n*** Delete File: d\n*** End Patch ",
    "*** Begin Patch   \n   *** Delete File: d   \n  *** End Patch\n",
    "\n\n*** Begin Patch\n*** Delete File: d\n*** End Patch\n\n",
    "*** Begin Patch\r\n*** Delete File: d\r\n*** End Patch\r\n",
    "<<EOF\n*** Begin Patch\n*** Delete File: d\n*** End Patch\nEOF\n",
    "<<'EOF'\n*** Begin Patch\n*** Delete File: d\n*** End Patch\nEOF",
    "<<\"EOF\"\n*** Begin Patch\n*** Delete File: d\n*** End Patch\nEOF",
    "apply_patch <<'PATCH'\n*** Begin Patch\n*** Delete File: d\n*** End Patch\nPATCH\n",
    "applypatch <<EOF\n*** Begin Patch\n*** Delete File: d\n*** End Patch\nEOF",
])
def test_lenient_forms(text: str) -> None:
    assert [(o.action, o.path) for o in parse(text)] == [("delete", "d")]


def test_padded_hunk_markers() -> None:
    [op] = parse(patch("  *** Update File:   a.txt  ", "   *** Move to: b.txt ", "  @@  ",
                       "-x", "+y", "  *** End of File  "))
    assert (op.path, op.move_to, op.hunks[0].end_of_file) == ("a.txt", "b.txt", True)


def _error(text: str) -> ToolError:
    with pytest.raises(ToolError) as info:
        parse(text)
    err = info.value
    assert err.code == "invalid_params" and err.details["param"] == "input"
    assert f"line {err.details['line']}" in err.message
    return err


@pytest.mark.parametrize("text, line, words", [
    ("", 1, "must be '*** Begin Patch'"),
    ("bad", 1, "must be '*** Begin Patch'"),
    ("*** Begin Patch\n*** Delete File: d", 2, "must be '*** End Patch'"),
    ("*** Begin Patch", 1, "must be '*** End Patch'"),
    ("\n\n*** Begin Patch\n*** End Patch", 3, "No files were modified"),
    (patch("*** Frobnicate File: x"), 2, "is not a valid hunk header"),
    (patch("*** Add File: a", "+x", "y"), 4, "is not a valid hunk header"),
    (patch("*** Update File: a.py"), 2, "is empty"),
    (patch("*** Update File: a.py", "*** Move to: b.py"), 2, "is empty"),
    (patch("*** Update File: a", "@@"), 3, "does not contain any lines"),
    (patch("*** Update File: a", "@@", "*** End of File"), 4, "does not contain any lines"),
    (patch("*** Update File: a", "@@", "bad"), 4, "Unexpected line found in update hunk"),
    (patch("*** Update File: a", "bad"), 3, "Unexpected line found in update hunk"),
    (patch("*** Update File: a", "@@", "-x", "oops"), 5,
     "Expected update hunk to start with a @@ context marker"),
    (patch("*** Add File:   "), 2, "needs a path"),
    (patch("*** Update File: a", "*** Move to:  ", "@@", "-x"), 3, "needs a path"),
    ("<<EOF\n*** Begin Patch\n*** Delete File: d\nEOF", 3, "must be '*** End Patch'"),
    ("<<EOF\n*** Begin Patch\n*** Delete File: d\n*** End Patch\nEOF2", 1,
     "must be '*** Begin Patch'"),
])
def test_malformed_patches_name_their_line(text: str, line: int, words: str) -> None:
    err = _error(text)
    assert err.details["line"] == line, err.message
    assert words in err.message


def test_lines_are_counted_in_the_text_as_given() -> None:
    err = _error("<<'EOF'\n*** Begin Patch\n*** Update File: a\n@@\nnope\n*** End Patch\nEOF")
    assert err.details["line"] == 5


def test_paths_scans_every_header_and_never_fails() -> None:
    text = patch("*** Add File: a", "+x", "*** Update File: b", "*** Move to: c", "@@",
                 "-q", "*** Delete File: a")
    assert paths({"input": text}) == [("input", "a"), ("input", "b"), ("input", "c")]
    assert paths({"input": "*** Update File: x\ngarbage"}) == [("input", "x")]
    assert paths({"input": 7}) == [] and paths({}) == []


def test_only_a_line_feed_ends_a_patch_line() -> None:
    """A U+2028 or a form feed in a line is part of it (Codex splits on "\\n" only)."""
    [op] = parse(patch("*** Update File: a", "@@", "-x\u2028y\x0cz", "+w"))
    assert op.hunks[0].old == ("x\u2028y\x0cz",)
