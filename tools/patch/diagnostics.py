"""Diagnostics (docs/protocol.md, Diagnostics): the syntax errors a change leaves in a file,
and how many of them it brought, from the parse the syntax guard makes; for a Python file
that parses, its problems too (tools.patch.problems).

One `Judge` serves one call: the guard asks it about each looser-tier patch, the reply
about the whole change, and a text it has judged is never parsed twice. An error is
"introduced" unless the text before had the same error (same message) at the place the
change moved it to (before the change: the same place; after it: shifted with the text),
or, for an error inside the changed lines, the same error on a line of the same text (it
moved with the text it sits in).
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

from chorus_tools.tools.code.bounds import Budget, Skipped
from chorus_tools.tools.code.languages import LANGUAGES
from chorus_tools.tools.context import Limits, ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.mutate.atomic import Current
from chorus_tools.tools.read.text import decode
from chorus_tools.tools.code.parse import common_prefix, common_suffix
from chorus_tools.tools.patch.broken import EMPTY, broken_imports
from chorus_tools.tools.patch.note import NAMED
from chorus_tools.tools.patch.problems import (Check, Problems, compare as compare_problems,
                                               top_level)
from chorus_tools.tools.patch.pyimports import overlaid
from chorus_tools.tools.patch.pyproblems import Modules, findings, workspace_modules
from chorus_tools.tools.patch.syntax import Problem, language_of, problems

SHOWN = 20  # errors a reply lists
BOM = "\ufeff"

Point = tuple[int, int]
DEFAULTS = Limits()


@dataclass(frozen=True)
class Diagnosis:
    """The errors of the text after a change, those of them it brought, or why the text
    was not judged (`skipped`); `problems` for a Python file, None where the server
    checks no problems."""

    errors: list[Problem] = field(default_factory=list)
    introduced: list[Problem] = field(default_factory=list)
    skipped: str | None = None
    problems: Problems | None = None

    def reply(self) -> dict[str, Any]:
        """The `diagnostics` a reply carries: the first SHOWN errors in file order, every
        introduced one among them."""
        checked: dict[str, Any] = ({"problems_checked": False} if self.problems is None
                                   else self.problems.reply())
        if self.skipped is not None:
            return {"skipped": self.skipped, **checked}
        shown = self.errors
        if len(shown) > SHOWN:
            new = set(map(id, self.introduced[:SHOWN]))
            rest = [p for p in shown if id(p) not in new][:SHOWN - len(new)]
            shown = sorted([*self.introduced[:SHOWN], *rest], key=lambda p: (p.line, p.column))
        return {"errors": [p.reply() for p in shown], "total": len(self.errors),
                "introduced": len(self.introduced), **checked}


class Judge:
    """The syntax of one file through one call: None as `language` when the server has no
    parser for it (then nothing is judged and no diagnostics are given)."""

    def __init__(self, path: str, text: str, limits: Limits = DEFAULTS, gate: str = "loose",
                 shown: str | None = None, problems_gate: str = "off",
                 ctx: ToolContext | None = None) -> None:
        """`path` workspace-relative, `text` any text of the file (for its shebang or
        header), `shown` the client's path for messages; `ctx` the call's context, for
        the other modules a Python file's problems look at (None: none are looked at)."""
        self.path, self.shown, self.gate = path, shown or path, gate
        self.problems_gate, self.ctx = problems_gate, ctx
        self.modules: Modules | None = None if ctx is None else workspace_modules(
            ctx.ws, limits.syntax_max_bytes)
        self.language = language_of(path, text)
        self.check = _checker(self.language, ctx)
        self.budget = Budget(limits.syntax_max_bytes, limits.syntax_timeout)
        self._seen: dict[str, list[Problem]] = {}
        self.pending: Mapping[str, bytes | None] = EMPTY

    def sees(self, pending: Mapping[str, bytes | None]) -> None:
        """Judge the change as one of several files written together (codex apply_patch):
        `pending` maps each of them to its bytes after the change (None: removed), and
        I001 and broken_imports look at the workspace as the whole change leaves it."""
        self.pending = pending
        if self.modules is not None:
            self.modules = overlaid(self.modules, pending)

    @classmethod
    def of(cls, ctx: ToolContext, path: str, text: str, shown: str | None = None) -> Judge:
        """The judge of one call's change to `path`, with the server's bounds and gate."""
        return cls(path, text, ctx.limits, ctx.syntax_gate, shown, ctx.problems_gate, ctx)

    def compare(self, before: str | None, after: str) -> Diagnosis:
        """The errors `after` has, and which `before` did not (Skipped past the bounds)."""
        assert self.language is not None
        new = self._problems(after)
        if not new:
            return Diagnosis()
        old = [] if before is None else self._problems(before)
        return Diagnosis(new, introduced(before or "", after, old, new))

    def diagnosis(self, before: str | None, after: str) -> Diagnosis | None:
        """What a change from `before` (None: no file) to `after` left, for the reply;
        None for a file the server cannot parse."""
        if self.language is None:
            return None
        try:
            found = self.compare(before, after)
        except Skipped as skipped:
            return self.skipped(skipped.reason)
        if found.errors:
            return self._with_problems(found, Problems(skipped="the file has syntax errors"))
        if self.check is None:
            return found
        checked = compare_problems(self.path, before, after, self.budget, self.modules,
                                   self.check)
        if self.ctx is not None and before is not None and before != after \
                and checked.skipped is None and self.check is findings:
            broken, total = broken_imports(self.ctx, self.path, top_level(self.path, before),
                                           top_level(self.path, after), self.budget,
                                           self.pending)
            checked = replace(checked, broken=broken, broken_total=total)
        return replace(found, problems=checked)

    def skipped(self, reason: str) -> Diagnosis:
        """Nothing judged, for `reason`: neither syntax nor problems."""
        return self._with_problems(Diagnosis(skipped=reason), Problems(skipped=reason))

    def _with_problems(self, found: Diagnosis, checked: Problems) -> Diagnosis:
        return found if self.check is None else replace(found, problems=checked)

    def wants(self, st: os.stat_result) -> bool:
        """Whether a whole-content write must read what the file holds to judge its change
        (a language the server parses, a file within the bounds); for tools.mutate's
        `read_current`."""
        return self.language is not None and st.st_size <= self.budget.max_bytes

    def replaced(self, current: Current, after: str) -> Diagnosis | None:
        """What replacing the file's content (`current`, read as `wants` said) with `after`
        left; a file too big to have been read is Skipped by its size. A leading U+FEFF in
        `after` is written as the UTF-8 BOM, which belongs to the encoding: judged as the
        text reads back (file.read, file.check), without it."""
        if self.language is None:
            return None
        if current.stat is not None and current.data is None:
            reason = Skipped.of_size(self.budget.max_bytes, current.stat.st_size).reason
            return self.skipped(reason)
        return self.diagnosis(None if current.data is None else decode(current.data)[0],
                              after.removeprefix(BOM))

    def guard(self, before: str, after: str, what: str, **details: Any) -> Problem | None:
        """The syntax guard (docs/protocol.md, `file.patch`): the first error a looser-tier
        change (`what`: "patches[0] (matched by the indentation tier)") brought, unless
        `--syntax-gate off`. A text past the bounds cannot be checked: such a change is
        refused, saying which bound (file_too_large, timeout), with `details`."""
        if self.language is None or self.gate == "off":
            return None
        try:
            found = self.compare(before, after).introduced
        except Skipped as skipped:
            if skipped.kind == "depth":
                return None  # the guard refuses only an error it can show (issue 36)
            raise _unchecked(skipped, self.shown, what, details) from None
        return found[0] if found else None

    def _problems(self, text: str) -> list[Problem]:
        assert self.language is not None
        found = self._seen.get(text)
        if found is None:
            found = self._seen[text] = problems(self.language, self.path, text, self.budget)
        return found


