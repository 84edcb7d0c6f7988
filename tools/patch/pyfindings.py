"""pyflakes run on a tree, and the problems it reports that diagnostics keep
(docs/protocol.md, Diagnostics): F821, F822, F823, F632 and F811. The whole-module check
(tools.patch.pyproblems) and the check of the function bodies an edit changed
(tools.patch.pyincremental) both run it, so both keep the same messages the same way.
"""

from __future__ import annotations

import ast
import gc
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from chorus_tools.tools.code.bounds import Budget, Skipped

# pyflakes recurses once a node: a 500-term sum is ~1000 frames deep, past Python's
# default limit. Whatever CPython's compiler accepts (it refuses ~3000 terms, which then
# never reach here) fits in this many frames of pure Python calls, which use no C stack
_DEPTH = 12_000


@dataclass(frozen=True)
class Finding:
    """One problem: 1-based line and column, its code, the message shown, and `key`, the
    message without line numbers that only say where something else is (so a problem that
    moved compares equal)."""

    line: int
    column: int
    code: str
    message: str
    key: str

    def reply(self, introduced: bool) -> dict[str, Any]:
        return {"line": self.line, "column": self.column, "code": self.code,
                "message": self.message, "introduced": introduced}


@dataclass(frozen=True)
class Checked:
    """What one check of a text gives: its problems in file order, the names it defines
    at its top level (`top_level_names`), from the same parse, for broken_imports, and
    what the next edit's check needs to look only at what it changed
    (tools.patch.pyincremental.Statements; None: that edit is checked whole)."""

    found: list[Finding]
    names: set[str] | None
    statements: Any = None


@dataclass
class Run:
    """One pyflakes run: the findings kept, each with whether it was reported after the
    module-level pass (`late`: in a function body, a deferred annotation, or the final
    look at the scopes), and what the incremental check needs of the run."""

    found: list[tuple[Finding, bool]] = field(default_factory=list)
    # every scope, the module's last (a seeded run leaves it out: nothing of it is kept)
    scopes: list[Any] = field(default_factory=list)
    saw_global: bool = False  # a `global` or `nonlocal` statement (it reaches other scopes)
    starred: bool = False  # a star import (then no F821 is kept)
    builtins: frozenset[str] = frozenset()  # the names pyflakes knows as builtins


def by_place(found: list[Finding]) -> list[Finding]:
    """Findings in file order, ties broken by code and message so that every way of
    finding the same problems lists them alike."""
    return sorted(found, key=lambda f: (f.line, f.column, f.code, f.message))


def run(tree: ast.Module, budget: Budget, seed: Any = None, path: str = "<checked>") -> Run:
    """pyflakes on `tree`, the module at workspace path `path` (a package's `__init__.py`
    may read `__path__`); `seed(checker)`, when given, is called at each Seed statement
    of the tree, to give the module scope bindings. Skipped past the budget."""
    from pyflakes import messages
    bounded, seeded = _checkers()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, _DEPTH))
    try:
        result = bounded(tree, budget, path) if seed is None else seeded(tree, budget, path,
                                                                         seed)
    finally:
        sys.setrecursionlimit(limit)
    reported = result.messages
    late_from = len(reported) if result.late_from is None else result.late_from
    done = Run(saw_global=result.saw_global, scopes=result.deadScopes,
               builtins=frozenset(result.builtIns),
               starred=any(isinstance(m, messages.ImportStarUsed) for m in reported))
    for i, m in enumerate(reported):
        named = _named(messages, m, done.starred)
        if named is not None:
            done.found.append((Finding(m.lineno, (m.col or 0) + 1, *named), i >= late_from))
    return done


