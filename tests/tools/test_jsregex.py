"""JavaScript RegExp sources in ripgrep's syntax (the shadow set's Grep): what translates,
how, and that the translation means in ripgrep what the source means in JavaScript."""

from __future__ import annotations

import subprocess

import pytest

from chorus_tools.tools.dialects.jsregex import translate
from chorus_tools.tools.errors import ToolError

from fanout_runner import RG_PATH


@pytest.mark.parametrize("source, expected", [
    (r"foo\(\d+\)|bar$", r"foo\(\d+\)|bar$"),  # the common syntax as is
    ("a[^]b", r"a[\s\S]b"),
    ("a[]b", r"a[^\s\S]b"),
    (r"https?:\/\/x\.y", r"https?://x\.y"),
    (r"\u0041\u{1F600}", r"\x{0041}\x{1F600}"),
    (r"\cJ\cm", r"\x{0A}\x{0D}"),
    (r"\0", r"\x00"),
    (r"(?<year>\d{4})-\k<year>", r"(?<year>\d{4})-(?P=year)"),
    ("[[a]", r"[\[a]"),
    ("[a&&b]", r"[a\&&b]"),
    ("[a--b]", r"[a\--b]"),
    ("[~~]", r"[\~~]"),
    (r"[\]a]", r"[\]a]"),
    (r"[^\/]", r"[^/]"),
])
def test_translation(source: str, expected: str) -> None:
    assert translate(source) == expected


@pytest.mark.parametrize("source, construct", [(r"\q{ab|c}", r"\q{ab|c}"),
                                               (r"[\q{x}a]", r"\q{x}"),
                                               (r"\q{unclosed", r"\q{unclosed")])
def test_untranslatable_names_the_construct(source: str, construct: str) -> None:
    with pytest.raises(ToolError) as err:
        translate(source)
    assert err.value.code == "invalid_pattern" and err.value.details["construct"] == construct
    assert err.value.details["param"] == "query"


@pytest.mark.skipif(RG_PATH is None, reason="needs ripgrep")
@pytest.mark.parametrize("source, line, matches", [
    ("[[a]", "[", True), ("[[a]", "b", False),
    ("[a&&b]", "&", True), ("[a--b]", "-", True), ("[a--b]", "c", False),
    ("a[^]b", "a-b", True), ("a[]b", "ab", False),
    (r"\u0041", "A", True), (r"x\/y", "x/y", True),
])
def test_ripgrep_reads_the_translation_as_javascript_does(source: str, line: str,
                                                          matches: bool) -> None:
    done = subprocess.run([RG_PATH, "--no-config", "-c", "--regexp", translate(source), "-"],
                          input=line.encode(), capture_output=True)
    assert done.returncode == (0 if matches else 1), done.stderr
