"""The one language table: for a path (and, where the name cannot tell, the file's first
bytes), which language it is, and which tree-sitter grammar parses it.

The syntax guard, diagnostics and the code-structure methods all ask here, so a file is
the same language to each of them (docs/protocol.md, "Code by structure"): by extension,
by name (`Makefile`), by a shebang for extension-less Python and Node scripts, and `.h`
as C++ only when it holds C++ syntax. Each grammar is the tree-sitter project's own
package; `preload()` loads them all before a `--user` drop and a worker's Landlock domain,
where the Python installation may no longer be readable.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Parser


@dataclass(frozen=True)
class Language:
    """A language the server parses: `grammar` names its tree-sitter grammar (None where
    the guard uses another parser: json, toml, yaml, make); `code` says whether the
    code-structure methods answer for it; `checker` names what finds its problems
    (docs/protocol.md, Diagnostics), None where none is owned."""

    name: str
    grammar: str | None
    code: bool
    checker: str | None = None


# grammar name -> (module, function returning the language pointer)
_GRAMMARS = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "markdown": ("tree_sitter_markdown", "language"),
}

# problems (tools/patch/pyproblems.py): pyflakes in-process for Python, measured against a
# ruff spawn per check; oxlint's native binary (its wheel, no Node) for JavaScript and
# TypeScript's no-undef (tools/patch/jsproblems.py), where the server found it at start
_CHECKERS = {"python": "pyflakes", "javascript": "oxlint", "typescript": "oxlint",
             "tsx": "oxlint"}

LANGUAGES = {language.name: language for language in (
    *(Language(name, name, True, _CHECKERS.get(name)) for name in _GRAMMARS),
    *(Language(name, None, False) for name in ("json", "toml", "yaml", "make")),
)}

_SUFFIXES = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go", ".rs": "rust", ".java": "java", ".c": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".hh": "cpp", ".hpp": "cpp",
    ".hxx": "cpp", ".h++": "cpp", ".tcc": "cpp", ".inl": "cpp", ".ipp": "cpp",
    ".md": "markdown", ".markdown": "markdown", ".mdx": "markdown",
    ".json": "json", ".toml": "toml", ".yaml": "yaml", ".yml": "yaml", ".mk": "make",
}
_NAMES = {"makefile": "make", "gnumakefile": "make"}
_SHEBANG = re.compile(rb"#![^\n]*?\b(python[0-9.]*|node|nodejs)\b")
# what only C++ writes in a header; `::` never appears in C
_CPLUSPLUS = re.compile(rb"::|\b(?:class|namespace|template|typename|public|private|protected"
                        rb"|virtual|constexpr|nullptr|operator)\b")
_HEAD_BYTES = 64 * 1024

SUPPORTED = tuple(sorted(name for name, language in LANGUAGES.items() if language.code))


def language_of(path: str, head: bytes | None = None) -> Language | None:
    """The language of `path`; `head` (the file's first bytes, when known) decides a
    shebang script and whether a `.h` header is C or C++. None: no parser for it."""
    name = PurePosixPath(path).name
    suffix = PurePosixPath(name).suffix.lower()
    found = _NAMES.get(name.lower()) or _SUFFIXES.get(suffix)
    if found is None and suffix == ".h":
        found = "cpp" if head is None or _CPLUSPLUS.search(head[:_HEAD_BYTES]) else "c"
    elif found is None and not suffix and head is not None:
        shebang = _SHEBANG.match(head)
        if shebang:
            found = "python" if shebang.group(1).startswith(b"python") else "javascript"
    return LANGUAGES.get(found) if found else None


def name_of(path: str) -> str:
    """What an `unsupported_language` error calls a file's language: the table's name, else
    its extension without the dot, else "unknown"."""
    language = language_of(path)
    if language is not None:
        return language.name
    return PurePosixPath(path).suffix.lower().lstrip(".") or "unknown"


_parsers: dict[str, Parser] = {}


def parser(grammar: str) -> Parser:
    """This process's parser for a grammar, made on first use."""
    found = _parsers.get(grammar)
    if found is None:
        import tree_sitter  # imported on first parse: a server that never parses pays nothing
        module, function = _GRAMMARS[grammar]
        found = _parsers[grammar] = tree_sitter.Parser(
            tree_sitter.Language(getattr(importlib.import_module(module), function)()))
    return found


def preload() -> None:
    """Load every grammar now (before a privilege drop or a Landlock domain)."""
    for grammar in _GRAMMARS:
        parser(grammar)


def grammar_packages() -> list[str]:
    """The packages the grammars come from (their versions key the symbol index's records
    on disk: tools/warm/record_cache.py)."""
    return sorted({module for module, _ in _GRAMMARS.values()})
