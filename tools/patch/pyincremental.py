"""The problems of a Python text an edit made from a checked one, found by checking only
the top-level statements it changed (docs/protocol.md, Diagnostics).

pyflakes walks a module in one pass and defers every function body to the end of it, when
the module's bindings are final. So when an edit changes only what is inside function
bodies (of a top-level `def`, or of the methods of a top-level `class`), everything the
module-level pass reports is as before, and the bodies of the other statements see the
same module: only the changed statements' bodies need a walk, against those final
bindings (the "seeds", kept from the check of the text before). The edit qualifies when:

- the texts differ in top-level statements paired one to one (pychunk's cut, which the
  whole check confirmed against the tree), each a `def` or `class` whose skeleton (every
  node but those inside function bodies) is the same, wherever its nodes moved;
- no `global` or `nonlocal` statement is anywhere (one changes names in other scopes and
  removes reports already made), nor a star import;
- no import the module binds is bound again inside a changed body, nor is a module-level
  import that some nested scope rebinds named in the changed text (pyflakes reports that
  rebinding only while the import stays unused: a changed body could change that).

Anything else, or any doubt, is checked whole. What the module-level pass reported inside
a changed statement is kept, moved with the node it names (its skeleton is the same);
what was reported after that pass there (its bodies, deferred annotations, the last look
at its scopes) comes from the new walk. The rest of the text's findings move with it.
"""

from __future__ import annotations

import ast
import re
import sys
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from copy import copy
from dataclasses import dataclass, field, replace
from typing import Any

from chorus_tools.tools.code.bounds import Budget, Skipped
from chorus_tools.tools.code.parse import common_prefix, common_suffix
from chorus_tools.tools.patch import pychunk
from chorus_tools.tools.patch.pyfindings import (Checked, Finding, Run, Seed, by_place,
                                                 guarded, run)
from chorus_tools.tools.patch.pyimports import (MAY_IMPORT_RELATIVELY, Modules,
                                                relative_imports)

_BODIES = (ast.FunctionDef, ast.AsyncFunctionDef)
_CHANGEABLE = (*_BODIES, ast.ClassDef)
# where a seed binding was made, for the messages that say so (F823's "defined on line")
_NOWHERE = ast.Pass(lineno=0, col_offset=0)


@dataclass(frozen=True)
class Statements:
    """What a checked text keeps for the next edit: the offsets its top-level statements
    start at, pyflakes' findings each with whether it was reported after the module-level
    pass, and the module's bindings at the end of that pass."""

    starts: list[int]
    found: list[tuple[Finding, bool]]
    seeds: dict[str, Any]  # name: a copy of the module's pyflakes binding, made nowhere
    missing: frozenset[str]  # builtins the module deleted (`del print`)
    imported: frozenset[str]  # names the module binds by an import
    rebound: frozenset[str]  # of those, the ones a nested scope binds again
    future: bool  # `from __future__ import annotations`


def record(text: str, tree: ast.Module, done: Run) -> Statements | None:
    """What the next edit of `text` (parsed as `tree`, checked as `done`) needs to be
    checked incrementally; None when no edit of it can be."""
    from pyflakes.checker import Builtin, Importation, ModuleScope
    if done.saw_global or done.starred or not isinstance(done.scopes[-1], ModuleScope):
        return None
    starts = pychunk.starts(text)
    if not _whole_statements(text, starts, tree):
        return None
    module = done.scopes[-1]
    seeds: dict[str, Any] = {}
    imported, rebound = set(), set()
    for name, binding in module.items():
        if isinstance(binding, Builtin):
            continue
        seed: Any = copy(binding)  # of its kind: an import from typing stays one
        seed.source, seed.used = _NOWHERE, False
        seeds[name] = seed
        if isinstance(binding, Importation):
            imported.add(name)
            if binding.redefined:
                rebound.add(name)
            seed.redefined = []
    return Statements(starts, done.found, seeds,
                      frozenset(n for n in done.builtins if n not in module),
                      frozenset(imported), frozenset(rebound),
                      bool(getattr(module, "_annotations_future_enabled", False)))