def _checker(language: str | None, ctx: ToolContext | None) -> Check | None:
    """What finds the problems of a file in `language` (the language table names it):
    None where the server owns none, oxlint was not found at start, or --problems off."""
    if language is None or (ctx is not None and not ctx.problems):
        return None
    named = LANGUAGES[language].checker
    if named == "pyflakes":
        return findings
    if named == "oxlint" and ctx is not None and ctx.oxlint is not None:
        from chorus_tools.tools.patch.jsproblems import checker
        return checker(ctx.oxlint, language)
    return None


def _unchecked(skipped: Skipped, path: str, what: str, details: dict[str, Any]) -> ToolError:
    resend = ("nothing was written. Resend it with the text copied exactly from the file "
              "(an exact match is applied as given).")
    if skipped.kind == "size":
        return ToolError("file_too_large",
                         f"{path} is {skipped.size} bytes, over the {skipped.limit}-byte "
                         f"bound of the syntax guard (--syntax-max-bytes), so {what} "
                         f"cannot be checked; {resend}", path=path, size=skipped.size,
                         limit=skipped.limit, **details)
    return ToolError("timeout",
                     f"Parsing {path} took over {skipped.limit:g} s (--syntax-timeout), so "
                     f"{what} cannot be checked; {resend}", path=path,
                     seconds=skipped.limit, **details)


