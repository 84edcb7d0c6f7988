"""Glob patterns: one dialect (wcmatch's `*`, `?`, `[..]`, `{a,b}`, `**`) read three ways.

- `gitignore_rule`: one line of an ignore file as ripgrep's `ignore` crate reads it.
- `SearchGlobs`: file.search's `glob` list with ripgrep's `--glob` rules (ripgrep builds
  those from the same gitignore reading, with the polarity inverted).
- `ListPattern`: file.list's `pattern`, a glob relative to the listed directory that also
  tells the walker which directories cannot hold a match, so they are never opened.

`*` and `?` never cross a `/`; `*` matches a leading dot (hidden entries are filtered
elsewhere). Invalid globs are refused with the reasons ripgrep's globset gives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Iterable

import bracex
from wcmatch import glob as wcglob

from chorus_tools.tools.errors import ToolError

NONE, IGNORE, WHITELIST = 0, 1, 2  # the verdict of a rule set on one path

_FLAGS = wcglob.GLOBSTAR | wcglob.DOTGLOB | wcglob.BRACE
_COMPONENT_FLAGS = wcglob.DOTGLOB  # braces are expanded before components are split
# A glob's {a,b} groups are expanded into that many alternatives before matching (ten
# groups of two make 1,024): past this, the glob is refused as invalid_pattern rather
# than grow without bound (wcmatch's own default limit, named here so it is said).
MAX_BRACE_EXPANSIONS = 1000
# {..} groups nested deeper are refused: ripgrep's regex parser refuses past about 124
# levels, and expanding them recursed past Python's stack (internal_error)
MAX_BRACE_DEPTH = 100


class GlobError(ValueError):
    """A glob that does not compile; the message is the reason."""


def invalid_pattern(exc: GlobError, param: str) -> ToolError:
    """The invalid_pattern error for a glob parameter, with the reason."""
    return ToolError("invalid_pattern", f"Invalid glob in '{param}': {exc}. Fix or escape "
                     "it: * ? [..] {a,b} ** are special, '\\' escapes.",
                     param=param, reason=str(exc))


def check_glob(pattern: str) -> None:
    """Refuse what ripgrep's globset refuses, so both engines accept the same globs."""
    depth = 0
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 == n:
                raise GlobError(f"dangling '\\' at the end of glob {pattern!r}")
            i += 2
            continue
        if c == "[":
            i = _class_end(pattern, i)
            continue
        if c == "{":
            depth += 1
            if depth > MAX_BRACE_DEPTH:
                raise GlobError(f"glob {pattern[:80]!r}... nests {{..}} groups more than "
                                f"{MAX_BRACE_DEPTH} deep; flatten them, or give several "
                                "globs")
        elif c == "}":
            if depth == 0:
                raise GlobError(f"unopened alternate group in glob {pattern!r}: missing "
                                "'{' (escape '}' as '[}]')")
            depth -= 1
        i += 1
    if depth:
        raise GlobError(f"unclosed alternate group in glob {pattern!r}: missing '}}' "
                        "(escape '{' as '[{]')")
    if "{" in pattern:
        _check_expansions(pattern)


def _check_expansions(pattern: str) -> None:
    """Refuse a glob whose {..} groups expand to more than MAX_BRACE_EXPANSIONS
    alternatives (counted lazily: it stops at the first one past the limit)."""
    try:
        for _ in bracex.iexpand(pattern, keep_escapes=True, limit=MAX_BRACE_EXPANSIONS):
            pass
    except bracex.ExpansionLimitException:
        raise GlobError(f"glob {pattern!r} expands to more than {MAX_BRACE_EXPANSIONS:,} "
                        "alternatives through its {..} groups; use fewer groups, or "
                        "several shorter globs") from None


def _class_end(pattern: str, start: int) -> int:
    """Index after the character class opening at `start`, checking its ranges."""
    i = start + 1
    if i < len(pattern) and pattern[i] in "!^":
        i += 1
    first = True
    chars: list[str] = []
    while i < len(pattern):
        c = pattern[i]
        if c == "]" and not first:
            _check_ranges(pattern, chars)
            return i + 1
        if c == "\\" and i + 1 < len(pattern):
            i += 1
            c = pattern[i]
        chars.append(c)
        first = False
        i += 1
    raise GlobError(f"unclosed character class in glob {pattern!r}: missing ']'")


