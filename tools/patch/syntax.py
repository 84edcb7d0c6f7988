"""The syntax errors of a text, by a real parser for its language: what the syntax guard
(docs/protocol.md, `file.patch`) and diagnostics (docs/protocol.md, Diagnostics) judge by.

Python's own compiler (a top-level statement at a time: tools.patch.pychunk), json,
tomllib, PyYAML (events only, so custom tags cost nothing), tree-sitter grammars
(tools.code.parse) for JavaScript, TypeScript, Go, Rust, Java, C and C++, and Makefiles
by the recipe-tab rule; which language a file is, the language table says
(tools.code.languages). Parsers that stop at the first error (JSON, TOML, YAML) give one
error at most. Every parse stays within the call's Budget (tools.code.bounds): a text
over its bytes, or a parse past its time, is Skipped; so is a text its parser cannot
judge (nested deeper than it goes).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chorus_tools.tools.code import languages
from chorus_tools.tools.code.bounds import Budget, Skipped
from chorus_tools.tools.patch import pychunk, pyproblems

if TYPE_CHECKING:
    from tree_sitter import Node

# enough of a file to find a shebang, or a header's first C++ word after a long licence
HEAD_CHARS = 64 * 1024
_CHECK_EVERY = 1024  # error nodes walked between two looks at the clock
YAML_DEPTH = 1000  # the nesting libyaml's own later versions refuse by default (0.2.5 has none)


class _TooDeep(Exception):
    """A text nested deeper than its parser can judge in reasonable time."""


# nested deeper than the parser recurses (tomllib and json: RecursionError; Python's
# compiler: RecursionError or, for its parser's stack, MemoryError), or YAML flow
# collections deeper than YAML_DEPTH, where libyaml's time grows with the square of the
# depth: such a text is not judged (issue 36)
_CANNOT_JUDGE = (RecursionError, MemoryError, _TooDeep)


@dataclass(frozen=True)
class Problem:
    """One syntax error: 1-based line and column (in characters), and what is wrong."""

    line: int
    column: int
    message: str

    def reply(self) -> dict[str, int | str]:
        return {"line": self.line, "column": self.column, "message": self.message}


def language_of(path: str, text: str = "") -> str | None:
    """The language `path` (holding `text`) is judged in; None when it has no judge."""
    language = languages.language_of(path, text[:HEAD_CHARS].encode("utf-8", "surrogatepass"))
    return None if language is None else language.name


def problems(language: str, path: str, text: str, budget: Budget) -> list[Problem]:
    """The syntax errors of `text` in `language`, in order (Skipped past the budget)."""
    budget.admit(len(text) if len(text) > budget.max_bytes or text.isascii()
                 else len(text.encode("utf-8", "surrogatepass")))
    try:
        return _problems(language, path, text, budget)
    except _CANNOT_JUDGE:
        raise Skipped("nested deeper than its parser goes", "depth", YAML_DEPTH) from None


def _problems(language: str, path: str, text: str, budget: Budget) -> list[Problem]:
    if language == "markdown":
        return []  # Markdown parses whatever is written
    if language == "python":
        return [Problem(*found) for found in pychunk.errors(text, budget)]
    first_error = _FIRST_ERROR.get(language)
    if first_error is not None:
        found = first_error(text)
        return [] if found is None else [Problem(*found)]
    if language == "make":
        return [Problem(line, 1, reason) for line, reason in _make_errors(text)]
    return _tree_sitter(language, path, text, budget)


def preload() -> None:
    """Load every parser now: a server started as root imports everything it will need
    before dropping privileges, and a worker's Landlock domain reads only what Python
    needs."""
    languages.preload()
    _yaml_loader()
    pyproblems.preload()


def _tree_sitter(language: str, path: str, text: str, budget: Budget) -> list[Problem]:
    from chorus_tools.tools.code import parse
    data = text.encode("utf-8", "surrogatepass")
    try:
        tree = parse.parse(language, path, data, budget, exact=True)
        return _tree_errors(tree.root_node, data, budget)
    finally:
        if not parse.keeps(len(data)):
            parse.give_back()  # a big tree is gone: its memory goes back to the system


def _tree_errors(root: Node, data: bytes, budget: Budget) -> list[Problem]:
    from chorus_tools.tools.code import parse
    if not root.has_error:
        return []
    found = []
    for count, node in enumerate(parse.error_nodes(root), 1):
        if count % _CHECK_EVERY == 0:
            budget.check()
        row, column = node.start_point
        start = node.start_byte - column
        chars = len(data[start:node.start_byte].decode("utf-8", "replace"))
        found.append(Problem(row + 1, chars + 1, parse.describe(node, data)))
    found.sort(key=lambda p: (p.line, p.column))
    return found


def _json(text: str) -> tuple[int, int, str] | None:
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return exc.lineno, exc.colno, exc.msg
    return None


_TOML_AT = re.compile(r"\(at line (\d+), column (\d+)\)")


def _toml(text: str) -> tuple[int, int, str] | None:
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_AT.search(str(exc))
        line, column = (int(found.group(1)), int(found.group(2))) if found else (1, 1)
        return line, column, _TOML_AT.split(str(exc))[0].strip()
    return None


def _yaml_loader() -> type:
    import yaml
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _yaml(text: str) -> tuple[int, int, str] | None:
    import yaml
    if _flow_depth(text) > YAML_DEPTH:
        raise _TooDeep
    try:
        for _ in yaml.parse(text, Loader=_yaml_loader()):
            pass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        return (mark.line + 1 if mark else 1), (mark.column + 1 if mark else 1), " ".join(
            str(part) for part in (exc.context, exc.problem) if part)
    except yaml.YAMLError as exc:
        return 1, 1, str(exc)
    return None


_BRACKETS = re.compile(r"[\[\]{}]")


def _flow_depth(text: str) -> int:
    """How deep brackets nest in `text`, counted over every bracket (quoted ones too: an
    overcount only spares the parser); a text with fewer opening brackets than YAML_DEPTH
    is not scanned."""
    if text.count("[") + text.count("{") <= YAML_DEPTH:
        return 0
    depth = deepest = 0
    for m in _BRACKETS.finditer(text):
        if m.group() in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif depth:
            depth -= 1
    return deepest


_FIRST_ERROR: dict[str, Callable[[str], tuple[int, int, str] | None]] = {
    "json": _json, "toml": _toml, "yaml": _yaml,
}

_RULE = re.compile(r"^[^\s#=:][^=]*?:(?![=:]?=)")
_DIRECTIVE = re.compile(r"^\s*(?:-?include|sinclude|ifn?eq|ifn?def|else|endif|define|endef|"
                        r"export|unexport|override|private|vpath)\b")
_ASSIGNMENT = re.compile(r"^\s*[^\s=:#]+\s*(?:[:+?!]|::)?=")


_SPACES_IN_RECIPE = "missing separator: a recipe line must start with a tab, not spaces"
_NO_TAB = "missing separator: a recipe line must start with a tab"
# a make function that may expand to nothing (then the line is no recipe line)
_FUNCTION = re.compile(r"\$[({](?:eval|info|warning|error|call|foreach|if|or|and)\s")


def _make_errors(text: str) -> list[tuple[int, str]]:
    """The lines make would refuse by the recipe-tab rule: a line in a rule's recipe that
    is indented with spaces instead of a tab, or not at all (make's 'missing separator'),
    and a line a tab starts before any rule ('recipe commences before first target')."""
    errors = []
    in_rule = continued = False
    for number, line in enumerate(text.splitlines(), 1):
        was_continued, continued = continued, line.endswith("\\")
        if was_continued or not line.strip():
            continue
        if line.startswith("\t"):
            if not in_rule and not line.strip().startswith("#"):
                errors.append((number, "recipe commences before first target"))
            continue
        body = line.strip()
        if body.startswith("#") or _DIRECTIVE.match(line) or _ASSIGNMENT.match(line):
            continue
        if line[0] == " " and in_rule and not _RULE.match(body):
            errors.append((number, _SPACES_IN_RECIPE))
            continue
        if in_rule and not _RULE.match(body) and not _FUNCTION.match(line):
            errors.append((number, _NO_TAB))  # a recipe line that lost its tab
            continue
        in_rule = bool(_RULE.match(body))
    return errors
