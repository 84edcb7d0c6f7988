"""file.read: a window of a text file as numbered (or raw) lines, or an image as base64.

Two paths give the same answers. A file up to SMALL_FILE bytes, or up to WHOLE_FILE
bytes when the whole of it is asked for (no limit, counting from the start), is read with
one read() and windowed in memory, because that is the hot path and per-line Python work
is what costs there. Any other is streamed (50 lines of a 1 MB file cost ~14 ms decoded
and split whole, well under 1 ms streamed): its line count and encoding come from the
shared line-count cache (one pass at memory speed per file version, tools/read/linecount.py),
the byte where the window starts is sought from the nearer end of the file, and only as
much as the window needs is decoded from there, keeping at most `max_line_chars` of any
numbered line. So memory stays bounded by the window, never by the file, and a repeat
read of an unchanged file reads only its window.

A negative `offset` counts from the end (docs/protocol.md, `file.read`: like `tail -n`): -20
starts at line total_lines - 19, so the last 20 lines come back numbered as in the file;
more lines than the file has start at line 1.

Decisions of our own where the contract is silent: the byte cap counts the UTF-8 bytes of
`content`; an empty file (or any offset past the end) answers start_line = offset, end_line
= offset - 1, so an empty file gives start_line 1, end_line 0; a cut line ends with "… [line
truncated: showing 2000 of N characters]" where N counts the whole line.
"""

from __future__ import annotations

import base64
import codecs
import os
from typing import Any

from chorus_tools.tools.read import linecount, text
from chorus_tools.tools.context import Limits, ToolContext
from chorus_tools.tools.errors import BINARY_ADVICE, ToolError
from chorus_tools.tools.confine.sandbox import version_of

SMALL_FILE = 1 << 16  # read whole and windowed in memory up to this size
WHOLE_FILE = 1 << 20  # ... and up to this one when the window is the whole file
_WINDOW_FIRST = 1 << 16  # a large file's window starts with a read of this many bytes


def read(ctx: ToolContext, path: str, offset: int = 1, limit: int | None = None,
         raw: bool = False) -> dict[str, Any]:
    """Read lines offset..offset+limit-1 of a text file, within the byte cap; or an image."""
    rel = ctx.ws.rel(path)
    if offset == 0:
        raise ToolError("invalid_params", "'offset' must be 1 or more (lines are 1-based), "
                        "or negative to count from the end (-20: the last 20 lines)",
                        param="offset")
    if limit is not None and limit < 1:
        raise ToolError("invalid_params", "'limit' must be 1 or more; omit it for all lines",
                        param="limit")
    fd, st = ctx.ws.open_regular(rel, shown=path)
    try:
        size = st.st_size
        small = size <= SMALL_FILE or (size <= WHOLE_FILE and limit is None and offset > 0)
        data = _read_upto(fd, size) if small else b""
        head = data[:text.SNIFF_BYTES] if small else os.pread(fd, text.SNIFF_BYTES, 0)
        mime = text.binary_mime(head)
        if mime is not None:
            return _binary(ctx.limits, fd, path, mime, size, data if small else None,
                           version_of(st))
        if small:
            found = text.decoded(data)
            encoding, invalid = found.encoding, found.invalid
            result = window_text(found.text, offset, limit, raw, ctx.limits)
        else:
            lines = ctx.line_counts.lines(fd, st, head)
            encoding, invalid = lines.encoding, lines.invalid
            result = _window_stream(fd, lines, size, offset, limit, raw, ctx.limits)
    finally:
        os.close(fd)
    result["encoding"] = encoding
    if invalid:
        result["invalid_bytes"] = invalid
    result["version"] = version_of(st)
    return result


def _read_upto(fd: int, size: int) -> bytes:
    """The file's first `size` bytes (fewer if it shrank), in one read() when possible."""
    data = os.read(fd, size)
    while len(data) < size and (more := os.read(fd, size - len(data))):
        data += more
    return data


