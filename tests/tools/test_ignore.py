"""Ignore files: which are read, their precedence, and that nothing outside is read."""

from __future__ import annotations

import os
from pathlib import Path

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.walk.globs import IGNORE, NONE, WHITELIST
from chorus_tools.tools.walk.ignore import IgnoreStack, load_dir_rules, parse_ignore, stack_above


def test_last_matching_line_wins() -> None:
    rules = parse_ignore("*.log\n!keep.log\n")
    assert rules.match("a.log", False) == IGNORE
    assert rules.match("sub/keep.log", False) == WHITELIST
    assert rules.match("a.txt", False) == NONE


def test_directory_only_rules_skip_files() -> None:
    rules = parse_ignore("build/\n")
    assert rules.match("build", True) == IGNORE
    assert rules.match("build", False) == NONE


def test_bom_crlf_and_invalid_lines() -> None:
    rules = parse_ignore("\ufeff*.tmp\r\n[broken\r\nok.txt\r\n")
    assert rules.match("x.tmp", False) == IGNORE
    assert rules.match("ok.txt", False) == IGNORE
    assert len(rules.rules) == 2  # the line ripgrep cannot compile is skipped


def test_deeper_directory_decides_within_a_kind() -> None:
    stack = IgnoreStack().child("", {".gitignore": parse_ignore("*.log\n")})
    stack = stack.child("sub", {".gitignore": parse_ignore("!b.log\n")})
    assert stack.match("sub/b.log", False) == WHITELIST
    assert stack.match("sub/c.log", False) == IGNORE
    assert stack.match("b.log", False) == IGNORE


def test_ignore_beats_gitignore_wherever_they_lie() -> None:
    stack = IgnoreStack().child("", {".ignore": parse_ignore("*.txt\n")})
    stack = stack.child("x", {".gitignore": parse_ignore("!keep.txt\n")})
    assert stack.match("x/keep.txt", False) == IGNORE  # as ripgrep: .ignore wins
    stack = stack.child("x/y", {".rgignore": parse_ignore("!keep.txt\n")})
    assert stack.match("x/y/keep.txt", False) == WHITELIST


def test_rules_are_relative_to_their_directory() -> None:
    stack = IgnoreStack().child("sub", {".gitignore": parse_ignore("/only\n")})
    assert stack.match("sub/only", False) == IGNORE
    assert stack.match("sub/deeper/only", False) == NONE


def test_load_reads_the_three_kinds(ctx: ToolContext, root: Path) -> None:
    (root / ".gitignore").write_text("a\n")
    (root / ".ignore").write_text("b\n")
    (root / ".rgignore").write_text("c\n")
    (root / ".empty").mkdir()
    assert sorted(load_dir_rules(ctx, "")) == [".gitignore", ".ignore", ".rgignore"]


def test_unreadable_or_escaping_ignore_files_are_skipped(ctx: ToolContext, root: Path,
                                                         outside: Path) -> None:
    (outside / "rules").write_text("*\n")
    (root / ".gitignore").symlink_to(outside / "rules")
    os.mkfifo(root / ".ignore")
    assert load_dir_rules(ctx, "") == {}


def test_stack_above_reads_workspace_ancestors_only(ctx: ToolContext, root: Path) -> None:
    (root.parent / ".gitignore").write_text("*\n")  # above the workspace: never read
    (root / "a" / "b").mkdir(parents=True)
    (root / ".gitignore").write_text("*.log\n")
    (root / "a" / ".ignore").write_text("*.tmp\n")
    (root / "a" / "b" / ".gitignore").write_text("*.md\n")  # the start itself: not above
    stack = stack_above(ctx, "a/b")
    assert stack.match("a/b/x.log", False) == IGNORE
    assert stack.match("a/b/x.tmp", False) == IGNORE
    assert stack.match("a/b/x.md", False) == NONE
    assert stack.match("a/b/x.py", False) == NONE
    assert not stack_above(ctx, ".")
