"""The problems of a Python text that parses (docs/protocol.md, Diagnostics): pyflakes'
F821, F822, F823, F632 and F811, and our I001 (a relative import naming no module of the
workspace, or a name its module does not define at its top level).

pyflakes runs in-process on the text's `ast`: measured against ruff's binary (a spawn per
check, `ruff check --select F821,... -`) on this machine, pyflakes costs 1.7 ms on a 3 KiB
module against ruff's 5.1 ms, and 56 ms on 120 KiB against ruff's 8 ms; an edit usually
touches a small file, one checker gives one set of messages (so "introduced" compares like
with like), and no binary can be missing or print garbage. Its walk looks at the call's
clock before each function body, so --syntax-timeout bounds it. Nothing else it reports
(unused imports and variables, style) is kept: that noise sends agents into loops.
"""

from __future__ import annotations

import ast
import posixpath
import stat
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
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


# reads a workspace file's bytes (None: no such regular file), and says whether a
# workspace path is a directory: how I001 sees the other modules
Reader = Callable[[str], "bytes | None"]
IsDir = Callable[[str], bool]


@dataclass(frozen=True)
class Modules:
    """The workspace as I001 sees it."""

    read: Reader
    is_dir: IsDir


def findings(path: str, text: str, budget: Budget, modules: Modules | None) -> list[Finding]:
    """The problems of `text` (a Python module that compiles) at `path`, in file order;
    Skipped past the budget, or when the checker cannot judge the text."""
    try:
        from pyflakes import checker, messages
    except ImportError:
        raise Skipped("the checker (pyflakes) is not installed", "checker", 0) from None
    limit = sys.getrecursionlimit()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings belong nowhere (issue 45)
            tree = ast.parse(text)
            sys.setrecursionlimit(max(limit, _DEPTH))
            found = _pyflakes(checker, messages, tree, budget)
    except Skipped:
        raise
    except (RecursionError, MemoryError):
        raise Skipped("nested deeper than the checker goes", "depth", 0) from None
    except Exception as exc:  # a checker that crashes changes no edit's outcome
        raise Skipped(f"the checker failed: {type(exc).__name__}", "checker", 0) from None
    finally:
        sys.setrecursionlimit(limit)
    if modules is not None:
        found += _relative_imports(path, tree, modules, budget)
    found.sort(key=lambda f: (f.line, f.column))
    return found


def preload() -> None:
    """Import the checker now (before a privilege drop or a worker's Landlock domain);
    a missing one is said per check, as `skipped`."""
    try:
        from pyflakes import checker, messages  # noqa: F401
    except ImportError:
        pass


def _pyflakes(checker: Any, messages: Any, tree: ast.Module, budget: Budget) -> list[Finding]:
    class Bounded(checker.Checker):
        """pyflakes, looking at the clock before each function body it walks (a wrapper
        on every node doubled its cost)."""

        def deferFunction(self, callable: Any) -> None:  # noqa: N802 (pyflakes' name)
            def bounded() -> None:
                budget.check()
                callable()
            super().deferFunction(bounded)

    result = Bounded(tree, filename="<checked>", withDoctest=False).messages
    starred = any(isinstance(m, messages.ImportStarUsed) for m in result)
    found = []
    for m in result:
        named = _named(messages, m, starred)
        if named is not None:
            found.append(Finding(m.lineno, (m.col or 0) + 1, *named))
    return found


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


def _relative_imports(path: str, tree: ast.Module, modules: Modules,
                      budget: Budget) -> list[Finding]:
    """I001: each relative import of `tree` (a module at workspace path `path`) that names
    no module or package of the workspace, or a name its module does not define."""
    found = []
    defined: dict[str, set[str] | None] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or not node.level:
            continue
        budget.check()
        base = posixpath.dirname(path)
        for _ in range(node.level - 1):
            if not base:
                break
            base = posixpath.dirname(base)
        else:
            found += _resolve(node, base, modules, defined)
            continue
        dots = "." * node.level
        found.append(_i001(node, f"relative import '{dots}{node.module or ''}' goes above "
                                 "the workspace"))
    return found


def _resolve(node: ast.ImportFrom, base: str, modules: Modules,
             defined: dict[str, set[str] | None]) -> list[Finding]:
    dots = "." * node.level
    target = posixpath.join(base, *node.module.split(".")) if node.module else base
    if node.module:
        source = _module_file(target, modules)
        if source is None and not modules.is_dir(target):
            return [_i001(node, f"no module '{dots}{node.module}' in the workspace")]
    else:
        source = _module_file(target, modules, package_only=True)
    names = set() if source is None else _top_level(source, modules, defined)
    found = []
    for alias in node.names:
        if alias.name == "*" or names is None or alias.name in names:
            continue
        sub = posixpath.join(target, alias.name)
        if _module_file(sub, modules) is None and not modules.is_dir(sub):
            where = f"'{dots}{node.module}'" if node.module else f"package '{dots}'"
            found.append(_i001(node, f"{where} does not define '{alias.name}'"))
    return found


def _module_file(target: str, modules: Modules, package_only: bool = False) -> str | None:
    """The file that is module `target` (a workspace path without suffix), if any."""
    for candidate in ((() if package_only else (f"{target}.py",))
                      + (posixpath.join(target, "__init__.py"),)):
        if modules.read(candidate) is not None:
            return candidate
    return None


def _top_level(source: str, modules: Modules,
               defined: dict[str, set[str] | None]) -> set[str] | None:
    """The names module file `source` binds at its top level; None when it defines every
    name (`__getattr__`, a star import, or a text that cannot be judged)."""
    if source not in defined:
        defined[source] = top_level_names(modules.read(source) or b"")
    return defined[source]


def top_level_names(data: bytes) -> set[str] | None:
    """The names a module binds at its top level (in its compound statements too, never
    inside a def or class); None when it may define any name (a module `__getattr__`, a
    star import) or cannot be parsed."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names: set[str] = set()
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    return None
                names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        else:
            if isinstance(node, ast.ExceptHandler) and node.name:
                names.add(node.name)
            pending.extend(ast.iter_child_nodes(node))
    return None if "__getattr__" in names else names


def _i001(node: ast.ImportFrom, text: str) -> Finding:
    return Finding(node.lineno, node.col_offset + 1, "I001", text, text)


def workspace_modules(ws: Any, max_bytes: int) -> Modules:
    """The workspace `ws` (tools.confine.sandbox.Workspace) as I001 reads it: regular
    files up to `max_bytes`, confined like every read."""
    import os

    from chorus_tools.tools.errors import ToolError

    def read(rel: str) -> bytes | None:
        try:
            fd, st = ws.open_regular(rel)
        except ToolError:
            return None
        try:
            return os.read(fd, max_bytes) if st.st_size <= max_bytes else b""
        finally:
            os.close(fd)

    def is_dir(rel: str) -> bool:
        try:
            return stat.S_ISDIR(ws.lstat(rel).st_mode)
        except ToolError:
            return False

    return Modules(read, is_dir)
