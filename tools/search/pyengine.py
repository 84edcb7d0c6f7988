"""The python engine: whole files searched with the `regex` module inside the workers.

`search_part` runs in a worker on a contiguous run of the sorted file list; each file is
opened through the workspace (never a path string), read once, skipped when binary, and
searched as one string. Line numbers are computed only where matches are. Without
multiline, a match that crosses a line break (a class like `\\s` reaching the next line)
sends that file back through a line-by-line search, which is what ripgrep's rule (classes
never match the line terminator) amounts to. Line by line a lone `\r` is a line end to
the regex as it is to ripgrep's `--crlf` (`^` and `$` match beside it, nothing matches
it) but not to the line numbers, which count `\n`s. Every file has a time budget against
catastrophic patterns; running past it is a `timeout` error naming the file.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import regex

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.read import legacy
from chorus_tools.tools.search.results import Shape, Spans, file_result, items, shown
from chorus_tools.tools.search.syntax import Pattern, compile_python

_READ_CHUNK = 1 << 20
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_UTF8_BOM = b"\xef\xbb\xbf"


def search_part(ctx: ToolContext, files: list[str], pattern: Pattern,
                case_sensitive: bool, multiline: bool, shape: Shape, first: int = 0,
                positions: list[int] | None = None) -> dict[str, Any]:
    """Search `files` in order; stop once they hold more items than the reply can show.
    `at` gives each result's file its place among the files the query covers: from
    `positions`, else counted from `first`."""
    rx = compile_python(pattern, case_sensitive=case_sensitive)
    line_mode = not (multiline and pattern.may_match_newline)
    results: list[dict[str, Any]] = []
    at: list[int] = []
    left = shape.max_results + 1
    for i, rel in enumerate(files):
        found = _search_file(ctx, rel, rx, line_mode, shape, left, crlf=not multiline)
        if found is not None:
            results.append(found)
            at.append(positions[i] if positions is not None else first + i)
            left -= items(found, shape)
            if left <= 0:
                break
    return {"results": results, "at": at}


def _search_file(ctx: ToolContext, rel: str, rx: regex.Pattern, line_mode: bool,
                 shape: Shape, limit: int, *, crlf: bool) -> dict[str, Any] | None:
    """`crlf`: searched as ripgrep's `--crlf` does, lines without the `\r` of a `\r\n`
    (the line numbers and the lines shown are the same)."""
    try:
        text = _read_text(ctx, rel)
    except ToolError:
        return None  # gone or unreadable since the walk: skipped, as ripgrep does
    if crlf and text and "\r\n" in text:
        text = text.replace("\r\n", "\n")
    if not text:
        return None
    budget = ctx.limits.search_file_timeout
    # ripgrep's --crlf ends a line at a lone \r too for `^`, `$` and what classes match
    probe = text.replace("\r", "\n") if crlf and "\r" in text else text
    try:
        spans = _spans(rx, text, probe, line_mode, time.monotonic() + budget,
                       Spans(shape.merge_adjacent, limit, shape.after))
    except TimeoutError:
        raise ToolError("timeout",
                        f"The pattern took longer than {budget:g} s on {rel} (catastrophic "
                        "backtracking?). Simplify the pattern, e.g. avoid nested repetition "
                        "like (a+)+, or narrow the search with path or glob.",
                        path=rel, limit_seconds=budget) from None
    if not spans:
        return None
    lines = _line_texts(text, spans.kept, shape.before, shape.after,
                        strip_cr=not crlf) if shape.wants_text else {}
    return file_result(rel, [span[:2] for span in spans.kept], lines, shape, limit,
                       spans.more_lines)


def _line_texts(text: str, spans: list[tuple[int, int, int]], before: int,
                after: int, *, strip_cr: bool) -> dict[int, str]:
    """The text, as the client sees it, of every line the reply can show: each span's
    lines, `before` lines above and `after` below, found by walking from the offset where the
    span's first line starts (splitting whole files was the engine's largest cost).
    `strip_cr`: a line's final `\r` is its line ending's, not shown (a text whose `\r\n`s
    are already `\n`s shows any `\r` left, as ripgrep's `--crlf` output does)."""
    lines: dict[int, str] = {}
    size = len(text)
    for first, last, start in spans:
        line, pos = first, start
        while line > 1 and line > first - before:  # back to the window's first line
            pos = text.rfind("\n", 0, pos - 1) + 1
            line -= 1
        while line <= last + after and pos < size:
            end = text.find("\n", pos)
            end = size if end < 0 else end
            if line not in lines:
                lines[line] = shown(text[pos:end - 1] if strip_cr and text.endswith(
                    "\r", pos, end) else text[pos:end])
            line, pos = line + 1, end + 1
    return lines


def _read_text(ctx: ToolContext, rel: str) -> str | None:
    """The file's text as ripgrep sees it, or None for a binary file; a file in a legacy
    encoding (tools/read/legacy.py) is its decoded text, where ripgrep sees bytes."""
    fd, _ = ctx.ws.open_regular(rel)
    try:  # grown in place: pieces and their join would hold the file twice
        data = bytearray()
        while chunk := os.read(fd, _READ_CHUNK):
            data += chunk
    finally:
        os.close(fd)
    if data.startswith(_UTF16_BOMS):
        text = data.decode("utf-16", "replace")
        return None if "\0" in text else text
    if b"\0" in data:
        return None
    if data.startswith(_UTF8_BOM):
        del data[:len(_UTF8_BOM)]  # in place: a slice would hold the file twice
        return data.decode("utf-8", "surrogateescape")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:  # a legacy encoding's text, else as rg
        found = legacy.decode(bytes(data), exc.start)  # copied only for a non-UTF-8 file
        return found[0] if found else data.decode("utf-8", "surrogateescape")


def _spans(rx: regex.Pattern, text: str, probe: str, line_mode: bool, deadline: float,
           spans: Spans) -> Spans:
    """(first line, last line, offset of the first line) of every match, into `spans`;
    line numbers only where matches are. `probe` is what the regex runs on: `text`, or
    (line by line) `text` with its lone `\r`s as line ends, of the same length. In line
    mode a line is found once: the search goes on from the next line (a line of a
    million matches is one entry, and one match to find, not a million)."""
    phantom = len(text) if text.endswith("\n") else -1  # a final \n starts no line
    line, pos = 1, 0
    for m in _matches(rx, text, probe, line_mode, deadline):
        start, stop = m.span()
        if start == phantom:
            break
        if line_mode and "\n" in probe[start:stop]:
            return _line_spans(rx, text, deadline, Spans(spans.adjacent, spans.keep, spans.reach),
                               split_cr=probe is not text)
        line += text.count("\n", pos, start)
        pos = start
        last = line + text.count("\n", start, max(start, stop - 1))
        spans.add((line, last, text.rfind("\n", 0, start) + 1))
    return spans


def _matches(rx: regex.Pattern, text: str, probe: str, line_mode: bool,
             deadline: float) -> Iterator[regex.Match]:
    """Every match (multiline), or the first of each line that has one (line mode)."""
    if not line_mode:
        yield from rx.finditer(text, timeout=_left(deadline))
        return
    pos = 0
    while (m := rx.search(probe, pos, timeout=_left(deadline))) is not None:
        yield m
        pos = text.find("\n", m.start()) + 1
        if pos == 0:
            return


def _line_spans(rx: regex.Pattern, text: str, deadline: float, spans: Spans, *,
                split_cr: bool) -> Spans:
    """`split_cr`: each piece of a line between lone `\r`s is searched on its own."""
    offset = 0
    for n, ln in enumerate(text.split("\n"), 1):
        if offset == len(text):
            break  # the final \n starts no line
        if any(rx.search(piece, timeout=_left(deadline))
               for piece in (ln.split("\r") if split_cr else (ln,))):
            spans.add((n, n, offset))
        offset += len(ln) + 1
    return spans


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left