def _binary(limits: Limits, fd: int, path: str, mime: str, size: int,
            data: bytes | None, version: str) -> dict[str, Any]:
    """Images come back as base64 (within the image cap); other binaries are refused."""
    if mime not in text.IMAGE_MIMES:
        raise ToolError("binary_file",
                        f"Binary file ({mime}, {size} bytes): {path}. {BINARY_ADVICE}",
                        path=path, mime_type=mime, size=size)
    if size > limits.max_image_bytes:
        raise ToolError("file_too_large",
                        f"Image is {size} bytes, over the {limits.max_image_bytes}-byte "
                        f"image limit (--max-image-bytes): {path}.",
                        path=path, size=size, limit=limits.max_image_bytes)
    if data is None:
        data = _read_upto(fd, size)
    return {"image": base64.b64encode(data).decode("ascii"), "mime_type": mime,
            "size": len(data), "version": version}


_PREFIX_CACHE = 1 << 14  # lines whose "     n\t" prefix is kept (about 1 MiB at most)
_prefixes: list[str] = []


def _numbers(start: int, stop: int) -> list[str]:
    """The cat -n prefixes of lines start..stop-1. Cached for the first lines: joining
    cached prefixes to lines runs in C, about 3x faster than an f-string per line."""
    if stop > _PREFIX_CACHE:
        return [f"{n:>6}\t" for n in range(start, stop)]
    if len(_prefixes) < stop:
        _prefixes.extend([f"{n:>6}\t" for n in range(len(_prefixes), stop)])
    return _prefixes[start:stop]


def _first_line(offset: int, total: int) -> int:
    """The line a window starts at: `offset` itself, or counted from the end."""
    return offset if offset > 0 else max(1, total + offset + 1)


def _past_end(offset: int, total: int) -> dict[str, Any]:
    return {"content": "", "total_lines": total, "truncated": False,
            "start_line": offset, "end_line": offset - 1}


def _window(content: str, total: int, offset: int, count: int) -> dict[str, Any]:
    end = offset + count - 1
    return {"content": content, "total_lines": total, "truncated": end < total,
            "start_line": offset, "end_line": end}


def _utf8_len(s: str) -> int:
    return len(s) if s.isascii() else len(s.encode("utf-8", "surrogatepass"))


def _cut(line: str, chars: int, keep: int) -> str:
    """A long line's first `keep` characters and the marker saying how long it was."""
    return f"{line[:keep]}… [line truncated: showing {keep} of {chars} characters]"


def _fitting(parts: list[str], cap: int, numbered: bool) -> int:
    """How many leading parts fit in `cap` bytes: numbered parts are joined by "\n", raw
    lines are each followed by one. At least one: a line that exists is always returned."""
    used = -1 if numbered else 0
    for i, part in enumerate(parts):
        used += _utf8_len(part) + 1
        if used > cap and i:
            return i
    return len(parts)


def window_text(content: str, offset: int, limit: int | None, raw: bool,
                 limits: Limits) -> dict[str, Any]:
    """The window of a decoded file held in memory: C-level splits and joins, Python work
    only per line of the window."""
    newlines = content.count("\n")
    total = newlines + (1 if content and content[-1] != "\n" else 0)
    offset = _first_line(offset, total)
    if offset > total:
        return _past_end(offset, total)
    stop = total if limit is None else min(total, offset - 1 + limit)
    cap = limits.max_read_bytes
    if raw:
        lines = content.split("\n")[offset - 1:stop]
        ends = "\n" if stop <= newlines else ""
        out = "\n".join(lines) + ends
        if len(out) * 4 > cap and _utf8_len(out) > cap:
            lines = lines[:_fitting(lines, cap, False)]
            out = "\n".join(lines) + ("\n" if offset - 1 + len(lines) <= newlines else "")
        return _window(out, total, offset, len(lines))
    if "\r\n" in content:
        content = content.replace("\r\n", "\n")
    lines = content.split("\n")[offset - 1:stop]
    keep = limits.max_line_chars
    if max(map(len, lines)) > keep:
        lines = [_cut(line, len(line), keep) if len(line) > keep else line
                 for line in lines]
    parts = list(map(str.__add__, _numbers(offset, offset + len(lines)), lines))
    out = "\n".join(parts)
    if len(out) * 4 > cap and _utf8_len(out) > cap:
        parts = parts[:_fitting(parts, cap, True)]
        out = "\n".join(parts)
    return _window(out, total, offset, len(parts))


