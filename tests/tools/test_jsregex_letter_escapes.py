"""JavaScript RegExp letter escapes that JavaScript does not define (the shadow set's Grep
`query`, docs/protocol.md, Tool set `shadow`): `\\A`, `\\Z`, `\\z`, `\\e`, `\\a`, `\\h`,
`\\G`, `\\K`, … are the letter itself in a JavaScript RegExp (Annex B identity escapes),
while ripgrep and PCRE2 read anchors, control characters or classes into them, and a
backspace is `[\\b]` inside a class; a `{` that starts no quantifier is a brace. Found by
probing: `\\A` and `\\Z` matched every line (as start and end anchors) where JavaScript
matches the letter, and `x{,3}` every line (as `x` up to three times)."""

from __future__ import annotations

import subprocess

import pytest

from chorus_tools.tools.dialects.jsregex import translate

from fanout_runner import RG_PATH


@pytest.mark.parametrize("source, expected", [
    (r"\A", "A"), (r"x\Z", "xZ"), (r"\z\e\a", "zea"), (r"[\A\h]", "[Ah]"),
    (r"[\b]", r"[\x08]"), ("a{,3}", r"a\{,3}"), ("f{x}", r"f\{x}"),
    ("a{2}b{1,}c{1,3}", "a{2}b{1,}c{1,3}"), ("[{,]", "[{,]"),
    # what JavaScript defines passes as before
    (r"\d\D\w\W\s\S\b\B\n\r\t\v\f", r"\d\D\w\W\s\S\b\B\n\r\t\v\f"),
    (r"\x41\p{Lu}\P{L}", r"\x41\p{Lu}\P{L}"),
])
def test_an_undefined_letter_escape_is_the_letter(source: str, expected: str) -> None:
    assert translate(source) == expected


@pytest.mark.skipif(RG_PATH is None, reason="needs ripgrep")
@pytest.mark.parametrize("source, line, matches", [
    (r"\A", "A", True), (r"\A", "b", False), (r"\Z", "xyz", False), (r"\Z", "Z", True),
    (r"[\b]", "\b", True), (r"[\b]", "b", False),
    ("x{,3}", "x", False), ("x{,3}", "x{,3}", True),
])
def test_ripgrep_reads_them_as_javascript_does(source: str, line: str,
                                               matches: bool) -> None:
    assert RG_PATH is not None
    done = subprocess.run([RG_PATH, "--no-config", "-c", "--regexp", translate(source), "-"],
                          input=line.encode(), capture_output=True)
    assert done.returncode == (0 if matches else 1), done.stderr