@cache  # made once: pyflakes is imported when first needed (a missing one is Skipped)
def _checkers() -> tuple[Any, Any]:
    from pyflakes import checker

    class Bounded(checker.Checker):  # type: ignore[misc, valid-type]
        """pyflakes, looking at the clock before each function body it walks (a wrapper
        on every node doubled its cost), noting where the module-level pass ended
        (`late_from`, a count of messages) and any `global` or `nonlocal` statement."""

        def __init__(self, tree: ast.Module, budget: Budget, path: str) -> None:
            self.budget, self.late_from, self.saw_global = budget, None, False
            super().__init__(tree, filename=path, withDoctest=False)

        def deferFunction(self, callable: Any) -> None:  # noqa: N802 (pyflakes' name)
            def bounded() -> None:
                if self.late_from is None:
                    self.late_from = len(self.messages)
                self.budget.check()
                callable()
            super().deferFunction(bounded)

        def GLOBAL(self, node: Any) -> None:  # noqa: N802
            self.saw_global = True
            super().GLOBAL(node)

        NONLOCAL = GLOBAL

    class Seeded(Bounded):
        """A run whose module scope `seed` fills: each builtin set at the start without
        pyflakes' comparisons (nothing is bound yet), the names the module-level pass
        binds noted (`bound`), and the module scope not looked at in the end (it holds
        only what was given it)."""

        def __init__(self, tree: ast.Module, budget: Budget, path: str, seed: Any) -> None:
            self.seed, self.seeded, self.bound = seed, 0, set()
            super().__init__(tree, budget, path)

        def addBinding(self, node: Any, value: Any) -> None:  # noqa: N802
            if node is None:
                self.scopeStack[-1][value.name] = value
                return
            if len(self.scopeStack) == 1:
                self.bound.add(value.name)
            super().addBinding(node, value)

        def SEED(self, node: ast.AST) -> None:  # noqa: N802
            self.seeded += 1  # the Seed statements met so far
            self.seed(self)

        def checkDeadScopes(self) -> None:  # noqa: N802
            self.deadScopes.pop()
            super().checkDeadScopes()

    return Bounded, Seeded


class Seed(ast.stmt):
    """A statement only the seeded run knows: where it meets it, `run`'s `seed` gives
    the module scope its bindings."""

    _fields = ()


@contextmanager
def guarded() -> Iterator[None]:
    """Around a parse and a pyflakes run: SyntaxWarnings silenced (they belong nowhere:
    issue 45), the collector paused; too deep or a checker that crashes is Skipped, never
    an error of the edit."""
    try:
        with warnings.catch_warnings(), _paused_gc():
            warnings.simplefilter("ignore")
            yield
    except Skipped:
        raise
    except (RecursionError, MemoryError):
        raise Skipped("nested deeper than the checker goes", "depth", 0) from None
    except Exception as exc:  # a checker that crashes changes no edit's outcome
        raise Skipped(f"the checker failed: {type(exc).__name__}", "checker", 0) from None


@contextmanager
def _paused_gc() -> Iterator[None]:
    """The cyclic collector off while a tree is built and walked: a 200 KiB module is
    ~300k new objects, none of them garbage yet, and the collections their allocation
    sets off took half of the parse's time (measured: 316 ms with it, 108 ms without)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _named(messages: Any, m: Any, starred: bool) -> tuple[str, str, str] | None:
    """(code, message shown, key) of a pyflakes message kept; None for the rest."""
    args = m.message_args
    if isinstance(m, messages.UndefinedName) and not starred:
        text = f"undefined name {args[0]!r}"
        return "F821", text, text
    if isinstance(m, messages.UndefinedExport):
        text = f"undefined name {args[0]!r} in __all__"
        return "F822", text, text
    if isinstance(m, messages.UndefinedLocal):
        text = f"local variable {args[0]!r} referenced before assignment"
        return "F823", text, text
    if isinstance(m, messages.IsLiteral):
        text = "use ==/!= to compare constant literals (str, bytes, int, float, tuple)"
        return "F632", text, text
    if isinstance(m, messages.RedefinedWhileUnused):
        key = f"redefinition of unused {args[0]!r}"
        return "F811", f"{key} from line {args[1]}", key
    return None