def _whole_statements(text: str, starts: list[int], tree: ast.Module) -> bool:
    """Whether each of pychunk's cuts (but the first, at 0) is where a top-level statement
    of `tree` starts, at column 0: then each piece is whole statements."""
    firsts = set()
    for node in tree.body:
        if node.col_offset == 0:  # a decorated one starts at its first decorator's line
            decorators = node.decorator_list if isinstance(node, _CHANGEABLE) else []
            firsts.add(decorators[0].lineno if decorators else node.lineno)
    line, counted = 1, 0
    for start in starts[1:]:
        line += text.count("\n", counted, start)
        counted = start
        if line not in firsts:
            return False
    return True


def update(path: str, before: str, prior: Checked, after: str, budget: Budget,
           modules: Modules | None) -> Checked | None:
    """The check of `after` from that of `before` (`prior`) when the edit qualifies (the
    module's docstring says when); None: check it whole."""
    kept = prior.statements
    if not isinstance(kept, Statements):
        return None
    starts = pychunk.starts(after)
    old = kept.starts
    head = common_prefix(before, after)
    tail = common_suffix(before[head:], after[head:])
    first = bisect_right(old, head) - 1
    stop_old = bisect_left(old, len(before) - tail)
    stop_new = bisect_left(starts, len(after) - tail)
    shift = len(after) - len(before)
    if stop_old <= first or stop_old != stop_new or starts[:first + 1] != old[:first + 1] \
            or starts[stop_new:] != [s + shift for s in old[stop_old:]]:
        return None
    try:
        with guarded():
            found = _changed(path, before, after, kept, starts, first, stop_old, budget)
            if found is None:
                return None
            return _checked(path, after, prior, replace(kept, starts=starts, found=found),
                            budget, modules)
    except Skipped as skipped:
        if skipped.kind == "checker":
            return None  # this check failed where a whole one may not: that one decides
        raise


@dataclass
class _Span:
    """One changed statement: its first and end lines before, its first line after, and
    where each node the module-level pass walks went (absolute lines; a line that went
    to two places maps to 0)."""

    start: int
    end: int
    new: int
    places: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    lines: dict[int, int] = field(default_factory=dict)


def _changed(path: str, before: str, after: str, kept: Statements, starts: list[int],
             first: int, stop: int, budget: Budget) -> list[tuple[Finding, bool]] | None:
    """The findings of `after` (its statements at `starts`), whose statements [first,
    stop) replace those of `before`, or None when a pair does not qualify."""
    old_at, new_at = _offsets(kept.starts, len(before)), _offsets(starts, len(after))
    old_line = before.count("\n", 0, old_at[first]) + 1
    new_line = after.count("\n", 0, new_at[first]) + 1
    spans: list[_Span] = []
    found: list[tuple[Finding, bool]] = []
    for k in range(first, stop):
        old_text, new_text = before[old_at[k]:old_at[k + 1]], after[new_at[k]:new_at[k + 1]]
        last = k + 1 == len(starts)  # then nothing follows: its findings run to the end
        span = _Span(old_line, sys.maxsize if last else old_line + old_text.count("\n"),
                     new_line)
        tree = _paired(old_text, new_text, kept, span)
        if tree is None:
            return None
        done = run(ast.Module([Seed(), tree, Seed()], []), budget, _seeding(kept), path)
        if done.saw_global or any(kept.imported.intersection(scope) for scope in done.scopes):
            return None
        found += [(_moved(f, new_line - 1), True) for f, late in done.found if late]
        spans.append(span)
        old_line, new_line = span.end, new_line + new_text.count("\n")

    def where(line: int) -> int | None:
        """A line of `before` outside the changed bodies, in `after`."""
        for span in spans:
            if line < span.start:
                return line
            if line < span.end:
                return span.lines.get(line) or None
        return line - old_line + new_line

    for f, late in kept.found:
        inside = next((s for s in spans if s.start <= f.line < s.end), None)
        if inside is None:
            moved = _placed(f, where(f.line), f.column, where)
        elif late:
            continue  # the new walk of the statement says it again, or not
        else:
            line, column = inside.places.get((f.line, f.column - 1), (None, -1))
            moved = _placed(f, line, column + 1, where)
        if moved is None:
            return None
        found.append((moved, late))
    return found


def _offsets(starts: list[int], size: int) -> list[int]:
    return [*starts, size]


