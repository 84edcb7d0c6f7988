"""The problems a change leaves in a Python file and which of them it brought
(docs/protocol.md, Diagnostics): tools.patch.pyproblems finds them, this compares.

A problem is introduced when the text before did not have it: problems are compared as a
multiset of (code, message without line numbers, the stripped text of its line), so one
that only moved is not new, and a definition renamed at one place makes every read of the
old name new. The text after is always checked (never stale); the text before is most
often the text an earlier call wrote, so its problems are kept by the text's hash and an
edit normally pays one check; of the text after only what changed, when an earlier check
of the text before says how (tools.patch.pyincremental). The top-level names
broken_imports compares come from the same checks (one parse of a text gives both).
"""

from __future__ import annotations

import hashlib
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from chorus_tools.tools.code.bounds import Budget, Skipped
from chorus_tools.tools.patch.pyincremental import update
from chorus_tools.tools.patch.pyproblems import (Checked, Finding, Modules, findings,
                                                 imports_again, top_level_names)

SHOWN = 20  # problems a reply lists
_KEPT = 256  # checked texts whose problems are kept
# of those, the latest ones that also keep what an incremental check needs (a 200 KiB
# module's bindings are ~1 MB): the next edit of a file usually starts from its latest
_KEPT_INCREMENTAL = 16

_kept: OrderedDict[tuple[str, bytes], Checked] = OrderedDict()
_incremental: OrderedDict[tuple[str, bytes], None] = OrderedDict()
# what finds a language's problems: (path, text, budget, modules) -> its findings in file
# order and, for Python, its top-level names; or Skipped (pyflakes here; oxlint for
# JavaScript and TypeScript: jsproblems)
Check = Callable[[str, str, Budget, "Modules | None"], Checked]


@dataclass(frozen=True)
class Problems:
    """What the check of a text after a change found (`skipped`: why it did not run), and
    the files that import a top-level name the change removed (tools.patch.broken)."""

    found: list[Finding] = field(default_factory=list)
    introduced: list[Finding] = field(default_factory=list)
    skipped: str | None = None
    broken: list[dict[str, Any]] = field(default_factory=list)
    broken_total: int = 0

    def reply(self) -> dict[str, Any]:
        """The fields a `diagnostics` object gains: at most SHOWN problems, the
        introduced ones first."""
        if self.skipped is not None:
            return {"problems_checked": True, "problems": {"skipped": self.skipped}}
        new = set(map(id, self.introduced))
        shown = [*self.introduced, *(f for f in self.found if id(f) not in new)][:SHOWN]
        out: dict[str, Any] = {
            "problems_checked": True,
            "problems": [f.reply(id(f) in new) for f in shown],
            "problems_total": len(self.found), "problems_introduced": len(self.introduced)}
        if self.broken_total:
            out |= {"broken_imports": self.broken[:SHOWN],
                    "broken_imports_total": self.broken_total}
        return out


def compare(path: str, before: str | None, after: str, budget: Budget,
            modules: Modules | None, check: Check = findings) -> Problems:
    """The problems of `after` and which of them `before` (None: no file) did not have,
    as `check` finds them; Problems(skipped=...) when a bound or the checker stopped the
    check."""
    try:
        prior = None if before is None else _kept.get((path, _digest(before)))
        checked = None if prior is None else update(path, before or "", prior, after,
                                                     budget, modules)
        if checked is None:
            checked = check(path, after, budget, modules)
        _keep(path, after, checked)
        new = checked.found
        if not new:
            return Problems()
        old = [] if before is None else _found_before(path, before, budget, modules, check)
    except Skipped as skipped:
        return Problems(skipped=skipped.reason)
    return Problems(new, introduced(before or "", after, old, new))


def _found_before(path: str, before: str, budget: Budget, modules: Modules | None,
                  check: Check) -> list[Finding]:
    """The problems of the text before a change. One the checker cannot judge (it did not
    parse: the change fixed its syntax) had none that could be found, so every problem of
    the text after is new; never a reason to leave the text after unchecked."""
    try:
        return _before(path, before, budget, modules, check).found
    except Skipped as skipped:
        if skipped.kind != "checker":
            raise
        return []


def top_level(path: str, text: str) -> set[str] | None:
    """The names `text`, the module at `path`, defines at its top level (None: it may
    define any): from its check when one was kept, else from a parse of its own."""
    kept = _kept.get((path, _digest(text)))
    if kept is not None:
        return kept.names
    return top_level_names(text.encode("utf-8", "surrogatepass"))


def introduced(before: str, after: str, old: list[Finding],
               new: list[Finding]) -> list[Finding]:
    """The problems of `new` (in `after`) beyond those of `old` (in `before`), compared as
    a multiset of (code, key, stripped line text)."""
    before_lines = _lines(before)
    left = Counter(_identity(f, before_lines) for f in old)
    after_lines = _lines(after)
    fresh = []
    for f in new:
        key = _identity(f, after_lines)
        if left[key] > 0:
            left[key] -= 1
        else:
            fresh.append(f)
    return fresh


def _identity(f: Finding, lines: list[str]) -> tuple[str, str, str]:
    line = lines[f.line - 1].strip() if 0 < f.line <= len(lines) else ""
    return f.code, f.key, line


def _before(path: str, text: str, budget: Budget, modules: Modules | None,
            check: Check) -> Checked:
    key = path, _digest(text)
    found = _kept.get(key)
    if found is None:
        found = check(path, text, budget, modules)
        _keep(path, text, found)
    else:
        _kept.move_to_end(key)
        if check is findings and modules is not None:
            found = imports_again(path, text, found, budget, modules)
    return found


def _keep(path: str, text: str, found: Checked) -> None:
    key = path, _digest(text)
    _kept[key] = found
    _kept.move_to_end(key)
    while len(_kept) > _KEPT:
        _kept.popitem(last=False)
    if found.statements is None:
        return
    _incremental[key] = None
    _incremental.move_to_end(key)
    while len(_incremental) > _KEPT_INCREMENTAL:
        old, _ = _incremental.popitem(last=False)
        if old in _kept:
            _kept[old] = replace(_kept[old], statements=None)


@lru_cache(maxsize=2)  # one edit's text after is the next one's text before
def _lines(text: str) -> list[str]:
    return text.split("\n")


@lru_cache(maxsize=2)  # one call asks for the texts before and after more than once
def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
