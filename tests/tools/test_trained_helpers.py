"""Pieces of the trained-format sets on their own: Gemini CLI's case-insensitive glob as a
bracketed glob, the anthropic editor's line insertion (whole lines, the file's line
endings, a missing final break kept), and the editors' snippets, made from what their
own edit wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from wcmatch import glob as wcglob

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.dialects.anthropic import text_editor_tool
from chorus_tools.tools.dialects.gemini import caseless, replace_tool
from chorus_tools.tools.dialects.positional import _spliced
from chorus_tools.tools.mutate import atomic


@pytest.mark.parametrize("pattern, path, hit", [
    ("**/*.PY", "src/App.py", True),
    ("README.md", "readme.MD", True),
    ("[A-C]x.txt", "bx.txt", False),  # a bracket expression is left as written
    ("[A-C]x.txt", "BX.TXT", True),
    ("\\*.txt", "*.TXT", True),  # an escaped character stays escaped
    ("{src,lib}/*.Ts", "LIB/a.ts", True),
    ("ß.txt", "SS.txt", False),  # only letters with one upper and one lower form
])
def test_caseless_glob(pattern: str, path: str, hit: bool) -> None:
    flags = wcglob.GLOBSTAR | wcglob.BRACE
    assert wcglob.globmatch(path, caseless(pattern), flags=flags) is hit


@pytest.mark.parametrize("old, line, text, new", [
    ("a\nb\n", 0, "X", "X\na\nb\n"),
    ("a\nb\n", 1, "X\n", "a\nX\nb\n"),
    ("a\nb\n", 2, "X\nY", "a\nb\nX\nY\n"),
    ("a\nb", 2, "X", "a\nb\nX"),
    ("a\r\nb\r\n", 1, "X\nY\n", "a\r\nX\r\nY\r\nb\r\n"),
    ("a\r\nb\r\n", 0, "X\r\n", "X\r\na\r\nb\r\n"),
    ("", 0, "X", "X\n"),
    ("a\n", 1, "", "a\n\n"),
])
def test_spliced_inserts_whole_lines(old: str, line: int, text: str, new: str) -> None:
    got, added = _spliced(old, line, text)
    assert got == new
    assert added == max(1, text.replace("\r\n", "\n").rstrip("\n").count("\n") + 1)


@pytest.mark.parametrize("editor", ["anthropic", "gemini"])
def test_snippet_read_back_after_another_write(
        ctx: ToolContext, root: Path, monkeypatch: pytest.MonkeyPatch, editor: str) -> None:
    """The snippet shows the lines this edit wrote, even when another writer replaces the
    file right after (it was read back from the file after the write)."""
    target = root / "f.txt"
    target.write_text("".join(f"line {i}\n" for i in range(20)))
    real = atomic._replace

    def then_another_writer(*args: Any, **kwargs: Any) -> Any:
        done = real(*args, **kwargs)
        target.write_text("someone else's\n" * 20)
        return done
    monkeypatch.setattr(atomic, "_replace", then_another_writer)
    if editor == "anthropic":
        out = text_editor_tool(ctx, "str_replace", "f.txt", old_str="line 9\n",
                               new_str="LINE NINE\n")["output"]
    else:
        out = replace_tool(ctx, "f.txt", "line 9\n", "LINE NINE\n")["output"]
    assert "LINE NINE" in out and "line 8" in out and "line 10" in out
    assert "someone else's" not in out