def _paired(old_text: str, new_text: str, kept: Statements, span: _Span) -> ast.stmt | None:
    """The new statement, parsed alone, when it and the old one are each one `def` or
    `class` of the same skeleton, and neither names an import a nested scope rebinds;
    `span` learns where each node of the skeleton went."""
    if any(re.search(rf"\b{re.escape(name)}\b", text) for name in kept.rebound
           for text in (old_text, new_text)):
        return None
    old, new = ast.parse(old_text).body, ast.parse(new_text).body
    if len(old) != 1 or len(new) != 1 or not isinstance(new[0], _CHANGEABLE):
        return None
    old_places: list[tuple[int, int]] = []
    new_places: list[tuple[int, int]] = []
    if _skeleton(old[0], old_places) != _skeleton(new[0], new_places):
        return None
    for (line, column), (to, to_column) in zip(old_places, new_places):
        at, went = line + span.start - 1, to + span.new - 1
        span.places[at, column] = went, to_column
        if span.lines.setdefault(at, went) != went:
            span.lines[at] = 0
    return new[0]


def _skeleton(node: Any, places: list[tuple[int, int]]) -> Any:
    """`node`'s kinds and fields but not the bodies of the functions in it, nor where
    anything is: that goes to `places`, node after node."""
    if isinstance(node, ast.AST):
        line = getattr(node, "lineno", None)
        if line is not None:
            places.append((line, getattr(node, "col_offset", 0)))
        return type(node).__name__, tuple(
            _skeleton(getattr(node, name, None), places) for name in node._fields
            if not (name == "body" and isinstance(node, _BODIES)))
    if isinstance(node, list):
        return tuple(_skeleton(item, places) for item in node)
    return node


def _seeding(kept: Statements) -> Callable[[Any], None]:
    """What gives the module scope of a run on one changed statement the module's final
    bindings: before the statement, and again after it for the names it bound there (its
    own name: the module's binding of it may differ, or be gone)."""
    def seed(checker: Any) -> None:
        scope = checker.scopeStack[0]
        if checker.seeded == 1:
            for name in kept.missing:
                scope.pop(name, None)
            scope.update(kept.seeds)
            scope._annotations_future_enabled = kept.future
            return
        for name in checker.bound:
            if name in kept.seeds:
                scope[name] = kept.seeds[name]
            else:
                scope.pop(name, None)
    return seed


def _moved(f: Finding, by: int) -> Finding:
    """`f`, found in a statement parsed alone, where the statement is."""
    moved = _placed(f, f.line + by, f.column, lambda line: line + by)
    assert moved is not None
    return moved


def _placed(f: Finding, line: int | None, column: int,
            where: Callable[[int], int | None]) -> Finding | None:
    """`f` at `line` and `column` in the text after, and so is the line F811's message
    names (`where` it went); None when either has no place there."""
    if line is None:
        return None
    if f.code != "F811":
        return f if (line, column) == (f.line, f.column) else replace(
            f, line=line, column=column)
    named = where(int(f.message.rsplit(" ", 1)[1]))
    if named is None:
        return None
    return replace(f, line=line, column=column, message=f"{f.key} from line {named}")


def _checked(path: str, after: str, prior: Checked, kept: Statements, budget: Budget,
             modules: Modules | None) -> Checked:
    """The Checked of `after`: its pyflakes findings, I001 found again for each statement
    that may import relatively (the workspace may have changed since), the same names."""
    found = [f for f, _ in kept.found]
    if modules is not None:
        found += relative_again(path, after, kept.starts, modules, budget)
    return Checked(by_place(found), prior.names, kept)


def relative_again(path: str, text: str, starts: list[int], modules: Modules,
                   budget: Budget) -> list[Finding]:
    """I001 of `text` (its top-level statements at `starts`), found again: only the
    statements that may import relatively are parsed."""
    found: list[Finding] = []
    at = _offsets(starts, len(text))
    pieces = sorted({bisect_right(starts, m.start()) - 1
                     for m in MAY_IMPORT_RELATIVELY.finditer(text)})
    for k in pieces:
        line = text.count("\n", 0, at[k])
        tree = ast.parse(text[at[k]:at[k + 1]])
        ast.increment_lineno(tree, line)
        found += relative_imports(path, tree, modules, budget)
    return found