def with_diagnostics(result: dict[str, Any], diagnosis: Diagnosis | None) -> dict[str, Any]:
    """`result` carrying `diagnostics` when the file's language is one the server parses."""
    if diagnosis is not None:
        result["diagnostics"] = diagnosis.reply()
    return result


def refuse_introduced(judge: Judge, diagnosis: Diagnosis | None, path: str,
                      diff: Callable[[], str] | None = None) -> None:
    """Under `--syntax-gate all`, edit_breaks_syntax for a change that brought a syntax
    error, exact or not; under `--problems-gate introduced`, for one that brought a
    problem (nothing is written; data.diagnostics says what it left)."""
    if diagnosis is None:
        return
    _refuse_problems(judge, diagnosis, path, diff)
    if judge.gate != "all" or not diagnosis.introduced:
        return
    intro = diagnosis.introduced
    first = intro[0]
    details: dict[str, Any] = {"diff": diff()} if diff is not None else {}
    raise ToolError("edit_breaks_syntax",
                    f"This change would leave a syntax error at line {first.line} of {path} "
                    f"({judge.language}: {first.message}), which the file did not have; "
                    "nothing was written (the server runs with --syntax-gate all). It would "
                    f"bring: {_named([f'line {e.line}: {e.message}' for e in intro])}. Fix "
                    "the text and send it again.",
                    path=path, line=first.line, reason=first.message,
                    diagnostics=diagnosis.reply(), **details)


def _named(found: list[str]) -> str:
    """The first NAMED of a refusal's errors in its message, as the diagnostics note names
    them (a model behind a host that shows only the text sees them: docs/protocol.md, MCP)."""
    return "; ".join(found[:NAMED]) + ("; ..." if len(found) > NAMED else "")


def _refuse_problems(judge: Judge, diagnosis: Diagnosis, path: str,
                     diff: Callable[[], str] | None) -> None:
    checked = diagnosis.problems
    if judge.problems_gate != "introduced" or checked is None or not checked.introduced:
        return
    first = checked.introduced[0]
    count = len(checked.introduced)
    details: dict[str, Any] = {"diff": diff()} if diff is not None else {}
    raise ToolError("edit_breaks_syntax",
                    f"This change would bring {count} problem{'s' if count > 1 else ''} to "
                    f"{path}, the first at line {first.line}: {first.message} ({first.code}); "
                    "nothing was written (the server runs with --problems-gate introduced). "
                    "They are: " + _named([f"line {p.line}: {p.message} ({p.code})"
                                           for p in checked.introduced])
                    + ". Fix the text and send it again.",
                    path=path, line=first.line, reason="problems",
                    diagnostics=diagnosis.reply(), **details)


def introduced(before: str, after: str, old: list[Problem],
               new: list[Problem]) -> list[Problem]:
    """The errors of `new` (in `after`) that `old` (in `before`) did not have."""
    start = common_prefix(before, after)
    tail = common_suffix(before[start:], after[start:])
    head = _point(before, start)
    rest_before, rest_after = _point(before, len(before) - tail), _point(after, len(after) - tail)

    def moved(p: Problem) -> Point | None:
        at = (p.line, p.column)
        if at < head:
            return at
        if at < rest_before:
            return None  # in the changed text
        line = p.line - rest_before[0] + rest_after[0]
        column = p.column - rest_before[1] + rest_after[1] if p.line == rest_before[0] \
            else p.column
        return line, column

    placed: dict[tuple[Point, str], list[Problem]] = defaultdict(list)
    loose: list[Problem] = []
    for p in old:
        at = moved(p)
        if at is None:
            loose.append(p)
        else:
            placed[at, p.message].append(p)
    unmatched = []
    for p in new:
        same = placed.get(((p.line, p.column), p.message))
        if same:
            same.pop()
        else:
            unmatched.append(p)
    if not unmatched:
        return []
    loose += [p for left in placed.values() for p in left]
    return _moved_with_text(before, after, loose, unmatched)


def _moved_with_text(before: str, after: str, old: list[Problem],
                     new: list[Problem]) -> list[Problem]:
    """The errors of `new` that no error of `old` explains by its message and the text of
    its line."""
    before_lines, after_lines = before.split("\n"), after.split("\n")
    left: dict[tuple[str, str], int] = defaultdict(int)
    for p in old:
        left[p.message, _line(before_lines, p.line)] += 1
    fresh = []
    for p in new:
        key = p.message, _line(after_lines, p.line)
        if left[key] > 0:
            left[key] -= 1
        else:
            fresh.append(p)
    return fresh


def _line(lines: list[str], number: int) -> str:
    return lines[number - 1].strip() if 0 < number <= len(lines) else ""


def _point(text: str, offset: int) -> Point:
    """(1-based line, 1-based column) of a character offset."""
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1
