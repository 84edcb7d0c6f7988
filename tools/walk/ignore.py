"""Ignore files as ripgrep reads them with `--no-require-git`, confined to the workspace.

Read in every directory walked and in the workspace directories above the walk's start:
`.rgignore`, `.ignore` and `.gitignore` (whether or not a `.git` exists). Not read: git's
global excludes and `.git/info/exclude` (they live outside the tree an agent sees), and
nothing above the workspace root.

Precedence, as in ripgrep's `ignore` crate: within one file the last matching line wins;
for each kind of file the deepest directory with a matching line decides; and a decision of
`.rgignore` beats one of `.ignore`, which beats one of `.gitignore`, wherever they lie.
"""

from __future__ import annotations

import os
from typing import Callable, Iterable

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.globs import NONE, GlobError, RuleSet, gitignore_rule

IGNORE_FILES = (".rgignore", ".ignore", ".gitignore")  # highest precedence first
MAX_IGNORE_FILE_BYTES = 4 * 1024 * 1024


def parse_ignore(text: str) -> RuleSet:
    """The rules of one ignore file; a line whose glob does not compile is skipped, as
    ripgrep skips it."""
    rules = []
    for line in text.removeprefix("\ufeff").split("\n"):
        try:
            rule = gitignore_rule(line)
        except GlobError:
            continue
        if rule is not None:
            rules.append(rule)
    return RuleSet(rules)


def read_ignore_file(ctx: ToolContext, rel: str) -> RuleSet | None:
    """The rules in the ignore file at `rel`, or None when it cannot be read as a regular
    file inside the workspace (a FIFO, a symlink leading out, a race)."""
    try:
        fd, _ = ctx.ws.open_regular(rel)
    except ToolError:
        return None
    try:
        data = os.read(fd, MAX_IGNORE_FILE_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    return parse_ignore(data.decode("utf-8", "surrogateescape"))


class IgnoreStack:
    """The ignore rules in force in one directory: its own files and its ancestors'."""

    def __init__(self, layers: tuple[tuple[int, int, str, RuleSet], ...] = ()) -> None:
        self._layers = layers  # (kind rank, -depth, directory, rules), in lookup order
        self._tails = tuple({tail for *_, rules in layers for tail in rules.tails})

    def child(self, dir_rel: str, found: dict[str, RuleSet]) -> IgnoreStack:
        """The stack for directory `dir_rel` ('' for the root) holding the ignore files
        `found` there (name -> rules); self when it has none."""
        if not found:
            return self
        depth = 0 if not dir_rel else dir_rel.count("/") + 1
        new = [(IGNORE_FILES.index(name), -depth, dir_rel, rules)
               for name, rules in found.items()]
        return IgnoreStack(tuple(sorted(self._layers + tuple(new),
                                        key=lambda layer: layer[:2])))

    def __bool__(self) -> bool:
        return bool(self._layers)

    def suspects(self, names: Iterable[str]) -> set[str]:
        """The names, among one directory's entries, that a rule may match: `match` is
        NONE for every other (a rule matches only paths ending with its literal tail,
        which holds no '/'), found by one cheap test per name."""
        tails = self._tails
        return {name for name in names if name.endswith(tails)}

    def match(self, path: str, is_dir: bool) -> int:
        """NONE, IGNORE or WHITELIST for a workspace-relative path beneath every layer."""
        for _, _, base, rules in self._layers:
            verdict = rules.match(path[len(base) + 1:] if base else path, is_dir)
            if verdict != NONE:
                return verdict
        return NONE


def load_dir_rules(ctx: ToolContext, dir_rel: str,
                   names: set[str] | frozenset[str] | None = None) -> dict[str, RuleSet]:
    """The ignore files of directory `dir_rel` ('' for the root), read and parsed.
    `names`, the directory's entries when already listed, spares looking for absent ones."""
    found = {}
    for name in IGNORE_FILES:
        if names is None or name in names:
            rules = read_ignore_file(ctx, f"{dir_rel}/{name}" if dir_rel else name)
            if rules is not None and rules.rules:
                found[name] = rules
    return found


def stack_above(ctx: ToolContext, rel: str,
                load: Callable[[ToolContext, str], dict[str, RuleSet]] = load_dir_rules
                ) -> IgnoreStack:
    """The rules from the workspace directories strictly above `rel` (lexically), each
    directory's as `load` reads them (the disk's, or the warm tree's)."""
    stack = IgnoreStack()
    if rel in ("", "."):
        return stack
    parts = rel.split("/")
    for i in range(len(parts)):
        dir_rel = "/".join(parts[:i])
        stack = stack.child(dir_rel, load(ctx, dir_rel))
    return stack
