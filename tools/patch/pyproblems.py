"""The problems of a Python text that parses (docs/protocol.md, Diagnostics): pyflakes'
F821, F822, F823, F632 and F811 (tools.patch.pyfindings), and our I001 (a relative import
naming no module of the workspace, or a name its module does not define at its top level:
tools.patch.pyimports).

pyflakes runs in-process on the text's `ast`: measured against ruff's binary (a spawn per
check, `ruff check --select F821,... -`) on this machine, pyflakes costs 1.7 ms on a 3 KiB
module against ruff's 5.1 ms, and 56 ms on 120 KiB against ruff's 8 ms; an edit usually
touches a small file, one checker gives one set of messages (so "introduced" compares like
with like), and no binary can be missing or print garbage. Its walk looks at the call's
clock before each function body, so --syntax-timeout bounds it. Nothing else it reports
(unused imports and variables, style) is kept: that noise sends agents into loops. A
text checked whole keeps what the next edit needs to check only the function bodies it
changes (tools.patch.pyincremental).
"""

from __future__ import annotations

import ast
from dataclasses import replace

from chorus_tools.tools.code.bounds import Budget, Skipped
from chorus_tools.tools.patch import pyincremental
from chorus_tools.tools.patch.pyfindings import Checked, Finding, by_place, guarded, run
from chorus_tools.tools.patch.pyimports import (MAY_IMPORT_RELATIVELY, Modules, names_of,
                                                relative_imports, top_level_names,
                                                workspace_modules)

__all__ = ["Checked", "Finding", "Modules", "findings", "imports_again", "preload",
           "top_level_names", "workspace_modules"]


def findings(path: str, text: str, budget: Budget, modules: Modules | None) -> Checked:
    """The problems of `text` (a Python module that compiles) at `path`, in file order,
    its top-level names, and what the next edit needs to check only what it changes;
    Skipped past the budget, or when the checker cannot judge the text. The text is
    parsed once, for the checker, I001 and the names."""
    try:
        import pyflakes  # noqa: F401
    except ImportError:
        raise Skipped("the checker (pyflakes) is not installed", "checker", 0) from None
    with guarded():
        tree = ast.parse(text)
        done = run(tree, budget, path=path)
        names = names_of(tree)
        statements = pyincremental.record(text, tree, done)
    found = [f for f, _ in done.found]
    if modules is not None and MAY_IMPORT_RELATIVELY.search(text):
        found += relative_imports(path, tree, modules, budget)
    return Checked(by_place(found), names, statements)


def imports_again(path: str, text: str, checked: Checked, budget: Budget,
                  modules: Modules) -> Checked:
    """`checked`, a kept check of `text`, with its I001 found again: the other modules
    may have changed since it was made, and a verdict on them is never reused."""
    if not MAY_IMPORT_RELATIVELY.search(text):
        return checked
    kept = checked.statements
    with guarded():
        if isinstance(kept, pyincremental.Statements):  # its statements: parse only those
            again = pyincremental.relative_again(path, text, kept.starts, modules, budget)
        else:
            again = relative_imports(path, ast.parse(text), modules, budget)
    found = [f for f in checked.found if f.code != "I001"]
    return replace(checked, found=by_place(found + again))


def preload() -> None:
    """Import the checker now (before a privilege drop or a worker's Landlock domain);
    a missing one is said per check, as `skipped`."""
    try:
        from pyflakes import checker, messages  # noqa: F401
    except ImportError:
        pass
