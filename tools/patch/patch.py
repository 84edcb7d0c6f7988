"""file.patch: ordered search-and-replace edits, all or nothing, written atomically.

Matching (the three tiers) lives in tools.patch_match, the hint for a `find` that matched
nowhere in tools.patch_hint; this module checks the params, runs the patches inside
tools.atomic.mutate (so the version check, the lock and the write are those of every
mutation), keeps the file's encoding, and reports what happened with a unified diff
(tools.patch_diff).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from chorus_tools.tools.mutate.atomic import Current, mutate
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.patch.diff import unified_diff
from chorus_tools.tools.patch.explain import missed, occurrences
from chorus_tools.tools.patch.hint import escaped_newlines
from chorus_tools.tools.patch.match import (EXACT, Match, Refusal, apply, content, exact_at,
                                            locate)
from chorus_tools.tools.patch.diagnostics import Judge, refuse_introduced, with_diagnostics
from chorus_tools.tools.confine.sandbox import version_of
from chorus_tools.tools.read.read import window_text
from chorus_tools.tools.read.reencode import encode_edit
from chorus_tools.tools.read.text import (SNIFF_BYTES, binary_mime, decode, decoded,
                                         lines_with_endings)

COUNT_LIMIT = 1000  # occurrences counted for find_not_unique: more would say nothing new
LINES_SHOWN = 100  # lines listed in find_not_unique's data


def patch(ctx: ToolContext, path: str, patches: list[dict[str, Any]], dry_run: bool = False,
          expected_version: str | None = None) -> dict[str, Any]:
    """Apply `patches` in order, each to the result of the one before. Any error leaves
    the file untouched; `dry_run` does everything (checks, matching, diff) but the write."""
    return patched(ctx, path, patches, dry_run, expected_version).result


@dataclass
class Patched:
    """file.patch's result beside the bytes it found and wrote: an editor that answers
    with a snippet of the new file, or keeps the old one for its undo, needs no second
    read of the file (nor a version check between the two)."""
    result: dict[str, Any]
    found: bytes | None  # the file as the patch read it under the lock (None: created)
    written: bytes | None  # what replaced it (None: a dry run)

    def window(self, ctx: ToolContext, offset: int, limit: int,
               raw: bool = False) -> dict[str, Any]:
        """Lines of the patched file as file.read answers them (its in-memory path, which
        answers as its streamed one does), from the bytes written."""
        assert self.written is not None  # not a dry run
        return window_text(decoded(self.written).text, offset, limit, raw, ctx.limits)


def patched(ctx: ToolContext, path: str, patches: list[dict[str, Any]],
            dry_run: bool = False, expected_version: str | None = None) -> Patched:
    """`patch`, with the bytes it found and wrote."""
    _check_patches(patches)
    return _planned(ctx, path, lambda _: patches, dry_run, expected_version,
                    creating=patches[0]["find"] == "")


Plan = Callable[[str], list[dict[str, Any]]]


def planned(ctx: ToolContext, path: str, plan: Plan, dry_run: bool = False,
            expected_version: str | None = None, creating: bool = False) -> dict[str, Any]:
    """file.patch with the patches `plan` writes from the file's text, under the same lock
    as their write (code.edit's way to the one write path). A planned patch may pin its
    exact occurrence (`at`: its offset), ask for the guard whatever its tier (`guard`:
    what the change is, for the message) and name the parameter its `replace` came from
    (`param`, for an error about that text)."""
    return _planned(ctx, path, plan, dry_run, expected_version, creating).result


def _planned(ctx: ToolContext, path: str, plan: Plan, dry_run: bool,
             expected_version: str | None, creating: bool) -> Patched:
    rel = ctx.ws.rel(path)
    done: dict[str, Any] = {}

    def compute(current: Current) -> bytes | None:
        done["reached"] = True
        before, encoding = _current_text(current, creating, path)
        patches = plan(before)
        created = current.data is None
        judge = Judge.of(ctx, rel, before or patches[0]["replace"], shown=path)
        guard = _Guard(ctx, path, rel, before, judge)
        after, matches = _apply_all(before, patches, path, guard, created=created)
        new = _encode(after, encoding, patches, path, before, current.data)
        limit = ctx.limits.max_write_bytes
        if len(new) > limit:
            raise ToolError("file_too_large",
                            f"The patched file would be {len(new)} bytes, over the "
                            f"{limit}-byte write limit: {path}.", path=path, size=len(new),
                            limit=limit)
        diagnosis = judge.diagnosis(None if created else before, after)
        refuse_introduced(judge, diagnosis, path, lambda: guard.diff(after))
        done.update(before=before, after=after, matches=matches, created=created,
                    diagnosis=diagnosis, found=current.data, written=None if dry_run else new)
        return done["written"]

    try:
        out = mutate(ctx, rel, shown=path, compute=compute, expected_version=expected_version)
    except ToolError as err:
        if err.code == "file_not_found" and "reached" not in done:
            raise _no_parent(path, creating=creating) from None
        raise
    matches = done["matches"]
    result = {
        "success": True,
        "patches_applied": len(matches),
        "replacements": sum(m["count"] for m in matches),
        "matches": matches,
        "diff": unified_diff(done["before"], done["after"], rel, created=done["created"],
                             limit=ctx.limits.max_diff_bytes),
        "version": None if out.stat is None else version_of(out.stat),
    }
    return Patched(with_diagnostics(result, done["diagnosis"]), done["found"], done["written"])


def _no_parent(path: str, *, creating: bool) -> ToolError:
    """mutate found no parent directory: say so in file.patch's terms."""
    fix = ("file.patch creates files but not directories; use file.write, which creates "
           "parent directories." if creating else "Check the path with file.list.")
    return ToolError("file_not_found",
                     f"File not found: {path} (its parent directory does not exist). {fix}",
                     path=path)


def _check_patches(patches: list[dict[str, Any]]) -> None:
    """The semantic checks the params schema cannot make, before the disk is touched."""
    if not patches:
        raise ToolError("invalid_params", "'patches' is empty: give at least one "
                        "edit.", param="patches")
    for i, p in enumerate(patches):
        if p["find"] == p["replace"]:
            raise ToolError("invalid_params",
                            f"patches[{i}].find and patches[{i}].replace are identical, so "
                            f"patches[{i}] would change nothing. Put the new text in "
                            f"patches[{i}].replace, or drop patches[{i}].",
                            param=f"patches[{i}].replace", patch_index=i)
        if i > 0 and p["find"] == "":
            raise _empty_find(i)


def _empty_find(i: int) -> ToolError:
    return ToolError("invalid_params",
                     f"patches[{i}].find is empty, which only creates a missing file (and "
                     "only as the first patch); to edit a file, give the exact text to "
                     "replace, or use file.write to replace the whole file.",
                     param=f"patches[{i}].find", patch_index=i)


def _current_text(current: Current, creating: bool, path: str) -> tuple[str, str]:
    """The file's text and encoding; a missing file is '' in UTF-8 when the first patch
    creates it. Binary files are refused."""
    if current.data is None:
        if not creating:
            raise ToolError("file_not_found",
                            f"File not found: {path}. To create it with file.patch, give "
                            "patches[0].find as \"\" and the content as "
                            "patches[0].replace (or use file.write).", path=path)
        return "", "utf-8"
    if creating:
        raise _empty_find(0)
    mime = binary_mime(current.data[:SNIFF_BYTES])
    if mime is not None:
        raise ToolError("binary_file",
                        f"Binary file ({mime}): {path}. file.patch edits text only; use "
                        "file.write to replace it whole.", path=path, mime_type=mime,
                        size=len(current.data))
    return decode(current.data)


class _Guard:
    """The syntax guard of one call: a patch applied by a looser tier than exact must not
    leave a syntax error that the text before it did not have (docs/protocol.md,
    `file.patch`), unless `--syntax-gate off`. A text past the parse's bounds cannot be
    checked, so such a patch is refused, saying which bound."""

    def __init__(self, ctx: ToolContext, path: str, rel: str, original: str,
                 judge: Judge) -> None:
        self.ctx, self.path, self.rel, self.original, self.judge = ctx, path, rel, original, judge

    def diff(self, after: str) -> str:
        return unified_diff(self.original, after, self.rel, created=False,
                            limit=self.ctx.limits.max_diff_bytes)

    def check(self, i: int, tier: str, before: str, after: str,
              what: str | None = None) -> None:
        """`what` names a change the server placed (code.edit's): guarded even though
        its text is matched exactly."""
        if tier == EXACT and what is None:
            return  # the agent's own text: never second-guessed
        first = self.judge.guard(before, after,
                                 what or f"patches[{i}] (matched by the {tier} tier)",
                                 patch_index=i, tier=tier)
        if first is None:
            return
        diff = self.diff(after)
        shown = self.judge.diagnosis(self.original, after) if self.judge.gate == "all" \
            else None  # --syntax-gate all: every refusal says data.diagnostics
        details: dict[str, Any] = {} if shown is None else {"diagnostics": shown.reply()}
        if what is not None:
            raise ToolError("edit_breaks_syntax",
                            f"{what} would leave a syntax error at line {first.line} of "
                            f"{self.path} ({self.judge.language}: {first.message}), which "
                            "the file did not have; nothing was written. Fix the text (its "
                            "brackets, its indentation) and send it again. The change it "
                            "would have made:", quote=diff, path=self.path,
                            patch_index=i, tier=tier, line=first.line, reason=first.message,
                            diff=diff, **details)
        raise ToolError("edit_breaks_syntax",
                        f"patches[{i}] matched by the {tier} tier would leave a syntax error "
                        f"at line {first.line} of {self.path} ({self.judge.language}: "
                        f"{first.message}), which the file did not have; nothing was "
                        f"written. Resend the patch with patches[{i}].find copied exactly "
                        "from the file (an exact match is applied as given), or fix "
                        f"patches[{i}].replace's indentation. The change it would have "
                        "made:", quote=diff,
                        path=self.path, patch_index=i, tier=tier, line=first.line,
                        reason=first.message, diff=diff, **details)


def _apply_all(text: str, patches: list[dict[str, Any]], path: str, guard: _Guard, *,
               created: bool) -> tuple[str, list[dict[str, Any]]]:
    """Run the patches in order on `text`; the report of each, or the first error."""
    reports = []
    for i, p in enumerate(patches):
        if i == 0 and created:
            text = p["replace"]
            reports.append({"patch_index": 0, "tier": "exact", "count": 1, "lines": [1]})
            continue
        expected = p.get("count")  # an exact number of occurrences (the shadow set's)
        replace_all = p.get("replace_all", False) or (expected or 0) > 1
        limit = None if replace_all else max(COUNT_LIMIT, (expected or 0) + 1)
        match = (locate(text, p["find"], p["replace"], replace_all, limit) if "at" not in p
                 else exact_at(text, p["find"], p["replace"], p["at"]))
        if match is None:
            raise _not_found(text, p["find"], i, path)
        if isinstance(match, Refusal):
            raise _misfit(text, match, i, path)
        found = len(match.edits)
        if found != expected if expected else found > 1 and not replace_all:
            raise _not_unique(match, i, path, expected)
        after = apply(text, match)
        guard.check(i, match.tier, text, after, p.get("guard"))
        text = after
        reports.append({"patch_index": i, "tier": match.tier, "count": len(match.edits),
                        "lines": match.lines})
    return text, reports


def _not_unique(match: Match, i: int, path: str, expected: int | None) -> ToolError:
    """find_not_unique with at most LINES_SHOWN lines, every one of them said; a count
    stopped at COUNT_LIMIT says so (a short find in a huge file would otherwise list
    millions)."""
    lines = match.lines
    count = f"at least {len(lines)}" if match.truncated else str(len(lines))
    more = max(len(lines) - LINES_SHOWN, 0)
    where = f"{match.tier} match; {occurrences(lines[:LINES_SHOWN], more)}"
    details: dict[str, Any] = {
        "path": path, "patch_index": i, "count": len(lines), "lines": lines[:LINES_SHOWN],
        "tier": match.tier}
    if more:
        details["more_lines"] = more
    if match.truncated:
        details["count_exact"] = False
    if expected:
        return ToolError("find_not_unique",
                         f"patches[{i}].find occurs {count} times in {path}, not "
                         f"{expected} ({where}). Set patches[{i}].count to the number it "
                         f"occurs, or add surrounding text to patches[{i}].find.",
                         expected=expected, **details)
    return ToolError("find_not_unique",
                     f"patches[{i}].find occurs {count} times in {path} ({where}). Add "
                     f"surrounding lines to patches[{i}].find to make it unique, or set "
                     f"patches[{i}].replace_all: true to replace every occurrence.",
                     **details)


def _misfit(text: str, refusal: Refusal, i: int, path: str) -> ToolError:
    """find_not_found for lines the indentation tier found but could not map: the hint is
    that region, the reason the first line that disagrees."""
    region = "".join(lines_with_endings(text)[refusal.start_line - 1:refusal.end_line])
    hint = {"start_line": refusal.start_line, "end_line": refusal.end_line,
            "text": content(region), "similarity": 0.999}
    misfit = refusal.misfit
    reason = misfit.said(f"patches[{i}].find", f"patches[{i}].replace")
    where: dict[str, Any] = {f"{misfit.part}_line": misfit.line}
    return ToolError("find_not_found",
                     f"patches[{i}].find matches lines {refusal.start_line}-"
                     f"{refusal.end_line} of {path} only when indentation is ignored, and "
                     f"no single indentation mapping fits: {reason}. Nothing was applied. "
                     f"Copy patches[{i}].find from the file's own lines and indent "
                     f"patches[{i}].replace the same way; lines {refusal.start_line}-"
                     f"{refusal.end_line} follow exactly as in the file:",
                     quote=hint["text"], path=path, patch_index=i, hint=hint,
                     reason=reason, **where)


def _not_found(text: str, find: str, i: int, path: str) -> ToolError:
    where, quote, data = missed(text, find, f"patches[{i}].find")
    if escaped_newlines(find):
        where = (f"Note: patches[{i}].find contains the two characters \\n; did you mean "
                 f"a line break? {where}")
    after = " (after the earlier patches)" if i else ""
    return ToolError("find_not_found",
                     f"patches[{i}].find was not found in {path}{after}, neither exactly, "
                     f"nor ignoring line endings, nor ignoring indentation. {where}",
                     quote=quote, path=path, patch_index=i, **data)


def _encode(text: str, encoding: str, patches: list[dict[str, Any]], path: str,
            before: str, original: bytes | None) -> bytes:
    """The text in the file's own encoding, every unchanged byte kept; a character it
    cannot hold is the fault of the first patch whose replace carries one."""
    try:
        return encode_edit(text, encoding, before, original)
    except UnicodeEncodeError as exc:
        bad = text[exc.start:exc.end]
        index = next((i for i, p in enumerate(patches) if bad in p["replace"]), 0)
        # a planned patch says which of its caller's parameters its replace came from
        param = patches[index].get("param", f"patches[{index}].replace")
        raise ToolError("invalid_params",
                        f"{param} holds {bad!r}, which the file's "
                        f"encoding ({encoding}) cannot represent: {path}. Use characters "
                        "the encoding has, or rewrite the file with file.write (UTF-8).",
                        path=path, param=param, patch_index=index,
                        encoding=encoding) from None