def _check_ranges(pattern: str, chars: list[str]) -> None:
    for k in range(1, len(chars) - 1):
        if chars[k] == "-" and chars[k - 1] > chars[k + 1]:
            raise GlobError(f"invalid range in glob {pattern!r}: "
                            f"{chars[k - 1]!r} > {chars[k + 1]!r}")


def literal_tail(pattern: str) -> str:
    """The text every path a glob matches ends with: its trailing run of characters that
    are never special ('' when it ends in one that is). `path.endswith(tail)` is a test
    far cheaper than the regex, which profiling showed to dominate a walk."""
    i = len(pattern)
    while i and (pattern[i - 1].isalnum() or pattern[i - 1] in "._-"):
        i -= 1
    return pattern[i:]


def glob_regex(pattern: str) -> str:
    """The regex (to be fullmatched against a '/'-separated path) of a checked glob."""
    check_glob(pattern)
    parts = wcglob.translate(pattern, flags=_FLAGS)[0]
    return "|".join(f"(?:{p})" for p in parts)


@dataclass(frozen=True)
class Rule:
    """One gitignore-format line: a path regex, its polarity, and whether only
    directories can match it."""

    regex: re.Pattern[str]
    whitelist: bool
    dir_only: bool
    name_only: bool = False  # matched against the last component alone (it has no '/')
    tail: str = ""  # what every match ends with (literal_tail), tested before the regex


def gitignore_rule(line: str) -> Rule | None:
    """One ignore-file line, read as ripgrep reads it (None for blanks and comments).

    Trailing spaces drop unless escaped; `\\!`/`\\#` are literal; `!` negates; a leading
    `/` anchors; a trailing `/` matches directories only; a glob with no other `/` matches
    at any depth; `dir/**` matches what is inside dir, not dir itself."""
    if line.startswith("#"):
        return None
    if not line.endswith("\\ "):
        line = line.rstrip()
    if not line:
        return None
    whitelist = False
    if line.startswith(("\\!", "\\#")):
        line = line[1:]
    elif line.startswith("!"):
        whitelist, line = True, line[1:]
    anchored = line.startswith("/")
    if anchored:
        line = line[1:]
    dir_only = line.endswith("/")
    if dir_only:
        line = line[:-1]
    if not line:
        return None
    if not anchored and "/" not in line:
        # '**/name' at any depth is the name alone: a cheaper match than the whole path
        return Rule(re.compile(glob_regex(line)), whitelist, dir_only, name_only=True,
                    tail=literal_tail(line))
    if line.endswith("/**"):
        line += "/*"
    return Rule(re.compile(glob_regex(line)), whitelist, dir_only, tail=literal_tail(line))


class RuleSet:
    """Rules where the last one matching a path decides (gitignore's rule)."""

    def __init__(self, rules: Iterable[Rule]) -> None:
        self.rules = tuple(rules)
        names = [r for r in self.rules if r.name_only]
        paths = [r for r in self.rules if not r.name_only]
        self._any_name, self._name_tails = _any_of(names), tuple(r.tail for r in names)
        self._any_path, self._path_tails = _any_of(paths), tuple(r.tail for r in paths)
        self.tails = frozenset(r.tail for r in self.rules)  # a match ends with one of them

    def match(self, path: str, is_dir: bool) -> int:
        """NONE, IGNORE or WHITELIST for `path` (relative to the rules' directory)."""
        name = path.rpartition("/")[2]
        if not (name.endswith(self._name_tails) and self._any_name.fullmatch(name)) and not (
                path.endswith(self._path_tails) and self._any_path.fullmatch(path)):
            return NONE
        for rule in reversed(self.rules):
            target = name if rule.name_only else path
            if ((is_dir or not rule.dir_only) and target.endswith(rule.tail)
                    and rule.regex.fullmatch(target)):
                return WHITELIST if rule.whitelist else IGNORE
        return NONE


def _any_of(rules: list[Rule]) -> re.Pattern[str]:
    """One regex that fullmatches what any of the rules does (a quick first test)."""
    return re.compile("|".join(f"(?:{r.regex.pattern})" for r in rules) or "(?!)")


