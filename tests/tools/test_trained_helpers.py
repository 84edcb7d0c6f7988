"""Pieces of the trained-format sets on their own: Gemini CLI's case-insensitive glob as a
bracketed glob, and the anthropic editor's line insertion (whole lines, the file's line
endings, a missing final break kept)."""

from __future__ import annotations

import pytest
from wcmatch import glob as wcglob

from chorus_tools.tools.dialects.gemini import caseless
from chorus_tools.tools.dialects.positional import _spliced


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
