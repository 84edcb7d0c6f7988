"""The edit the `anthropic` editor makes by position rather than by text: inserting lines
after a line number (undo_edit's restore is file.restore's, tools/mutate/restore.py).

Replacing text goes through the core patch engine (tools/patch); an insert has no text
to find, so it runs through the core's one way a file changes (tools.mutate.atomic's
`mutate`: the directory lock, the version check, the atomic rename, the audit hashes),
keeping the file's encoding, BOM and line endings: every byte outside the inserted lines
stays as it was (tools/read/reencode.py: a legacy file's own byte forms, a UTF-8 file's bad
bytes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chorus_tools.tools.confine.sandbox import version_of
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.mutate.atomic import Current, mutate
from chorus_tools.tools.patch.diagnostics import Judge, refuse_introduced
from chorus_tools.tools.read.read import window_text
from chorus_tools.tools.read.reencode import encode_edit
from chorus_tools.tools.read.text import SNIFF_BYTES, binary_mime, count_lines, decode

SNIPPET_LINES = 4  # lines shown above and below an edit (the reference's)


@dataclass
class Inserted:
    before: bytes  # the file as it was
    version: str  # the version the insert left
    snippet: str  # the inserted lines with SNIPPET_LINES around, numbered like `cat -n`
    first: int  # the snippet's first line number
    diagnostics: dict[str, Any] | None  # docs/protocol.md, Diagnostics (None: not parsed)


def insert_after(ctx: ToolContext, path: str, line: int, text: str,
                 param: str = "insert_line") -> Inserted:
    """Insert `text` as whole lines after line `line` (0: at the top). Its line breaks
    take the file's style; a final break in `text` is not an extra empty line."""
    rel = ctx.ws.rel(path)
    done: dict[str, Any] = {}

    def compute(current: Current) -> bytes:
        if current.data is None:
            raise ToolError("file_not_found", f"File not found: {path}.", path=path)
        mime = binary_mime(current.data[:SNIFF_BYTES])
        if mime is not None:
            raise ToolError("binary_file", f"Binary file ({mime}): {path}. Only text files "
                            "can be edited.", path=path, mime_type=mime,
                            size=len(current.data))
        old, encoding = decode(current.data)
        total = count_lines(old)
        if not 0 <= line <= total:
            raise ToolError("invalid_params", f"Invalid `{param}` parameter: {line}. It "
                            "should be within the range of lines of the file: "
                            f"[0, {total}]", param=param, path=path)
        new, added = _spliced(old, line, text)
        try:
            data = encode_edit(new, encoding, old, current.data)
        except UnicodeEncodeError as exc:
            raise ToolError("invalid_params", f"The text holds {new[exc.start:exc.end]!r}, "
                            f"which the file's encoding ({encoding}) cannot represent: "
                            f"{path}.", param="insert_text", path=path,
                            encoding=encoding) from None
        judge = Judge.of(ctx, rel, old, shown=path)
        diagnosis = judge.diagnosis(old, new)
        refuse_introduced(judge, diagnosis, path)
        first = max(1, line - SNIPPET_LINES + 1)
        window = window_text(new, first, line - first + 1 + added + SNIPPET_LINES, False,
                             ctx.limits)
        done.update(before=current.data, snippet=window["content"], first=first,
                    diagnostics=None if diagnosis is None else diagnosis.reply())
        return data

    out = mutate(ctx, rel, shown=path, compute=compute)
    assert out.stat is not None  # compute raised or wrote the file
    return Inserted(done["before"], version_of(out.stat), done["snippet"], done["first"],
                    done["diagnostics"])


def _spliced(old: str, line: int, text: str) -> tuple[str, int]:
    """(the new text, how many lines were inserted)."""
    eol = "\r\n" if old.count("\r\n") * 2 > old.count("\n") else "\n"
    block = text.replace("\r\n", "\n")
    block = (block.removesuffix("\n")).replace("\n", eol)
    added = block.count(eol) + 1
    if line == 0:
        return block + eol + old if old else block + eol, added
    cut = _offset_after(old, line)
    head, tail = old[:cut], old[cut:]
    if not head.endswith("\n"):  # after a last line without a break: keep it so
        return head + eol + block + tail, added
    return head + block + eol + tail, added


def _offset_after(text: str, line: int) -> int:
    """The offset just after line `line` (1-based) with its line break."""
    pos = 0
    for _ in range(line):
        nl = text.find("\n", pos)
        if nl < 0:
            return len(text)
        pos = nl + 1
    return pos


def numbered(text: str, ctx: ToolContext) -> dict[str, Any]:
    """A whole text numbered like `cat -n`, within the read cap (file.read's window)."""
    return window_text(text, 1, None, False, ctx.limits)
