"""Bytes in, messages out, and back: the wire codec, with no I/O (sans-IO, as h11).

Two framings share one stream, chosen per message by how it starts: a message that starts
with a `Content-Length:` header is read in the LSP base protocol; anything else is one JSON
text per line (the MCP stdio convention). A reply is encoded in the framing of its request.

A message larger than `max_size` becomes a `TooLarge` event and its bytes are skipped as
they arrive, never buffered whole.

A line that grows past `long_line` bytes (an 8 MiB upload part is 11 MB of JSON) is kept
as the pieces `feed` was given, searched for its newline as each arrives, and joined once
at its end: appending each read to one buffer and then copying the line out of it copied
every byte twice (docs/benchmarks.md, upload_parts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Literal

_HEADER = b"content-length:"
_BOM = b"\xef\xbb\xbf"
_MAX_HEADER_BYTES = 8192
_HEADER_LINE = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+[ \t]*:")  # a field name (RFC 9110), ':'
LONG_LINE = 1 << 20  # a line in progress this long is kept as pieces, not one buffer


class Framing(Enum):
    LINE = "line"
    LSP = "lsp"


@dataclass(frozen=True)
class Message:
    body: bytes
    framing: Framing


@dataclass(frozen=True)
class TooLarge:
    framing: Framing


@dataclass(frozen=True)
class BadFrame:
    """A Content-Length header block that cannot be read; answered as a parse error."""

    reason: str
    framing: Framing = Framing.LSP


Event = Message | TooLarge | BadFrame


class _Step(Enum):
    CONTINUE = 0  # progress was made without an event: look again


CONTINUE = Literal[_Step.CONTINUE]


def encode(body: bytes, framing: Framing) -> bytes:
    if framing is Framing.LSP:
        return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    return body + b"\n"


class Decoder:
    """Incremental decoder: `feed` bytes as they come, get the complete events back."""

    def __init__(self, max_size: int, long_line: int = LONG_LINE) -> None:
        self.max_size = max_size
        self.long_line = long_line
        self._buf = bytearray()
        self._pieces: list[bytes | memoryview] = []  # a long line in progress, its start
        self._pieces_size = 0
        self._scanned = 0  # bytes of _buf already searched for a newline
        self._skip_line = False  # discarding an oversized line up to its newline
        self._skip_bytes = 0  # discarding an oversized Content-Length body
        self._body_size: int | None = None  # reading a Content-Length body of this size

    def feed(self, data: bytes) -> list[Event]:
        events: list[Event] = []
        rest: bytes | memoryview = data
        if self._pieces:
            view = memoryview(data)
            end = data.find(b"\n")
            if end < 0:
                if (event := self._gather(view)) is not None:
                    events.append(event)
                return events
            events.append(self._joined(view[:end]))
            rest = view[end + 1:]
        self._buf += rest
        while (event := self._next()) is not None:
            if event is not _Step.CONTINUE:
                events.append(event)
        return events

    def eof(self) -> list[Event]:
        """The last line may lack its newline. An LSP message the input ended inside (its
        header block, or a body short of its Content-Length) is a BadFrame, answered as
        a cut line is: -32700, in its own framing. A skipped oversized message was
        answered already."""
        rest = b"".join([*self._pieces, self._buf]).strip()
        self._buf.clear()
        self._pieces, self._pieces_size = [], 0
        if self._body_size is not None:
            self._body_size = None
            return [BadFrame("the input ended before the Content-Length body was whole")]
        if not rest or self._skip_line or self._skip_bytes:
            return []
        if rest[:len(_HEADER)].lower() == _HEADER:
            return [BadFrame("the input ended inside the Content-Length header block")]
        return [Message(rest, Framing.LINE)]

    def _next(self) -> Event | CONTINUE | None:
        """An event, _Step.CONTINUE, or None when more bytes are needed."""
        if self._skip_bytes:
            dropped = min(self._skip_bytes, len(self._buf))
            del self._buf[:dropped]
            self._skip_bytes -= dropped
            return None if self._skip_bytes else _Step.CONTINUE
        if self._body_size is not None:
            return self._read_body()
        if self._skip_line:
            return self._skip_to_newline()
        self._drop_leading_blanks()
        if not self._buf:
            return None
        if self._buf[:len(_BOM)] == _BOM:  # a UTF-8 BOM before a message (PowerShell
            del self._buf[:len(_BOM)]  # writes one) would hide its Content-Length header
            self._scanned = 0
            return _Step.CONTINUE
        if len(self._buf) < len(_BOM) and _BOM.startswith(self._buf):
            return None  # perhaps the start of a BOM
        head = bytes(self._buf[:len(_HEADER)]).lower()
        if _HEADER.startswith(head) and len(head) < len(_HEADER):
            return None  # too short to tell the framing yet
        if head == _HEADER:
            return self._read_header()
        return self._read_line()

    def _drop_leading_blanks(self) -> None:
        i = 0
        while i < len(self._buf) and self._buf[i] in b" \t\r\n":
            i += 1
        if i:
            del self._buf[:i]
            self._scanned = 0

    def _read_line(self) -> Event | CONTINUE | None:
        end = self._buf.find(b"\n", self._scanned)
        if end < 0:
            self._scanned = len(self._buf)
            if len(self._buf) > self.max_size:
                self._buf.clear()
                self._scanned = 0
                self._skip_line = True
                return TooLarge(Framing.LINE)
            if len(self._buf) >= self.long_line:  # from now on, pieces: see the docstring
                self._pieces.append(bytes(self._buf))  # empty until now
                self._pieces_size = len(self._buf)
                self._buf.clear()
                self._scanned = 0
            return None
        with memoryview(self._buf) as view:  # one copy (a slice then bytes() made two)
            body = bytes(view[:end]).rstrip(b"\r")
        del self._buf[:end + 1]
        self._scanned = 0
        if len(body) > self.max_size:
            return TooLarge(Framing.LINE)
        return Message(body, Framing.LINE)

    def _gather(self, piece: memoryview) -> TooLarge | None:
        """One more piece of a long line without its newline; TooLarge once the line is
        over `max_size` (the rest of it is then skipped, as a buffered line's is)."""
        self._pieces.append(piece)
        self._pieces_size += len(piece)
        if self._pieces_size <= self.max_size:
            return None
        self._pieces, self._pieces_size = [], 0
        self._skip_line = True
        return TooLarge(Framing.LINE)

    def _joined(self, last: memoryview) -> Event:
        """The long line, its pieces and `last` (up to its newline), as one body."""
        pieces, self._pieces, self._pieces_size = [*self._pieces, last], [], 0
        body = b"".join(pieces).rstrip(b"\r")
        if len(body) > self.max_size:
            return TooLarge(Framing.LINE)
        return Message(body, Framing.LINE)

    def _skip_to_newline(self) -> CONTINUE | None:
        end = self._buf.find(b"\n")
        if end < 0:
            self._buf.clear()
            return None
        del self._buf[:end + 1]
        self._skip_line = False
        return _Step.CONTINUE

    def _read_header(self) -> Event | CONTINUE | None:
        """The header block, up to its blank line. Lines may end `\n` as well as `\r\n`
        (a sloppy client's); a line that is no `Name: value` header ends the block at
        once as a BadFrame and is then read as the next message, so a header that lost
        its blank line never swallows the requests after it."""
        start = 0
        while (end := self._buf.find(b"\n", start)) >= 0 and end <= _MAX_HEADER_BYTES:
            line = bytes(self._buf[start:end]).rstrip(b"\r")
            if not line:
                block = bytes(self._buf[:start]).decode("ascii", "replace")
                del self._buf[:end + 1]
                return self._sized(_content_length(block))
            if not _HEADER_LINE.match(line):
                del self._buf[:start]
                self._scanned = 0
                return BadFrame("the Content-Length header block has no blank line after it")
            start = end + 1
        if len(self._buf) > _MAX_HEADER_BYTES:
            self._buf.clear()
            return BadFrame("header block larger than 8 KiB")
        return None

    def _sized(self, size: int | None) -> Event | CONTINUE:
        if size is None:
            return BadFrame("missing or invalid Content-Length header")
        if size > self.max_size:
            self._skip_bytes = size
            return TooLarge(Framing.LSP)
        self._body_size = size
        return _Step.CONTINUE

    def _read_body(self) -> Event | None:
        size = self._body_size
        assert size is not None
        if len(self._buf) < size:
            return None
        with memoryview(self._buf) as view:
            body = bytes(view[:size])
        del self._buf[:size]
        self._body_size = None
        return Message(body, Framing.LSP)


def _content_length(block: str) -> int | None:
    for line in block.splitlines():
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            value = value.strip()
            return int(value) if value.isdigit() else None
    return None

