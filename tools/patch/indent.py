"""The indentation tier's mapping (docs/protocol.md, `file.patch`): ONE rule that takes
every line of `find` onto its file line, then writes `replace` through it.

An agent often sends a `find` indented its own way: shifted (it dropped the class around a
method, or started at a continuation line), or in another unit (tabs for a 4-space file, 2
spaces for 4). The tier matches lines ignoring their indentation, so which columns the
replacement lands in is decided here, and nowhere is one line trusted alone:

- a uniform shift: the same whitespace added to (or taken from the front of) every line's
  indentation;
- else a change of unit: every indentation reads as whole levels of a unit (a tab, or N
  spaces) plus a remainder of spaces (alignment, as under an open bracket); every line keeps
  its remainder and its levels (all moved by the same number of levels, as when `find` also
  left out enclosing blocks), `find`'s unit becoming the region's. The region's unit is its
  own or the file's; `find`'s unit is never guessed from one line: it is what makes the
  lines agree, measured on lines that hold whole levels.

A mapping that does not fit every non-blank line of `find` is no mapping: the tier then
refuses, naming the first line that disagrees. `replace` goes through the same mapping,
blank lines written empty, and no line may come out mixing tabs into a space-indented
region or spaces before a tab.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from itertools import chain, pairwise

TAB = "\t"


def indent(line: str) -> str:
    """The leading whitespace of a line (its line break aside)."""
    body = line.rstrip("\r\n")
    return body[:len(body) - len(body.lstrip())]


def levels(ind: str, unit: str) -> tuple[int, int] | None:
    """(whole levels, remainder spaces) of an indentation in `unit` (a tab, or N spaces);
    None when the indentation cannot be written in that unit (a tab in a space unit, a
    space before a tab)."""
    if unit == TAB:
        tabs = len(ind) - len(ind.lstrip(TAB))
        rest = ind[tabs:]
        return (tabs, len(rest)) if rest.count(" ") == len(rest) else None
    if TAB in ind:
        return None
    return divmod(len(ind), len(unit))


@dataclass(frozen=True)
class Shift:
    """The same whitespace added to the front of every indentation, or taken from it."""

    add: str = ""
    drop: str = ""

    def map(self, ind: str) -> str | None:
        if self.drop:
            return ind[len(self.drop):] if ind.startswith(self.drop) else None
        return self.add + ind

    def agrees(self, ours: str, theirs: str) -> bool:
        return self.map(ours) == theirs

    def describe(self) -> str:
        if self.drop:
            return f"a shift removing {self.drop!r}"
        return f"a shift adding {self.add!r}" if self.add else "no shift"


@dataclass(frozen=True)
class Regrid:
    """`find`'s unit becomes the region's: every line keeps its remainder and its levels,
    all moved by `offset` levels. An indentation `find` itself uses is written as the file
    line it matched has it (so alignment after a tab stays as the file wrote it)."""

    src: str
    dst: str
    offset: int = 0
    known: tuple[tuple[str, str], ...] = ()
    one_level: bool = False  # `src` read off lines of one depth: it writes no other width

    def map(self, ind: str) -> str | None:
        if ind in self.ambiguous:
            return None
        theirs = self._known.get(ind)
        return theirs if theirs is not None else self._measured(ind)

    @cached_property
    def _known(self) -> dict[str, str]:
        """`known` by find's indentation: one lookup a line, however many indentations
        `find` has (a scan of them all made a long find quadratic)."""
        return dict(self.known)

    @cached_property
    def ambiguous(self) -> frozenset[str]:
        """Indentations `find` uses for file lines indented differently (8 spaces for a
        Makefile's `\t    ` continuation and its `\t\t` line): no one width writes them."""
        seen: dict[str, str] = {}
        return frozenset(ours for ours, theirs in self.known
                         if seen.setdefault(ours, theirs) != theirs)

    def _measured(self, ind: str) -> str | None:
        measured = levels(ind, self.src)
        if measured is None or measured[0] + self.offset < 0:
            return None
        return self.dst * (measured[0] + self.offset) + " " * measured[1]

    def agrees(self, ours: str, theirs: str) -> bool:
        """Does `find`'s line, read in `find`'s unit, come out as the file line; or the
        file line, read in the region's unit, as `find`'s (alignment after a tab may be
        wider than a level)?"""
        if self._measured(ours) == theirs:
            return True
        target = levels(theirs, self.dst)
        if target is None or target[0] - self.offset < 0 or self.src == TAB:
            return False
        return TAB not in ours and len(ours) == (
            (target[0] - self.offset) * len(self.src) + target[1])

    def describe(self) -> str:
        moved = f", {self.offset:+d} levels" if self.offset else ""
        return f"a change of unit from {self.src!r} to {self.dst!r}{moved}"


Mapping = Shift | Regrid


@dataclass(frozen=True)
class Misfit:
    """Why no mapping fits: the first line that disagrees (1-based within `find` or
    `replace`, as `part` says) and a sentence an agent can act on, which names the two
    texts `{find}` and `{replace}` until `said` names them as the caller's parameters."""

    part: str
    line: int
    reason: str

    def said(self, find: str, replace: str) -> str:
        """The reason, naming `find` and `replace` as the caller calls them
        (`patches[0].find`, a hunk's old lines)."""
        return self.reason.replace("{find}", find).replace("{replace}", replace)


def fit(pairs: list[tuple[str, str]], replace_inds: list[str | None], units: Iterable[str],
        agent_unit: str | None, spaces_only: bool) -> Mapping | Misfit:
    """The one mapping that takes every `find` indentation onto its file line's (`pairs`:
    (find's, file's) for each non-blank line of `find`) and writes every `replace`
    indentation (None for a blank line) in the region. `units` are the region's candidate
    units, asked for only when no shift fits; `agent_unit` the unit `find` and `replace`
    show by their own nesting (a change of unit must agree with it); `spaces_only` says a
    tab would be mixed into a space-indented region."""
    shift = _shift(pairs)
    candidates = chain([] if shift is None else [shift],
                       (r for unit in units for r in _regrids(pairs, unit, agent_unit)))
    misfit = _first_disagreement(pairs)
    seen = {ours for ours, _ in pairs}
    for mapping in candidates:
        if not all(mapping.agrees(f, r) for f, r in pairs):
            continue
        bad = _first_unwritable(mapping, replace_inds, seen, agent_unit, spaces_only)
        if bad is None:
            return mapping
        misfit = bad
    return misfit


def onto(lines: list[str], target: str, units: Iterable[str],
         spaces_only: bool) -> list[str] | Misfit:
    """A block of lines (no line breaks) moved so its first non-blank line is indented
    `target`, every line through the one mapping that takes that line there: a shift,
    else a change of the block's unit into one of `units` (code.edit's `text` placed at a
    symbol). Blank lines come out empty."""
    inds = [indent(line) if line.strip() else None for line in lines]
    base = next(ind for ind in inds if ind is not None)
    units = list(units)
    agent = unit_of(lines)
    mapping: Mapping | Misfit | None = None
    if agent and units and agent != units[0]:  # written in another unit: convert it
        mapping = _converted(base, target, agent, units[0], inds, spaces_only)
    if mapping is None:
        mapping = fit([(base, target)], inds, units, agent, spaces_only)
    if isinstance(mapping, Misfit):
        return mapping
    placed = []
    for line, ind in zip(lines, inds):
        out = None if ind is None else mapping.map(ind)
        placed.append("" if ind is None or out is None else out + line[len(ind):])
    return placed


def _converted(base: str, target: str, src: str, dst: str, inds: list[str | None],
               spaces_only: bool) -> Regrid | None:
    """The change of unit from the block's own unit to the file's that puts its base at
    `target`, if it writes every line in the file's characters."""
    ours, theirs = levels(base, src), levels(target, dst)
    if ours is None or theirs is None or ours[1] or theirs[1]:
        return None
    regrid = Regrid(src, dst, theirs[0] - ours[0])
    for ind in inds:
        out = None if ind is None else regrid.map(ind)
        if ind is not None and (out is None or (spaces_only and TAB in out)):
            return None
    return regrid


def _shift(pairs: list[tuple[str, str]]) -> Shift | None:
    ours, theirs = pairs[0]
    if theirs.endswith(ours):
        return Shift(add=theirs[:len(theirs) - len(ours)])
    if ours.endswith(theirs):
        return Shift(drop=ours[:len(ours) - len(theirs)])
    return None


def _regrids(pairs: list[tuple[str, str]], dst: str, agent_unit: str | None) -> list[Regrid]:
    """The changes of unit into `dst` the lines allow. `find`'s unit is a tab when it
    indents with tabs; else the agent's own unit (from its nesting), else the space width
    that makes `find`'s whole-level lines agree with the region's: first with no offset
    (as the spec reads), then with one. Never a width read off one line against another
    unit the agent shows."""
    theirs = [levels(r, dst) for _, r in pairs]
    if any(t is None for t in theirs):
        return []
    known = tuple(dict.fromkeys(pairs))
    finds = [f for f, _ in pairs]
    if any(TAB in f for f in finds):
        # the levels moved are read off a line that is whole levels on both sides: a
        # gofmt continuation line (`\t\t            b)`) may open find, and its file line
        # (20 spaces) reads as more levels than it holds
        ours = [levels(f, TAB) for f in finds]
        at = next((i for i, (o, t) in enumerate(zip(ours, theirs))
                   if o is not None and t is not None and o[1] == t[1] == 0), 0)
        anchor = ours[at]
        if anchor is None or dst == TAB:
            return []
        return [Regrid(TAB, dst, theirs[at][0] - anchor[0], known)]  # type: ignore[index]
    whole = [(len(f), t[0]) for f, t in zip(finds, theirs) if t is not None and t[1] == 0]
    steps: list[tuple[int, int, bool]] = []  # (width of find's unit, offset, one level)
    if agent_unit and agent_unit != TAB and whole:
        width, level = whole[0]
        if width % len(agent_unit) == 0:
            steps.append((len(agent_unit), level - width // len(agent_unit), False))
    depths = {level for _, level in whole}
    steps += [(width // level, 0, len(depths) == 1) for width, level in whole[:1]
              if level and width and width % level == 0]
    for (w1, l1), (w2, l2) in pairwise(whole):
        if l1 != l2 and (w1 - w2) % (l1 - l2) == 0 and (w1 - w2) // (l1 - l2) > 0:
            step = (w1 - w2) // (l1 - l2)
            if w1 % step == 0:
                steps.append((step, l1 - w1 // step, False))
            break
    # the agent's unit, read off its rises, may be alignment (12 columns under a bracket):
    # a step it is a whole number of still agrees with it
    found = [Regrid(" " * step, dst, offset, known, one)
             for step, offset, one in dict.fromkeys(steps)
             if agent_unit in (None, TAB) or len(agent_unit) % step == 0]
    return [r for r in found if (r.src, r.offset) != (dst, 0)]


def _first_disagreement(pairs: list[tuple[str, str]]) -> Misfit:
    """The first line of `find` whose indentation does not follow the shift its first line
    implies (nor any change of unit, or the caller would have found one)."""
    shift = _shift(pairs)
    first_find, first_file = pairs[0]
    for number, (ours, theirs) in enumerate(pairs[1:], 2):
        if shift is None or shift.map(ours) != theirs:
            return Misfit("find", number, (
                f"{{find}} line {number} is indented {ours!r} where the file has "
                f"{theirs!r}, but {{find}} line 1 is indented {first_find!r} where the "
                f"file has {first_file!r}: no single shift or change of unit fits both"))
    return Misfit("find", 1, f"{{find}} line 1 is indented {first_find!r} where the file "
                             f"has {first_file!r}, which no shift or change of unit maps")


def _first_unwritable(mapping: Mapping, replace_inds: list[str | None], seen: set[str],
                      agent_unit: str | None, spaces_only: bool) -> Misfit | None:
    """The first `replace` line the mapping cannot write in the region's characters: no
    tab into a space-indented region, no space before a tab, and no whole level of the
    agent's spaces after a tab (that is a level written in spaces, not alignment)."""
    for number, ind in enumerate(replace_inds, 1):
        if ind is None:
            continue
        out = mapping.map(ind)
        if ind not in seen and isinstance(mapping, Regrid) and mapping.one_level:
            out = None  # a width `find` does not show, in a unit it does not show either
        if out is not None and ind not in seen:
            measured = levels(out, TAB)
            spaces_as_level = (measured is not None and TAB in out and agent_unit not in
                               (None, TAB) and measured[1] >= len(agent_unit))
            if measured is None or (spaces_only and TAB in out) or spaces_as_level:
                out = None
        if isinstance(mapping, Regrid) and ind in mapping.ambiguous:
            return Misfit("replace", number, (
                f"{{replace}} line {number} is indented {ind!r}, which {{find}} uses for "
                "lines the file indents differently, so no one indentation writes it: "
                "copy {find} and {replace} with the file's own indentation"))
        if out is None:
            return Misfit("replace", number, (
                f"{{replace}} line {number} is indented {ind!r}, which "
                f"{mapping.describe()} (the mapping that fits {{find}}) cannot write in "
                "this region's indentation"))
    return None


def unit_of(*blocks: list[str]) -> str | None:
    """The indentation unit the blocks of lines use: a tab when most indented lines start
    with one, else the most common increase of space indentation from one line to the next
    within a block (the smallest on a tie); None when no line says."""
    return unit_from_indents(*([indent(line) for line in lines if line.strip()]
                               for lines in blocks))


def unit_from_indents(*blocks: list[str]) -> str | None:
    """unit_of, given the indentation of each non-blank line of each block."""
    firsts: Counter[str] = Counter()
    rises: Counter[int] = Counter()
    for inds in blocks:
        firsts.update(ind[0] for ind in inds if ind)
        widths = [None if TAB in ind else len(ind) for ind in inds]
        rises.update(b - a for a, b in pairwise(widths)
                     if a is not None and b is not None and b > a)
    if firsts and firsts[TAB] > firsts[" "]:
        return TAB
    if not rises:
        return None
    return " " * min(rises, key=lambda rise: (-rises[rise], rise))