class _StreamWindow:
    """The lines of a streamed window, fed decoded text as it comes, kept while they fit
    the byte cap and the line count. Numbered lines keep at most max_line_chars + 1
    characters (enough to tell a cut line from a whole one) while the rest is only
    counted; raw lines are kept whole, but one that would overflow the byte cap (after the
    first) ends the window as soon as that is known."""

    def __init__(self, offset: int, want: int, raw: bool, limits: Limits) -> None:
        self.offset, self.want, self.raw = offset, want, raw
        self.cap, self.max_chars = limits.max_read_bytes, limits.max_line_chars
        self.parts: list[str] = []
        self.used = 0  # UTF-8 bytes of the content so far
        self.full = False
        self.pieces: list[str] = []  # what is kept of the current line
        self.kept = 0  # its kept size: UTF-8 bytes when raw, characters when numbered
        self.chars = 0  # its length so far
        self.tail = ""  # its last character so far, to spot the "\r" of a CRLF

    def feed(self, decoded: str) -> None:
        at = 0
        while at < len(decoded) and not self.full:
            nl = decoded.find("\n", at)
            piece = decoded[at:] if nl < 0 else decoded[at:nl + 1 if self.raw else nl]
            at = len(decoded) if nl < 0 else nl + 1
            if piece:
                self._grow(piece)
            if nl >= 0 and not self.full:
                self._end_line(crlf=self.tail == "\r")

    def finish(self) -> None:
        """End of file: the last line may have no newline after it."""
        if self.pieces and not self.full:
            self._end_line(crlf=False)

    def _grow(self, piece: str) -> None:
        self.chars += len(piece)
        self.tail = piece[-1]
        if self.raw:
            self.pieces.append(piece)
            self.kept += _utf8_len(piece)
            self.full = not self._fits(self.kept)
        elif self.kept <= self.max_chars:
            self.pieces.append(piece[:self.max_chars + 1 - self.kept])
            self.kept += len(self.pieces[-1])

    def _end_line(self, crlf: bool) -> None:
        line = "".join(self.pieces)
        if self.raw:
            self._add(line, self.kept)
        else:
            chars = self.chars
            if crlf:
                chars -= 1
                line = line[:chars]
            if chars > self.max_chars:
                line = _cut(line, chars, self.max_chars)
            part = f"{self.offset + len(self.parts):>6}\t{line}"
            self._add(part, _utf8_len(part) + (1 if self.parts else 0))  # + the "\n"
        self.pieces, self.kept, self.chars, self.tail = [], 0, 0, ""

    def _fits(self, size: int) -> bool:
        """Would `size` more bytes fit? Always for the first line, which is returned even
        when it alone exceeds the cap."""
        return not self.parts or self.used + size <= self.cap

    def _add(self, part: str, size: int) -> None:
        if not self._fits(size):
            self.full = True
            return
        self.parts.append(part)
        self.used += size
        self.full = len(self.parts) == self.want

    def result(self, total: int) -> dict[str, Any]:
        return _window(("" if self.raw else "\n").join(self.parts), total, self.offset,
                       len(self.parts))


def _window_stream(fd: int, lines: linecount.Lines, size: int, offset: int,
                   limit: int | None, raw: bool, limits: Limits) -> dict[str, Any]:
    """The window of a large file, decoded from where it starts and only as far as it
    goes."""
    total = lines.total
    offset = _first_line(offset, total)
    start = linecount.line_start(fd, lines, offset, size) if offset <= total else None
    if start is None:
        return _past_end(offset, total)
    want = total - offset + 1 if limit is None else min(limit, total - offset + 1)
    window = _StreamWindow(offset, want, raw, limits)
    decoder = codecs.getincrementaldecoder(text.CODEC_OF[lines.encoding])(errors="replace")
    for chunk in text.chunks(fd, start, first=_WINDOW_FIRST):
        window.feed(decoder.decode(chunk))
        if window.full:
            break
    else:
        window.feed(decoder.decode(b"", final=True))
        window.finish()
    return window.result(total)