class SearchGlobs:
    """file.search's globs with ripgrep's `--glob` rules: a glob includes, a leading `!`
    excludes, a glob without `/` matches the name at any depth, the last matching glob
    wins, and when any including glob exists a file that matches none is excluded.

    A match overrides hidden and ignore rules (ripgrep: "this always overrides any other
    ignore logic"). Paths are workspace-relative, as ripgrep run at the workspace root
    sees them."""

    def __init__(self, globs: Iterable[str]) -> None:
        rules = []
        for glob in globs:
            rule = gitignore_rule(glob)
            if rule is not None:
                rules.append(replace(rule, whitelist=not rule.whitelist))
            elif glob.strip() and not glob.startswith("#"):  # '!', '/', '!/': no name left
                raise GlobError(f"glob {glob!r} names no path: put a glob after its '!' or "
                                "'/' (e.g. '!*.log')")
        self._rules = RuleSet(rules)
        self._has_include = any(r.whitelist for r in rules)

    def match(self, path: str, is_dir: bool) -> int:
        verdict = self._rules.match(path, is_dir)
        if verdict == NONE and self._has_include and not is_dir:
            return IGNORE
        return verdict


class ListPattern:
    """file.list's `pattern`: a glob relative to the listed directory (`*.py` only in the
    directory itself, `**` across directories); a trailing `/` matches directories only,
    as in an ignore file or a shell."""

    def __init__(self, pattern: str) -> None:
        self.dir_only = pattern.endswith("/") and pattern.strip("/") != ""
        if self.dir_only:
            pattern = pattern.rstrip("/")
        self.regex = re.compile(glob_regex(pattern))
        name = pattern[3:] if pattern.startswith("**/") else ""
        self._name_only = bool(name) and "/" not in name and "**" not in name
        if self._name_only:  # '**/name': the name at any depth, a cheaper match
            self.regex = re.compile(glob_regex(name))
        self._tail = literal_tail(pattern)
        self._prefixes = [_component_prefix(alt) for alt in _alternatives(pattern)]

    def matches(self, rel: str, is_dir: bool = False) -> bool:
        """Whether a path relative to the listed directory matches."""
        if self.dir_only and not is_dir:
            return False
        return rel.endswith(self._tail) and self.regex.fullmatch(
            rel.rpartition("/")[2] if self._name_only else rel) is not None

    def may_descend(self, rel_dir: str) -> bool:
        """False when nothing beneath `rel_dir` (relative to the listed directory) can
        match, so the walker need not open it."""
        names = rel_dir.split("/")
        return any(_prefix_allows(prefix, names) for prefix in self._prefixes)


def _alternatives(pattern: str) -> list[str]:
    try:
        return bracex.expand(pattern, keep_escapes=True, limit=1000)
    except (ValueError, RuntimeError):  # too many alternatives to prune by: never prune
        return ["**"]


def _component_prefix(pattern: str) -> list[re.Pattern[str] | None]:
    """Compiled components before the first `**` (None in the list marks `**`)."""
    out: list[re.Pattern[str] | None] = []
    for comp in pattern.split("/"):
        if "**" in comp:
            out.append(None)
            break
        out.append(re.compile("|".join(
            f"(?:{p})" for p in wcglob.translate(comp, flags=_COMPONENT_FLAGS)[0])))
    return out


def _prefix_allows(prefix: list[re.Pattern[str] | None], names: list[str]) -> bool:
    """Whether a path below the directory `names` can match the component prefix."""
    for i, name in enumerate(names):
        if i >= len(prefix):
            return False
        comp = prefix[i]
        if comp is None:
            return True
        if i == len(prefix) - 1 or not comp.fullmatch(name):
            return False  # the last component names an entry, never a parent of one
    return True


_GLOB_SPECIAL = frozenset("*?[]{}\\!")


def beneath(rel: str, globs: list[str]) -> list[str]:
    """file.search's globs for a search of directory `rel`: one holding a `/` (other than a
    trailing one) is matched relative to `rel`, as if ripgrep ran inside it
    (docs/protocol.md, file.search), so it is anchored beneath `rel` (escaped) for the
    engines, which match workspace-relative paths; a glob without `/` matches names."""
    if rel in ("", ".", "./"):
        return globs
    prefix = "".join("\\" + c if c in _GLOB_SPECIAL else c for c in rel.rstrip("/")) + "/"
    out = []
    for glob in globs:
        negated = glob.startswith("!")
        body = glob[1:] if negated else glob
        if "/" in body.rstrip("/"):
            body = prefix + body.lstrip("/")
        out.append("!" + body if negated else body)
    return out
