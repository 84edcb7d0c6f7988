"""What a Python module imports and defines, by name (docs/protocol.md, Diagnostics): I001,
a relative import naming no module of the workspace or a name its module does not define
at its top level, and the top-level names a module binds (for I001 and broken_imports).
"""

from __future__ import annotations

import ast
import posixpath
import re
import stat
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from chorus_tools.tools.code.bounds import Budget
from chorus_tools.tools.patch.pyfindings import Finding

# where a relative import may be (`from .x`, `from . import`, split by a backslash too):
# a text without one, most of them, is not walked for I001. No `\b`: with it the scan
# took 4.5 ms on 200 KiB against 0.16 ms (a word ending in "from" only costs a look)
MAY_IMPORT_RELATIVELY = re.compile(r"from[\s\\]*\.")

# reads a workspace file's bytes (None: no such regular file), and says whether a
# workspace path is a directory: how I001 sees the other modules
Reader = Callable[[str], "bytes | None"]
IsDir = Callable[[str], bool]


@dataclass(frozen=True)
class Modules:
    """The workspace as I001 sees it."""

    read: Reader
    is_dir: IsDir


def relative_imports(path: str, tree: ast.Module, modules: Modules,
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
    """The names a module binds at its top level (`names_of`); None also when it cannot
    be parsed."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return names_of(tree)


def names_of(tree: ast.Module) -> set[str] | None:
    """The names a module binds at its top level (in its compound statements too, never
    inside a def or class); None when it may define any name (a module `__getattr__`, a
    star import)."""
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


def overlaid(modules: Modules, pending: Mapping[str, bytes | None]) -> Modules:
    """`modules` as a change of several files leaves them: `pending` maps each file the
    change writes to its bytes after it (None: removed), read before the disk."""
    def read(rel: str) -> bytes | None:
        return pending[rel] if rel in pending else modules.read(rel)

    def is_dir(rel: str) -> bool:
        inside = rel + "/"
        return modules.is_dir(rel) or any(
            path.startswith(inside) and data is not None for path, data in pending.items())

    return Modules(read, is_dir)


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
