"""broken_imports (docs/protocol.md, Diagnostics): the other workspace files that import,
by name, a top-level definition a change removed from a Python module.

The names a module defines are compared before and after the change; for each one gone,
the files that may mention it come from the symbol index when the warm process has it,
else from a search narrowed to the name (tools.code.narrow, the way code.references
finds its files), and each is read and parsed to keep only `from <this module> import
name` (absolute, or relative resolving to it). The walk stops when the call's parsing
time (--syntax-timeout) is spent.
"""

from __future__ import annotations

import ast
import posixpath
import re
import warnings
from typing import Any, Mapping

from chorus_tools.tools.code.bounds import Budget
from chorus_tools.tools.code.source import read_candidate
from chorus_tools.tools.context import ToolContext

EMPTY: Mapping[str, bytes | None] = {}  # a change of one file: the others are on disk


def broken_imports(ctx: ToolContext, path: str, was: set[str] | None, now: set[str] | None,
                   budget: Budget, pending: Mapping[str, bytes | None] = EMPTY,
                   ) -> tuple[list[dict[str, Any]], int]:
    """([{path, line, name}] in path order, their count) for the top-level names of module
    `path` its text before defined (`was`) and after does not (`now`; None: a text that
    may define any name), as far as `budget` allows. `pending`: the other files the same
    change writes (their bytes after it, None: removed), judged as it leaves them."""
    if was is None or now is None or not was - now:
        return [], 0
    return _importers(ctx, path, sorted(was - now), budget, pending)


def _importers(ctx: ToolContext, path: str, removed: list[str], budget: Budget,
               pending: Mapping[str, bytes | None]) -> tuple[list[dict[str, Any]], int]:
    from chorus_tools.tools.code.narrow import candidates

    dotted = _dotted(path)
    found = []
    for name in removed:
        files = candidates(ctx, "", name, case_sensitive=True, globs=[],
                           include_hidden=False, include_ignored=False,
                           warm=("code_mentions", {"name": name})).files
        for file in sorted({*files, *pending}):
            if file == path or not file.endswith((".py", ".pyi")):
                continue
            if budget.expired():
                return found, len(found)
            data = pending[file] if file in pending else read_candidate(ctx, file)
            if data is not None:
                found += ({"path": file, "line": line, "name": name}
                          for line in _imports(data, file, dotted, path, name))
    found.sort(key=lambda f: (f["path"], f["line"]))
    return found, len(found)


def _imports(data: bytes, file: str, dotted: str, path: str, name: str) -> list[int]:
    """The lines of `file` (holding `data`) that import `name` from module `path`
    (`dotted`, its dotted name from the workspace root)."""
    if name.encode() not in data:
        return []
    statements = _from_statements(data)
    if statements is None:
        statements = _parsed(data)
    lines = []
    for node in statements:
        if not any(a.name == name for a in node.names):
            continue
        if node.level:
            if _relative(file, node) in _module_paths(path):
                lines.append(node.lineno)
        elif node.module and (dotted == node.module or dotted.endswith("." + node.module)):
            lines.append(node.lineno)
    return lines


# a `from ... import ...` statement that starts a line (a backslash may continue any of its
# lines): through its closing parenthesis, or to the end of its last line
_FROM = re.compile(rb"^[ \t]*(from\b(?:[^\n#\\]|\\\n)*?\bimport\b[ \t]*"
                   rb"(?:\([^)]*\)|(?:[^\n\\]|\\[\s\S])*))", re.M)
_IMPORT_LINE = re.compile(rb"^[ \t]*import\b", re.M)
_IMPORT_WORD = re.compile(rb"\bimport\b")


def _from_statements(data: bytes) -> list[ast.ImportFrom] | None:
    """The `from` imports of a module, each parsed alone (an importer is read for its
    imports only: parsing the whole of 50 importers cost ~100 ms); None when the text
    may hide one from this reading (an `import` word no statement here accounts for, a
    statement inside a triple-quoted string, one that does not parse alone): then the
    whole module is parsed."""
    if b'"""' in data and b"'''" in data:
        return None  # quotes of one kind may sit inside a string of the other
    found = []
    covered = quotes = scanned = 0
    for m in _FROM.finditer(data):
        quotes += data.count(b'"""', scanned, m.start()) + data.count(b"'''", scanned,
                                                                         m.start())
        scanned = m.start()
        if quotes % 2:
            return None
        try:
            tree = ast.parse(m.group(1))
        except (SyntaxError, ValueError):
            return None
        node = tree.body[0] if len(tree.body) == 1 else None
        if not isinstance(node, ast.ImportFrom):
            return None
        node.lineno += data.count(b"\n", 0, m.start(1))
        found.append(node)
        covered += len(_IMPORT_WORD.findall(m.group(1)))
    if covered + len(_IMPORT_LINE.findall(data)) != len(_IMPORT_WORD.findall(data)):
        return None
    return found


def _parsed(data: bytes) -> list[ast.ImportFrom]:
    """Every `from` import of a module, from a parse of all of it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return [node for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]


def _dotted(path: str) -> str:
    stem = path.rsplit(".", 1)[0]
    if stem.endswith("/__init__"):
        stem = stem[:-len("/__init__")]
    return stem.replace("/", ".")


def _module_paths(path: str) -> set[str]:
    """The workspace paths, without suffix, that name module file `path`."""
    stem = path.rsplit(".", 1)[0]
    return {stem[:-len("/__init__")]} if stem.endswith("/__init__") else {stem}


def _relative(file: str, node: ast.ImportFrom) -> str:
    base = posixpath.dirname(file)
    for _ in range(node.level - 1):
        base = posixpath.dirname(base)
    return posixpath.join(base, *node.module.split(".")) if node.module else base
