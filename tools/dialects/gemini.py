"""The `gemini` tool set (docs/protocol.md, Tool sets): Gemini CLI's file tools under their
current names and parameters, answering in that harness's texts (`output`, what its
`llmContent` would be) beside a structured result. Followed: google-gemini/gemini-cli at
v0.56.0-nightly.20260822 (commit 5411f113), packages/core/src/tools/ and its Gemini 3
declarations (definitions/model-family-sets/gemini-3.ts). The search tools are in
gemini_search.py.

Where the harness is looser than the core we keep the core's guarantees: `replace` runs
through the patch engine (three tiers, mapping check, syntax guard; never an LLM "fix"),
so its `instruction` is accepted and not used; paths in texts and results are as the
client gave them or workspace-relative, never the absolute root.
"""

from __future__ import annotations

import time
from typing import Any

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.dialects.common import then
from chorus_tools.tools.dialects.gemini_table import REPLACE_WORDS
from chorus_tools.tools.errors import ToolError, in_words
from chorus_tools.tools.mutate.write import write
from chorus_tools.tools.patch.explain import closest
from chorus_tools.tools.patch.note import carried, told
from chorus_tools.tools.patch.patch import Patched, patched
from chorus_tools.tools.read.read import read
from chorus_tools.tools.timefmt import iso_utc
from chorus_tools.tools.walk.fanout import FanOut
from chorus_tools.tools.walk.listing import list_files

DEFAULT_LINES = 2000  # read_file's lines when no end_line is given (DEFAULT_MAX_LINES_TEXT_FILE)
MAX_LINE = 2000  # characters a line keeps (MAX_LINE_LENGTH_TEXT_FILE)
CONTEXT = 5  # lines of context around an edit in replace's answer
DAY_NS = 24 * 3600 * 10**9
def _texts(err: ToolError, path: str) -> ToolError:
    """A core error in Gemini CLI's words for the path errors every tool shares."""
    message = {"file_not_found": f"File not found: {path}",
               "is_directory": f"Path is a directory, not a file: {path}",
               "not_a_directory": f"Path is not a directory: {path}"}.get(err.code)
    return err if message is None else err.saying(message, own_words=True)


def read_file_tool(ctx: ToolContext, file_path: str, start_line: int | None = None,
                   end_line: int | None = None) -> dict[str, Any]:
    if start_line is not None and end_line is not None and start_line > end_line:
        raise ToolError("invalid_params", "start_line cannot be greater than end_line",
                        param="start_line")
    first = start_line or 1
    limit = DEFAULT_LINES if end_line is None else end_line - first + 1
    try:
        got = read(ctx, file_path, offset=first, limit=limit, raw=True)
    except ToolError as err:
        if err.code == "binary_file":
            raise err.saying(f"Cannot display content of binary file: {file_path}",
                             own_words=True) from None
        raise _texts(err, file_path) from None
    rel = ctx.ws.rel(file_path)
    if "image" in got:
        return {"output": f"Read image file: {rel}", "path": rel,
                "image": got["image"], "mime_type": got["mime_type"],
                "version": got["version"]}
    lines, cut = plain_lines(got["content"])
    text = "\n".join(lines)
    if got["truncated"] or first > 1 or cut:
        end = got["end_line"]
        text = (f"\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines "
                f"{got['start_line']}-{end} of {got['total_lines']} total lines.\nAction: To "
                "read more of the file, you can use the 'start_line' and 'end_line' "
                "parameters in a subsequent 'read_file' call. For example, to read the next "
                f"section of the file, use start_line: {end + 1}.\n\n--- FILE CONTENT "
                f"(truncated) ---\n{text}")
    return {"output": text, "path": rel, "start_line": got["start_line"],
            "end_line": got["end_line"], "total_lines": got["total_lines"],
            "version": got["version"]}


def plain_lines(raw: str) -> tuple[list[str], bool]:
    """A raw window's lines without their breaks, each cut at MAX_LINE characters with
    Gemini's marker; and whether any was cut."""
    lines = raw.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    cut = any(len(line) > MAX_LINE for line in lines)
    if cut:
        lines = [line[:MAX_LINE] + "... [truncated]" if len(line) > MAX_LINE else line
                 for line in lines]
    return lines, cut


def write_file_tool(ctx: ToolContext, file_path: str, content: str) -> dict[str, Any]:
    try:
        got = write(ctx, file_path, content)
    except ToolError as err:
        raise _texts(err, file_path) from None
    verb = ("Successfully created and wrote to new file" if got["created"]
            else "Successfully overwrote file")
    rel = ctx.ws.rel(file_path)
    return {"output": told(f"{verb}: {rel}.", got.get("diagnostics")), "path": rel,
            "created": got["created"], "version": got["version"], **carried(got)}


