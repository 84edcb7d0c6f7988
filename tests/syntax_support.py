"""The syntax guard's verdict on a change, for tests that check an edit's result parses
no worse than the file did (tools/patch/diagnostics.py's Judge, default bounds)."""

from __future__ import annotations

from chorus_tools.tools.patch.diagnostics import Judge
from chorus_tools.tools.patch.syntax import Problem


def broken(path: str, before: str, after: str) -> Problem | None:
    """The first syntax error `after` has that `before` did not, or None."""
    return Judge(path, before or after).guard(before, after, "the change")
