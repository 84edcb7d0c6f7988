"""Glob dialect: the forms docs/protocol.md's file.list names, ripgrep's refusals, and
its --glob rules."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from fuzzing import examples
from chorus_tools.tools.walk.globs import (IGNORE, NONE, WHITELIST, GlobError, ListPattern, RuleSet,
                         SearchGlobs, check_glob, gitignore_rule, literal_tail)
from chorus_tools.tools.walk.ignore import IgnoreStack, parse_ignore


@pytest.mark.parametrize("pattern, path, expected", [
    ("*.py", "a.py", True),
    ("*.py", "src/a.py", False),  # '*' never crosses '/'
    ("**/*.py", "a.py", True),
    ("**/*.py", "src/deep/a.py", True),
    ("src/**", "src/x/y", True),
    ("a?.txt", "ab.txt", True),
    ("a?.txt", "a/.txt", False),
    ("[ab]c", "bc", True),
    ("[!ab]c", "bc", False),
    ("*.{md,rst}", "x.rst", True),
    ("*.{md,rst}", "x.txt", False),
    ("{src,lib}/**/*.rs", "lib/a/b.rs", True),
    ("*.py", ".hidden.py", True),  # hidden entries are filtered by the walker, not the glob
    ("\\*.py", "*.py", True),
    ("\\*.py", "a.py", False),
])
def test_list_pattern_forms(pattern: str, path: str, expected: bool) -> None:
    assert ListPattern(pattern).matches(path) is expected


@pytest.mark.parametrize("pattern, reason", [
    ("[abc", "unclosed character class"),
    ("[]", "unclosed character class"),
    ("[!]", "unclosed character class"),
    ("{a,b", "unclosed alternate group"),
    ("a}", "unopened alternate group"),
    ("a\\", "dangling"),
    ("[z-a]", "invalid range"),
])
def test_invalid_globs_are_refused_like_ripgrep(pattern: str, reason: str) -> None:
    with pytest.raises(GlobError, match=reason):
        check_glob(pattern)


@pytest.mark.parametrize("pattern", ["{a,{b,c}}", "[]a]", "**a", "a**", "[{]"])
def test_globs_ripgrep_accepts(pattern: str) -> None:
    check_glob(pattern)


@pytest.mark.parametrize("pattern, descend, keep_out", [
    ("src/**/*.py", ["src", "src/a/b"], ["docs", "srcx"]),
    ("*.py", [], ["src"]),
    ("{a,b}/*.md", ["a", "b"], ["c", "a/x"]),
    ("**/*.md", ["x", ".x/y"], []),
    ("a/*/c/*", ["a", "a/b", "a/b/c"], ["b", "a/b/d", "a/b/c/e"]),
])
def test_list_pattern_prunes_only_hopeless_directories(pattern: str, descend: list[str],
                                                      keep_out: list[str]) -> None:
    lp = ListPattern(pattern)
    assert all(lp.may_descend(d) for d in descend)
    assert not any(lp.may_descend(d) for d in keep_out)


@pytest.mark.parametrize("line, path, is_dir, whitelist", [
    ("build/", "build", True, False),
    ("*.log", "deep/x.log", False, False),
    ("/top", "top", False, False),
    ("!keep", "a/keep", False, True),
    ("\\!bang", "!bang", False, False),
    ("\\#hash", "#hash", False, False),
    ("trail\\ ", "trail ", False, False),
    ("a/**/b", "a/b", False, False),
    ("a/**/b", "a/x/y/b", True, False),
])
def test_gitignore_rule_matches(line: str, path: str, is_dir: bool, whitelist: bool) -> None:
    rule = gitignore_rule(line)
    assert rule is not None and rule.whitelist is whitelist
    target = path.rpartition("/")[2] if rule.name_only else path
    assert rule.regex.fullmatch(target) and (is_dir or not rule.dir_only)


@pytest.mark.parametrize("line, path", [
    ("/top", "sub/top"),  # anchored to its directory
    ("a/b", "x/a/b"),  # a glob with a slash is anchored too
    ("dir/**", "dir"),  # what is inside dir, not dir itself
    ("trailing  ", "trailing  "),  # unescaped trailing spaces are dropped
])
def test_gitignore_rule_does_not_match(line: str, path: str) -> None:
    rule = gitignore_rule(line)
    target = path.rpartition("/")[2] if rule.name_only else path
    assert not rule.regex.fullmatch(target)


@pytest.mark.parametrize("line", ["", "   ", "# comment", "/", "!"])
def test_gitignore_blank_and_comment_lines(line: str) -> None:
    assert gitignore_rule(line) is None


def test_search_globs_follow_ripgrep_rules() -> None:
    globs = SearchGlobs(["*.md", "!secret.md", "docs/**"])
    assert globs.match("deep/a.md", False) == WHITELIST  # no '/': the name at any depth
    assert globs.match("x/secret.md", False) == IGNORE  # later globs override earlier
    assert globs.match("docs/x.txt", False) == WHITELIST
    assert globs.match("a.py", False) == IGNORE  # an include exists and none matched
    assert globs.match("src", True) == NONE  # directories are not excluded by that rule


def test_search_globs_of_only_excludes_keep_the_rest() -> None:
    globs = SearchGlobs(["!*.md", "!vendor/"])
    assert globs.match("a.py", False) == NONE
    assert globs.match("a.md", False) == IGNORE
    assert globs.match("vendor", True) == IGNORE


_GLOB_CHARS = st.sampled_from(["a", "b", ".", "-", "_", "1", "*", "?", "/", "**", "[ab]",
                               "[!a]", "{a,b}", "\\*", "!", "é"])
_NAME_CHARS = st.sampled_from(["a", "b", ".", "-", "_", "1", "*", "é", "ab", "a.b"])


def _slow_verdict(rules: RuleSet, path: str, is_dir: bool) -> int:
    """RuleSet.match without the literal-tail shortcut: every regex asked."""
    name = path.rpartition("/")[2]
    for rule in reversed(rules.rules):
        if (is_dir or not rule.dir_only) and rule.regex.fullmatch(
                name if rule.name_only else path):
            return WHITELIST if rule.whitelist else IGNORE
    return NONE


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(st.lists(_GLOB_CHARS, min_size=1, max_size=5).map("".join), min_size=1,
                max_size=4),
       st.lists(st.lists(_NAME_CHARS, min_size=1, max_size=4).map("".join), min_size=1,
                max_size=3).map("/".join),
       st.booleans())
def test_literal_tail_shortcut_gives_the_regex_answers(lines: list[str], path: str,
                                                       is_dir: bool) -> None:
    """The cheap `endswith(tail)` tests never change a verdict: rule sets, the walker's
    suspects and list patterns answer as the regexes alone do."""
    rules = parse_ignore("\n".join(lines))
    verdict = rules.match(path, is_dir)
    assert verdict == _slow_verdict(rules, path, is_dir)
    stack = IgnoreStack().child("", {".ignore": rules})
    if verdict != NONE:
        assert path.rpartition("/")[2] in stack.suspects([path.rpartition("/")[2]])
    for line in lines:
        try:
            pattern = ListPattern(line)
        except GlobError:
            continue
        target = path.rpartition("/")[2] if pattern._name_only else path
        assert pattern.matches(path, is_dir) is ((is_dir or not pattern.dir_only) and
                                                 pattern.regex.fullmatch(target) is not None)


@pytest.mark.parametrize("glob, tail", [("*.md", ".md"), ("**/x-1_a.txt", "x-1_a.txt"),
                                        ("*.{md,rst}", ""), ("a/**", ""), ("\\*.py", ".py"),
                                        ("[ab]", ""), ("build", "build")])
def test_literal_tail(glob: str, tail: str) -> None:
    assert literal_tail(glob) == tail
