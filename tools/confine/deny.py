"""`--deny GLOB` rules: paths no method may touch and no listing, search or watch shows.

A glob reads as ripgrep's `--glob` does (and so as file.search's `glob`): without a `/` it
matches the name at any depth (`*.pem`, `.env`), with one it is anchored at the
workspace root (`.git/**`, `config/secrets.yml`), and `**/` spans directories. A path is
denied when it or any directory above it matches, so denying a directory denies its whole
tree. Rules are matched on workspace-relative paths after symlinks resolve: the callers
(tools.sandbox.Workspace, tools.policy) pass the path an access really reaches.
"""

from __future__ import annotations

from typing import Iterable

from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.globs import IGNORE, GlobError, RuleSet, gitignore_rule


class DenyRules:
    def __init__(self, globs: Iterable[str] = ()) -> None:
        """Compile the globs; GlobError names one that does not compile."""
        self.globs = tuple(globs)
        rules = []
        for glob in self.globs:
            if glob.startswith("!"):
                raise GlobError(f"{glob!r}: a deny rule cannot start with '!' (it only "
                                "denies; leave out what should stay reachable)")
            rule = gitignore_rule(glob)
            if rule is None:
                raise GlobError(f"{glob!r} is empty or a comment")
            rules.append(rule)
        self._rules = RuleSet(rules)

    def __bool__(self) -> bool:
        return bool(self.globs)

    def matches(self, rel: str) -> bool:
        """Whether this path itself matches a rule (its ancestors already checked, as a
        walk that never enters a denied directory knows)."""
        return bool(self.globs) and rel not in ("", ".") and \
            self._rules.match(rel, True) == IGNORE  # dir-only rules deny a file too

    def denies(self, rel: str) -> bool:
        """Whether the workspace-relative `rel`, or a directory above it, is denied."""
        if not self.globs or rel in ("", "."):
            return False
        parts = rel.split("/")
        return any(self._rules.match("/".join(parts[:i]), True) == IGNORE
                   for i in range(1, len(parts) + 1))

    def all_in_rg(self) -> bool:
        """Whether ripgrep's excludes hold every rule (no post-check needed)."""
        return len(self.rg_excludes()) == len(self.globs)

    def rg_excludes(self) -> list[str]:
        """ripgrep `--glob` excludes for the rules it reads the same way wherever the
        search starts (those not anchored at the root); the rest is the post-check's."""
        return [f"--glob=!{g}" for g in self.globs
                if "/" not in g.rstrip("/") or (g.startswith("**/")
                                                and "/" not in g[3:].rstrip("/"))]


def denied(shown: str) -> ToolError:
    return ToolError("permission_denied",
                     f"Access denied: {shown} matches the server's --deny rules. It cannot "
                     "be read, written, listed or searched; leave it alone.", path=shown,
                     reason="deny")


def read_only() -> ToolError:
    return ToolError("permission_denied",
                     "Permission denied: the workspace is read-only (the server runs with "
                     "--read-only). Only reading, listing, searching and watching work.",
                     reason="read_only")
