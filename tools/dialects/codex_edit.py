"""One file's V4A hunks applied to its text, through the core's edit engine.

codex_seek finds each hunk's place; the change itself is a core patch (tools/patch/match)
run on exactly that region, so the core's tiers decide how it is written: an exact region
is replaced as given, CRLF regions get CRLF, and a region that differs in indentation goes
through the core's indentation mapping (re-indented into the file's unit, or refused
when no single mapping fits every line). A region found only by Codex's Unicode tier is
replaced as Codex replaces it: the hunk's lines as written. Pure additions (a hunk with
no `-` or context lines) are inserted in the file's line-break style.
"""

from __future__ import annotations

from itertools import accumulate

from chorus_tools.tools.dialects.codex_seek import (
    Lines,
    NotFound,
    NotUnique,
    Place,
    place,
)
from chorus_tools.tools.dialects.v4a import Hunk
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.context import Limits
from chorus_tools.tools.patch.diff import unified_diff
from chorus_tools.tools.patch.explain import missed, occurrences
from chorus_tools.tools.patch.match import Refusal, apply, locate
from chorus_tools.tools.patch.diagnostics import Judge


def edit(text: str, hunks: tuple[Hunk, ...], path: str, judge: Judge) -> str:
    """`text` with every hunk applied (each after the one before); find_not_found or
    find_not_unique naming the hunk's patch line otherwise; `judge` guards a hunk found
    by a looser tier than exact."""
    parts = text.split("\n")  # only "\n" ends a line, a "\r" before it too
    if parts[-1] == "":
        parts.pop()
    starts = [0, *accumulate(len(part) + 1 for part in parts)]
    starts[-1] = min(starts[-1], len(text))  # a last line without its line break
    if "\r" in text:
        parts = [part.removesuffix("\r") for part in parts]
    lines = Lines(parts)
    places: list[tuple[Place, Hunk]] = []
    after = 0
    for index, hunk in enumerate(hunks):
        try:
            where = place(lines, hunk, after)
        except NotFound as miss:
            raise _not_found(text, miss, hunk, index, path) from None
        except NotUnique as many:
            raise _not_unique(many, hunk, index, path) from None
        places.append((where, hunk))
        if where.length or hunk.anchors:  # an appended hunk moves no search (as in Codex)
            after = where.start + where.length
    pieces, pos = [], 0
    eol = "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"
    for index, (where, hunk) in sorted(enumerate(places),
                                       key=lambda p: (p[1][0].start, p[1][0].length)):
        begin, end = starts[where.start], starts[where.start + where.length]
        pieces.append(text[pos:begin])
        if where.length == 0:
            pieces.append(_insertion(text, begin, where.new, eol))
        else:
            pieces.append(_replace(text[begin:end], where, hunk, index, path))
        pos = end
    pieces.append(text[pos:])
    result = "".join(pieces)
    loose = next(((i, w.tier) for i, (w, _) in enumerate(places) if w.tier != "exact"), None)
    if loose is not None:
        _guard(judge, path, text, result, *loose)
    return result


def _guard(judge: Judge, path: str, before: str, after: str, index: int, tier: str) -> None:
    """The syntax guard of file.patch: a hunk found by a looser tier than exact must not
    leave a syntax error the file did not have."""
    found = judge.guard(before, after, f"hunk {index + 1} (matched by the {tier} tier)",
                        patch_index=index, tier=tier)
    if found is not None:
        diff = unified_diff(before, after, path, created=False, limit=Limits.max_diff_bytes)
        raise ToolError("edit_breaks_syntax",
                        f"Hunk {index + 1} for {path}, matched by the {tier} tier, would leave "
                        f"a syntax error at line {found.line} ({judge.language}: "
                        f"{found.message}) that the file did not have; nothing was written. "
                        "Copy the context lines exactly from the file (an exact match is "
                        "applied as given). The change it would have made:", quote=diff,
                        path=path, patch_index=index, tier=tier, line=found.line,
                        reason=found.message, diff=diff)


def _insertion(text: str, at: int, new: tuple[str, ...], eol: str) -> str:
    lead = eol if at == len(text) and text and not text.endswith("\n") else ""
    return lead + "".join(line + eol for line in new)


def _replace(region: str, where: Place, hunk: Hunk, index: int, path: str) -> str:
    """The region rewritten by the core's matcher (its tiers and indentation mapping)."""
    tail = "\n" if region.endswith("\n") else ""
    find = "\n".join(where.old) + tail
    replace = "\n".join(where.new) + (tail if where.new else "")
    match = None if where.tier == "unicode" else locate(region, find, replace)
    if where.tier == "unicode":
        match = locate(region, region, replace)  # Codex's widest tier: the lines as given
    if match is None or isinstance(match, Refusal):
        why = {} if match is None else {
            "reason": match.misfit.said("the hunk's old side", "its new side"),
            f"{match.misfit.part}_line": match.misfit.line}
        shown = region.removesuffix("\n")
        lines = f"lines {where.start + 1}-{where.start + where.length}"
        raise ToolError(
            "find_not_found",
            f"The hunk at patch line {hunk.line} fits {lines} of {path} only when "
            "indentation is ignored, and no single indentation change maps every one of its "
            "lines onto the file's" + (f" ({why['reason']})" if why else "") + ". Copy the "
            f"lines with the file's own indentation; {lines} follow exactly as in the file:",
            quote=shown, path=path, patch_index=index, line=hunk.line,
            hint={"start_line": where.start + 1, "end_line": where.start + where.length,
                  "text": shown, "similarity": 1.0}, **why)
    return apply(region, match)


def _not_found(text: str, miss: NotFound, hunk: Hunk, index: int, path: str) -> ToolError:
    wanted = "\n".join(miss.what)
    if miss.anchor:
        head = f"Failed to find context {wanted!r} in {path}"
    else:
        head = f"Failed to find expected lines in {path}:\n{wanted}"
    where, quote, data = missed(text, wanted, "the hunk")
    return ToolError("find_not_found", f"{head}\n(hunk at patch line {hunk.line}; searched "
                     f"after the previous hunk, exactly, then ignoring trailing and leading "
                     f"whitespace and Unicode punctuation.) {where}", quote=quote, path=path,
                     patch_index=index, line=hunk.line, anchor=miss.anchor, **data)


def _not_unique(many: NotUnique, hunk: Hunk, index: int, path: str) -> ToolError:
    lines = [s + 1 for s in many.starts]
    return ToolError("find_not_unique",
                     f"The hunk at patch line {hunk.line} fits {len(lines)} places in {path} "
                     f"({occurrences(lines)}; {many.tier} match) and its @@ anchor does not "
                     "decide between them. Add context lines, or an '@@ <line>' anchor "
                     "naming the class or function just above the change.", path=path,
                     patch_index=index, line=hunk.line, count=len(lines), lines=lines,
                     tier=many.tier)