def replace_tool(ctx: ToolContext, file_path: str, old_string: str, new_string: str,
                 allow_multiple: bool = False, instruction: str | None = None,
                 expected_replacements: int | None = None) -> dict[str, Any]:
    """Exactly one occurrence of old_string (every one, at least one, with
    allow_multiple; exactly `expected_replacements`, Gemini CLI's long-standing name for
    the count, with that); an empty old_string creates a missing file."""
    del instruction  # Gemini CLI's LLM self-correction prompt: no edit is ever guessed here
    rel = ctx.ws.rel(file_path)
    try:
        if old_string == "":
            return _create(ctx, file_path, new_string)
        if old_string == new_string:
            raise ToolError("invalid_params", "No changes to apply. The old_string and "
                            f"new_string are identical in file: {file_path}",
                            param="new_string")
        if allow_multiple and expected_replacements is not None:
            raise ToolError("invalid_params", "Give either allow_multiple or "
                            "expected_replacements, not both.",
                            param="expected_replacements")
        how = ({"replace_all": allow_multiple} if expected_replacements is None
               else {"count": expected_replacements})
        done = patched(ctx, file_path, [{"find": old_string, "replace": new_string, **how}])
    except ToolError as err:
        raise _replace_text(err, file_path, expected_replacements) from None
    got = done.result
    count = got["replacements"]
    snippet = _snippet(done, ctx, got["matches"][0]["lines"],
                       old_string.count("\n"), new_string.count("\n"))
    output = (f"Successfully modified file: {rel} ({count} replacements). "
              f"Here is the updated code:\n{snippet}")
    return {"output": told(output, got.get("diagnostics")), "path": rel,
            "replacements": count, "diff": got["diff"], "version": got["version"],
            **carried(got)}


def _create(ctx: ToolContext, file_path: str, content: str) -> dict[str, Any]:
    try:
        got = write(ctx, file_path, content, overwrite=False)
    except ToolError as err:
        if err.code == "already_exists":
            raise err.saying(f"File already exists, cannot create: {file_path}. Give "
                             "the text to replace as old_string.", own_words=True) from None
        raise
    rel = ctx.ws.rel(file_path)
    return {"output": told(f"Created new file: {rel} with provided content.",
                           got.get("diagnostics")), "path": rel,
            "replacements": 1, "diff": "", "version": got["version"], **carried(got)}


def _replace_text(err: ToolError, path: str, expected: int | None = None) -> ToolError:
    """replace's failures in Gemini CLI's words, with what the model needs to fix them:
    why the looser tiers refused, the closest text (quoted after it), or the lines."""
    if err.code == "file_not_found":
        return err.saying(f"File not found: {path}. Cannot apply edit. Use an empty "
                          "old_string to create a new file.", own_words=True)
    if err.code == "find_not_found":
        worded = in_words(err, REPLACE_WORDS)
        hint, why = worded.details.get("hint"), worded.details.get("reason")
        if why and hint:
            why = (f" It matches lines {hint['start_line']}-{hint['end_line']} only when "
                   f"indentation is ignored, and no single indentation mapping fits: {why}.")
        where, _ = closest(hint, "old_string", bool(worded.details.get("hint_cut")))
        return err.saying(f"Failed to edit, 0 occurrences found for old_string in {path}. "
                          "Ensure you're not escaping content incorrectly and check "
                          "whitespace, indentation, and context. Use read_file tool to "
                          f"verify.{why or ''} {where}", own_words=True)
    if err.code == "find_not_unique":
        more = err.details.get("more_lines")
        if expected is not None:
            err.details.setdefault("expected", expected)
            return err.saying(f"Failed to edit, Expected {expected} occurrence"
                              f"{'' if expected == 1 else 's'} but found "
                              f"{err.details.get('count')} for old_string in file: {path}. "
                              f"It occurs at lines {err.details.get('lines')}"
                              + (f" and {more} more" if more else "") + ".",
                              own_words=True)
        return err.saying(f"Failed to edit, Expected 1 occurrence but found "
                          f"{err.details.get('count')} for old_string in file: {path}. If "
                          "you intended to replace multiple occurrences, set "
                          f"'allow_multiple' to true. It occurs at lines "
                          f"{err.details.get('lines')}" + (f" and {more} more" if more
                                                           else "") + ".", own_words=True)
    return _texts(err, path)


