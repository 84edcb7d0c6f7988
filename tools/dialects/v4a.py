"""The V4A patch text of Codex's `apply_patch`, parsed into file operations.

Grammar (openai/codex codex-rs/apply-patch, parser.rs):

    *** Begin Patch
    *** Add File: P          then lines `+text` (the new file's lines)
    *** Delete File: P
    *** Update File: P       then optional `*** Move to: Q`, then hunks:
        @@ [anchor]          (the first hunk may omit it), lines ` ctx` / `-old` / `+new`,
        *** End of File      (optional: the hunk's lines end the file)
    *** End Patch

Lenient as Codex is: markers may be padded with whitespace, the patch may be wrapped in a
heredoc (`<<'EOF'` … `EOF`, optionally after `apply_patch`), blank lines may separate
hunks, and CRLF line breaks read as LF. Beyond Codex, consecutive `@@ anchor` lines stack
(each narrows the search after the one before), as Codex's own instructions describe.

Every error is invalid_params naming the line of the patch (1-based, counted in the text
as given) and what to write instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from chorus_tools.tools.errors import ToolError

BEGIN, END = "*** Begin Patch", "*** End Patch"
ADD, DELETE, UPDATE = "*** Add File: ", "*** Delete File: ", "*** Update File: "
MOVE, EOF_MARK = "*** Move to: ", "*** End of File"
_HEREDOC = re.compile(r"^(?:apply_?patch\s*)?<<-?\s*(['\"]?)([A-Za-z_][\w-]*)\1$")
_HEADERS = "'*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"


@dataclass(frozen=True)
class Hunk:
    """One `@@` section of an update: its anchors, the lines it replaces and their new
    form (context lines in both), and whether those lines must end the file."""

    anchors: tuple[str, ...]
    old: tuple[str, ...]
    new: tuple[str, ...]
    end_of_file: bool
    line: int  # the patch line it starts at


@dataclass(frozen=True)
class FileOp:
    action: str  # "add", "delete" or "update"
    path: str
    line: int  # the patch line of its header
    content: str = ""  # add: the new file's text
    move_to: str | None = None
    hunks: tuple[Hunk, ...] = field(default=())


def parse(text: str) -> list[FileOp]:
    """The file operations of a V4A patch, in order; invalid_params on any error."""
    lines, first = _body(text)
    ops: list[FileOp] = []
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        op, i = _operation(lines, i, first)
        ops.append(op)
    if not ops:
        raise _invalid(first - 1, "No files were modified: the patch has no "
                       f"operation. Give at least one of {_HEADERS}.")
    return ops


def paths(params: dict[str, Any]) -> list[tuple[str, str]]:
    """Every path the patch in `params["input"]` names (headers and Move to), found by a
    scan that never fails: what the dispatcher orders, audits and denies a call by, even
    a malformed one (Method.paths_in)."""
    text = params.get("input")
    found: list[str] = []
    for line in _lines(text) if isinstance(text, str) else ():
        line = line.strip()
        for marker in (ADD, DELETE, UPDATE, MOVE):
            if line.startswith(marker) and line[len(marker):].strip():
                found.append(line[len(marker):].strip())
    return [("input", path) for path in dict.fromkeys(found)]


def _lines(text: str) -> list[str]:
    """The patch's lines: only "\n" (with a "\r" before it) ends one, as in Codex, so a
    U+2028 or a form feed inside a line stays part of it."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def _body(text: str) -> tuple[list[str], int]:
    """The lines between the Begin and End markers, and the patch line number of the
    first of them (a heredoc wrapper and leading blank lines are counted)."""
    lines = _lines(text)
    start = next((i for i, line in enumerate(lines) if line.strip()), 0)
    stop = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].strip()), -1)
    if stop - start >= 3:
        wrapper = _HEREDOC.match(lines[start].strip())
        if wrapper and lines[stop].strip() == wrapper.group(2):
            start, stop = start + 1, stop - 1
    if start > stop or lines[start].strip() != BEGIN:
        got = lines[start].strip() if start < len(lines) else ""
        raise _invalid(start + 1, f"The first line of the patch must be '{BEGIN}'"
                       + (f", not {got!r}." if got else " (the patch is empty)."))
    if stop == start or lines[stop].strip() != END:
        raise _invalid(stop + 1, f"The last line of the patch must be '{END}'; add it "
                       "after the last operation.")
    return lines[start + 1:stop], start + 2


