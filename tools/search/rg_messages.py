"""rg's `--json` output read with bounded memory, whatever the lines searched.

A match message carries the whole line and every submatch of it: one 1 MB line with half a
million matches is a message of some 20 MB, which parsed whole grew a worker to 260 times
the line (issue 22). `messages` hands on every message up to `MAX_MESSAGE` bytes as is;
a longer one is never held: it is read in pieces of that size, keeping only its head (the
type and the path come first), the two numbers after the line's text (`line_number`,
`absolute_offset`) and its tail (the last submatch's `end`). The line's text is then read
from the file itself, a piece at a time (`read_lines`), cut to what the reply shows.

The marker `},"line_number":` cannot occur inside a JSON string (its quote would be
escaped), so its first occurrence ends the path and the text, in either of rg's forms
(`{"text": ...}` or `{"bytes": base64}`); `},"lines":` likewise ends the path.
"""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Iterator
from typing import BinaryIO, NamedTuple

import orjson

from chorus_tools.tools.search.results import cut_marked

MAX_MESSAGE = 1 << 20  # parsed whole up to this; orjson's objects cost ~10x the bytes
_READ = 1 << 16
_TEXT_END = b'},"line_number":'
_PATH_END = b'},"lines":'
_NUMBERS = re.compile(rb'\},"line_number":(\d+),"absolute_offset":(\d+),')
_LAST_END = re.compile(rb'"end":(\d+)\}\]\}\}\s*$')
_TAIL = 64  # bytes kept of the end of a long message: the last submatch's end is there
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_UTF8_BOM = b"\xef\xbb\xbf"


class Long(NamedTuple):
    """A match or context message too long to hold: what the reader needs of it."""

    kind: str  # match | context
    path: dict  # rg's path field
    line_number: int
    offset: int  # absolute byte offset of its first line
    last_end: int  # end of the last submatch, relative to `offset` (0: none)


def messages(stream: BinaryIO) -> Iterator[bytes | Long]:
    """rg's messages: each one's bytes, or a Long for one past MAX_MESSAGE bytes."""
    while raw := stream.readline(MAX_MESSAGE):
        if raw.endswith(b"\n") or len(raw) < MAX_MESSAGE:
            yield raw
        else:
            yield _long(raw, stream)


def _long(head: bytes, stream: BinaryIO) -> Long:
    """Read the rest of a long message in pieces, keeping what `Long` holds."""
    kind = "match" if head.startswith(b'{"type":"match"') else "context"
    path = orjson.loads(head[head.index(b'"path":') + 7:head.index(_PATH_END) + 1])
    numbers = None
    window = piece = head  # window: where the numbers are looked for
    tail = head[-_TAIL:]
    while True:
        if numbers is None:
            at = window.find(_TEXT_END)
            if at >= 0 and (found := _NUMBERS.match(window, at)) is not None:
                numbers = (int(found[1]), int(found[2]))
            else:  # keep what a marker or its numbers cut by the piece's end needs
                window = window[at:] if at >= 0 else window[-len(_TEXT_END):]
        if piece.endswith(b"\n"):
            break
        piece = stream.readline(MAX_MESSAGE)
        if not piece:
            break
        tail = (tail + piece)[-_TAIL:]
        if numbers is None:
            window += piece
    if numbers is None:
        raise ValueError("a long rg message without its line number")
    last = _LAST_END.search(tail)
    return Long(kind, path, *numbers, int(last[1]) if last else 0)


def read_lines(fd: int, offset: int, last: int, keep: int) -> list[str]:
    """The lines of the file open as `fd` from byte `offset` of rg's view of it (a line's
    start) through the line holding byte `last`, as the reply shows them: without the
    line ending, bytes that are not UTF-8 as U+FFFD, cut to `keep` characters with the
    marker. Read in pieces: a line costs `keep` characters, however long it is."""
    lines: list[str] = []
    line = _LineCut(keep)
    pos = offset
    for chunk in _chunks(fd, offset):
        start = 0
        while (newline := chunk.find(b"\n", start)) >= 0:
            line.feed(chunk[start:newline])
            lines.append(line.done())
            if pos + newline >= last:
                return lines
            line, start = _LineCut(keep), newline + 1
        line.feed(chunk[start:])
        pos += len(chunk)
    if line.started:
        lines.append(line.done())
    return lines


def _chunks(fd: int, offset: int) -> Iterator[bytes]:
    """The file as rg searched it, from `offset`: rg drops a UTF-8 BOM and searches a
    UTF-16 file transcoded to UTF-8, and its offsets count in that text."""
    bom = os.pread(fd, 2, 0)
    if bom in _UTF16_BOMS:
        yield from _transcoded(fd, offset)
        return
    pos = offset + (3 if bom + os.pread(fd, 1, 2) == _UTF8_BOM else 0)
    while chunk := os.pread(fd, _READ, pos):
        yield chunk
        pos += len(chunk)


def _transcoded(fd: int, skip: int) -> Iterator[bytes]:
    decoder = codecs.getincrementaldecoder("utf-16")("replace")
    pos = 0
    while True:
        chunk = os.pread(fd, _READ, pos)
        pos += len(chunk)
        data = decoder.decode(chunk, not chunk).encode("utf-8")
        if skip >= len(data):
            skip -= len(data)
        else:
            yield data[skip:]
            skip = 0
        if not chunk:
            return


class _LineCut:
    """One line fed in pieces: its first `keep` + 1 characters and its length."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.head: list[str] = []
        self.held = self.length = 0
        self.last = ""
        self.started = False
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self._decoder.decode(data, final)
        self.started = self.started or bool(data)
        if not text:
            return
        self.length += len(text)
        self.last = text[-1]
        if self.held <= self.keep:
            self.head.append(text[:self.keep + 1 - self.held])
            self.held += len(self.head[-1])

    def done(self) -> str:
        self.feed(b"", final=True)
        length = self.length - (self.last == "\r")  # a \r before the \n is not shown
        head = "".join(self.head)
        if length <= self.keep:
            return head[:length]
        return cut_marked(head[:self.keep], self.keep, length)