def _snippet(done: Patched, ctx: ToolContext, lines: list[int], old_breaks: int,
             new_breaks: int) -> str:
    """The edited regions of the new file with CONTEXT lines around each, `...` between
    and beyond them (Gemini CLI's getDiffContextSnippet)."""
    shift = new_breaks - old_breaks
    spans = [(line + i * shift, line + i * shift + new_breaks) for i, line in enumerate(lines)]
    first = max(1, spans[0][0] - CONTEXT)
    got = done.window(ctx, first, spans[-1][1] + CONTEXT - first + 1, raw=True)
    shown, _ = plain_lines(got["content"])
    total = got["total_lines"]
    merged: list[list[int]] = []
    for start, end in spans:
        lo, hi = max(1, start - CONTEXT), min(total, end + CONTEXT)
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    parts: list[str] = []
    last = 0
    for lo, hi in merged:
        if lo > last + 1:
            parts.append("...")
        parts.extend(shown[lo - first:hi - first + 1])
        last = hi
    if last < total:
        parts.append("...")
    return "\n".join(parts)


def list_directory_tool(ctx: ToolContext, dir_path: str, ignore: list[str] | None = None,
                        file_filtering_options: dict[str, bool] | None = None
                        ) -> dict[str, Any]:
    """A directory's direct entries, directories first, then by name (hidden ones
    included, as Gemini CLI lists them; git-ignored ones left out unless asked)."""
    options = file_filtering_options or {}
    try:
        listed = list_files(ctx, dir_path, exclude=ignore or None, include_hidden=True,
                            include_ignored=not options.get("respect_git_ignore", True))
    except ToolError as err:
        raise _texts(err, dir_path) from None
    assert not isinstance(listed, FanOut)  # direct entries are never split
    entries = sorted(({"name": f["path"].rpartition("/")[2], "dir": f["type"] == "dir",
                       "size": 0 if f["type"] == "dir" else f["size"]}
                      for f in listed["files"]),
                     key=lambda e: (not e["dir"], e["name"].lower(), e["name"]))
    rel = ctx.ws.rel(dir_path, allow_empty=True)
    if not entries:
        output = f"Directory {rel} is empty."
    else:
        output = f"Directory listing for {rel}:\n" + "\n".join(
            f"[DIR] {e['name']}" if e["dir"] else f"{e['name']} ({e['size']} bytes)"
            for e in entries)
    return {"output": output, "path": rel,
            "entries": [{"name": e["name"], "type": "dir" if e["dir"] else "file",
                         "size": e["size"]} for e in entries],
            "truncated": listed["truncated"]}


def glob_tool(ctx: ToolContext, pattern: str, dir_path: str = ".",
              case_sensitive: bool = False, respect_git_ignore: bool = True,
              respect_gemini_ignore: bool = True) -> dict[str, Any] | FanOut:
    """Files matching the glob beneath dir_path: those changed in the last day newest
    first, then the rest by path (Gemini CLI's sortFileEntries)."""
    del respect_gemini_ignore  # no .geminiignore is read: .gitignore, .ignore, .rgignore are
    try:
        found = list_files(ctx, dir_path, pattern=pattern if case_sensitive
                           else caseless(pattern), include_ignored=not respect_git_ignore)
    except ToolError as err:
        raise _texts(err, dir_path) from None
    return then(found, "chorus_tools.tools.dialects.gemini:glob_result", pattern=pattern,
                where=ctx.ws.rel(dir_path, allow_empty=True))


def glob_result(listed: dict[str, Any], pattern: str, where: str) -> dict[str, Any]:
    files = [f for f in listed["files"] if f["type"] != "dir"]
    day_ago = iso_utc(time.time_ns() - DAY_NS)  # the same format: strings compare as times
    recent = sorted((f for f in files if f["modified"] > day_ago),
                    key=lambda f: f["modified"], reverse=True)
    older = [f for f in files if f["modified"] <= day_ago]
    paths = [f["path"] for f in recent + older]
    if not paths:
        output = f'No files found matching pattern "{pattern}" within {where}'
    else:
        output = (f'Found {len(paths)} file(s) matching "{pattern}" within {where}, sorted '
                  f"by modification time (newest first):\n" + "\n".join(paths))
    return {"output": output, "files": paths, "truncated": listed["truncated"]}


def caseless(pattern: str) -> str:
    """The glob matching the same paths whatever their case: each letter outside a
    bracket expression becomes `[xX]`."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if ch == "[" and not in_class:
            in_class = True
        elif ch == "]" and in_class:
            in_class = False
        out.append(f"[{ch.lower()}{ch.upper()}]" if ch.isalpha() and not in_class
                   and ch.lower() != ch.upper() else ch)
        i += 1
    return "".join(out)