def _operation(lines: list[str], i: int, first: int) -> tuple[FileOp, int]:
    header = lines[i].strip()
    number = first + i
    found = next(((marker, action) for marker, action in (
        (ADD, "add"), (DELETE, "delete"), (UPDATE, "update"))
        if header.startswith(marker.strip())), None)
    if found is None:
        raise _invalid(number, f"{header!r} is not a valid hunk header. Valid hunk "
                       f"headers: {_HEADERS}.")
    marker, action = found
    path = header[len(marker.strip()):].strip()
    if not path:
        raise _invalid(number, f"{marker.strip()} needs a path after it.")
    if action == "add":
        body = []
        i += 1
        while i < len(lines) and lines[i].startswith("+"):
            body.append(lines[i][1:] + "\n")
            i += 1
        return FileOp("add", path, number, content="".join(body)), i
    if action == "delete":
        return FileOp("delete", path, number), i + 1
    return _update(lines, i, first, path)


def _update(lines: list[str], i: int, first: int, path: str) -> tuple[FileOp, int]:
    number = first + i
    i += 1
    move_to = None
    if i < len(lines) and lines[i].strip().startswith(MOVE.strip()):
        move_to = lines[i].strip()[len(MOVE.strip()):].strip()
        if not move_to:
            raise _invalid(first + i, "*** Move to: needs a path after it.")
        i += 1
    hunks: list[Hunk] = []
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        if lines[i].lstrip().startswith("*") and not lines[i].strip().startswith("*** End of"):
            break
        hunk, i = _hunk(lines, i, first, allow_bare=not hunks)
        hunks.append(hunk)
    if not hunks:
        raise _invalid(number, f"Update file hunk for path {path!r} is empty: give at "
                       "least one '@@' hunk with ' ', '-' or '+' lines.")
    return FileOp("update", path, number, move_to=move_to, hunks=tuple(hunks)), i


def _hunk(lines: list[str], i: int, first: int, allow_bare: bool) -> tuple[Hunk, int]:
    start = first + i
    anchors: list[str] = []
    while i < len(lines) and lines[i].strip().startswith("@@"):
        anchor = lines[i].strip()[2:]
        if anchor.strip():
            anchors.append(anchor.removeprefix(" "))
        i += 1
    if i == start - first and not allow_bare:
        raise _invalid(start, f"Expected update hunk to start with a @@ context marker, "
                       f"got: {lines[i]!r}.")
    old: list[str] = []
    new: list[str] = []
    eof = False
    taken = 0
    while i < len(lines):
        line = lines[i]
        if line.strip() == EOF_MARK:
            if not taken:
                break
            eof, i = True, i + 1
            break
        kind = line[:1]
        if kind not in ("", " ", "+", "-"):
            if not taken:
                raise _invalid(first + i, f"Unexpected line found in update hunk: {line!r}. "
                               "Every line should start with ' ' (context line), '+' "
                               "(added line), or '-' (removed line).")
            break
        if kind != "+":
            old.append(line[1:])
        if kind != "-":
            new.append(line[1:])
        taken += 1
        i += 1
    if not taken:
        raise _invalid(first + i if i < len(lines) else start,
                       "Update hunk does not contain any lines: add ' ', '-' or '+' lines "
                       "after its '@@'.")
    return Hunk(tuple(anchors), tuple(old), tuple(new), eof, start), i


def _invalid(line: int, message: str) -> ToolError:
    return ToolError("invalid_params", f"Invalid patch hunk on line {line}: {message}",
                     param="input", line=line)
