"""The syntax guard (docs/protocol.md, `file.patch`): an edit applied by a looser tier than
exact must not leave a syntax error the file did not have.

Each language is parsed by a real parser: Python's own compiler (on the top-level
statements the change touched: tools.patch.pychunk), json, tomllib, PyYAML
(events only, so custom tags cost nothing), tree-sitter grammars (tools.code.parse)
for JavaScript, TypeScript, Go, Rust, Java, C and C++, and Makefiles by the recipe-tab
rule; which language a file is, the language table says (tools.code.languages). Parsers
that stop at the first error (Python, JSON, TOML, YAML) judge "did not have" as "the text
before parsed"; the others compare how many errors each text has. A file in no known
language is not judged, and neither is a text its parser cannot judge: nested deeper than
the parser recurses (tomllib and json raise RecursionError, Python's compiler
RecursionError or, for its parser's stack, MemoryError), or YAML flow collections nested
deeper than YAML_DEPTH, where libyaml's time grows with the square of the depth (100,000
`[` take a minute). Such an edit is applied: the guard refuses only an error it
can show.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass

from chorus_tools.tools.code import languages
from chorus_tools.tools.patch.pychunk import new_error

# enough of a file to find a shebang, or a header's first C++ word after a long licence
_HEAD_CHARS = 64 * 1024


YAML_DEPTH = 1000  # the nesting libyaml's own later versions refuse by default (0.2.5 has none)


class _TooDeep(Exception):
    """A text nested deeper than its parser can judge in reasonable time."""


_CANNOT_JUDGE = (RecursionError, MemoryError, _TooDeep)


@dataclass(frozen=True)
class Broken:
    """A syntax error the edit brought: 1-based line in the new text, and what is wrong."""

    language: str
    line: int
    reason: str


def language_of(path: str, head: bytes | None = None) -> str | None:
    """The language the guard judges `path` in; None when it has no judge for it
    (Markdown parses whatever is written)."""
    language = languages.language_of(path, head)
    return None if language is None or language.name == "markdown" else language.name


def broken(path: str, before: str, after: str) -> Broken | None:
    """The syntax error `after` has that `before` did not, or None (also when the parser
    cannot judge either text)."""
    language = language_of(path, (before or after)[:_HEAD_CHARS].encode("utf-8", "surrogatepass"))
    if language is None:
        return None
    try:
        return _judged(language, path, before, after)
    except _CANNOT_JUDGE:
        return None


def _judged(language: str, path: str, before: str, after: str) -> Broken | None:
    if language == "python":
        error = new_error(before, after)
        return None if error is None else Broken(language, *error)
    first_error = _FIRST_ERROR.get(language)
    if first_error is not None:
        error = first_error(after)
        if error is None or first_error(before) is not None:
            return None
        return Broken(language, *error)
    if language == "make":
        new, old = _make_errors(after), _make_errors(before)
        return Broken(language, *new[0]) if len(new) > len(old) else None
    return _tree_sitter(language, path, before, after)


def preload() -> None:
    """Load every parser now: a server started as root imports everything it will need
    before dropping privileges, and a worker's Landlock domain reads only what Python
    needs."""
    languages.preload()
    _yaml_loader()


def _tree_sitter(language: str, path: str, before: str, after: str) -> Broken | None:
    """Errors counted in both texts, `before` parsed only when `after` has any."""
    from chorus_tools.tools.code import parse
    old, new = before.encode("utf-8", "surrogatepass"), after.encode("utf-8", "surrogatepass")
    now = parse.errors(language, new, path, parse.common_prefix(old, new))
    if now.first is None or now.count <= parse.errors(language, old, path).count:
        return None
    return Broken(language, *now.first)


def _json(text: str) -> tuple[int, str] | None:
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return exc.lineno, exc.msg
    return None


_TOML_AT = re.compile(r"\(at line (\d+)")


def _toml(text: str) -> tuple[int, str] | None:
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_AT.search(str(exc))
        return (int(found.group(1)) if found else 1), str(exc)
    return None


def _yaml_loader() -> type:
    import yaml
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _yaml(text: str) -> tuple[int, str] | None:
    import yaml
    if _flow_depth(text) > YAML_DEPTH:
        raise _TooDeep
    try:
        for _ in yaml.parse(text, Loader=_yaml_loader()):
            pass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        return (mark.line + 1 if mark else 1), " ".join(
            str(part) for part in (exc.context, exc.problem) if part)
    except yaml.YAMLError as exc:
        return 1, str(exc)
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


_FIRST_ERROR: dict[str, Callable[[str], tuple[int, str] | None]] = {
    "json": _json, "toml": _toml, "yaml": _yaml,
}

_RULE = re.compile(r"^[^\s#=:][^=]*?:(?![=:]?=)")
_DIRECTIVE = re.compile(r"^\s*(?:-?include|sinclude|ifn?eq|ifn?def|else|endif|define|endef|"
                        r"export|unexport|override|private|vpath)\b")
_ASSIGNMENT = re.compile(r"^\s*[^\s=:#]+\s*(?:[:+?!]|::)?=")


_SPACES_IN_RECIPE = "missing separator: a recipe line must start with a tab, not spaces"


def _make_errors(text: str) -> list[tuple[int, str]]:
    """The lines make would refuse by the recipe-tab rule: a line in a rule's recipe that
    is indented with spaces instead of a tab (make's 'missing separator'), and a line a tab
    starts before any rule ('recipe commences before first target')."""
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
        in_rule = bool(_RULE.match(body))
    return errors
