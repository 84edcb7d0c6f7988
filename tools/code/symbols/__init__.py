"""A file's symbols: its definitions, as docs/protocol.md "Code by structure" defines them,
from one tree-sitter parse.

Definitions are found by a query per language: the grammar package's own `tags.scm`
(its `@definition.*` patterns) plus the patterns it lacks (tools/code/symbols/queries.py);
one function per language family then says what each found node is (its kind, name and
the nodes its range and head come from: tools/code/symbols/<family>.py). What follows is
the same for every language (tools/code/symbols/extract.py): the range grows to the
decorators, attributes and comment block above, nesting gives the name paths, and the
head up to the body is the signature. Outline, symbols, references, map and edit only
consume these records.
"""

from __future__ import annotations

from chorus_tools.tools.code.languages import SUPPORTED, language_of, name_of
from chorus_tools.tools.code.symbols.record import Symbol
from chorus_tools.tools.errors import ToolError

__all__ = ["HEAD_BYTES", "Symbol", "maybe_code", "symbols", "supported", "unsupported"]

HEAD_BYTES = 64 * 1024  # what language_of may look at (a shebang, C++ in a .h)


def supported(path: str, data: bytes | None = None) -> str | None:
    """The grammar the code-structure methods read `path` with, or None."""
    language = language_of(path, None if data is None else data[:HEAD_BYTES])
    return language.grammar if language is not None and language.code else None


def maybe_code(path: str) -> bool:
    """Whether `path` may be code by its name alone: a language of ours, or no extension
    (a script its first line names)."""
    return supported(path) is not None or (language_of(path) is None
                                           and "." not in path.rsplit("/", 1)[-1])


def unsupported(path: str) -> ToolError:
    """The error for a file whose language no parser here reads."""
    return ToolError("unsupported_language",
                     f"Cannot read symbols of {path}: {name_of(path)} is not a language the "
                     f"server parses ({', '.join(SUPPORTED)}). Use file_read or file_search "
                     "for it.", path=path, language=name_of(path), supported=list(SUPPORTED))


def symbols(path: str, data: bytes) -> list[Symbol]:
    """Every definition in `data` (the content of `path`, whose name and first bytes choose
    the language), as a flat list in file order: each symbol after its enclosing one, whose
    index is its `parent`. A file with syntax errors yields what parses. A language the
    server does not parse is `unsupported_language` (a ToolError)."""
    grammar = supported(path, data)
    if grammar is None:
        raise unsupported(path)
    from chorus_tools.tools.code.symbols.extract import extract
    return extract(grammar, path, data)
