"""rg's standard output read in large blocks: what `--null --with-filename` prints for
`-n` (records `PATH\\0N:line` for a match, `PATH\\0N-line` for context), for `-c`
(`PATH\\0COUNT`) and for `-l` (`PATH\\0`), the binary-file notes rg prints after a
file's records, and the `--stats` block at the end (how many files rg searched).

A path holds no NUL but may hold a line break, and a line holds neither (rg ends every
line it prints with one), so a block is cut at its NULs and each piece at its first line
break: a piece is one record's line, then the next record's path. The notes and the stats
hold no NUL: they sit before a path, or at the end.

A file containing a NUL contributes nothing. Walking, rg stops reading it at the NUL and,
if it printed lines of it before, says so after them; named on the command line, rg
searches it whole and says so after its lines (`binary file matches`): either note, right
after a file's records, makes that file binary (`BINARY`). A `-c` or `-l` run cannot say
it, so the engine uses them only where no file can be binary unseen (tools.search.ripgrep).

Memory follows the reply: a record longer than MAX_RECORD (one line of a minified file)
is never held: its line is cut as the reply shows it while it streams past.
"""

from __future__ import annotations

import codecs
import os
import re
import select
from collections.abc import Iterator
from typing import NamedTuple

from chorus_tools.tools.search.results import cut_marked

MAX_RECORD = 1 << 20  # a record is parsed whole up to this; longer, its line streams past
_READ = 1 << 20
PAUSE_MS = 2  # after a short read of a patient Output, unless rg exits meanwhile
_NOTE = re.compile(rb'(.*?): (?:WARNING: stopped searching binary file after match|binary '
                   rb'file matches) \(found "\\0" byte around offset \d+\)\n', re.S)
_STATS = re.compile(rb'\n\d+ matches\n\d+ matched lines\n\d+ files contained matches\n'
                    rb'(\d+) files searched\n\d+ bytes printed\n\d+ bytes searched\n'
                    rb'[\d.]+ seconds spent searching\n[\d.]+ seconds total\n\Z')
_LINE = re.compile(rb"(\d+)([:-])")
BINARY = None  # a group's records when rg said the file is binary


class Long(NamedTuple):
    """A record too long to hold, its line already cut as the reply shows it."""

    number: int
    is_match: bool
    text: str


# consecutive records of one path: each "N:line" (a match) or "N-line" (context), the
# line as rg printed it but for a \r before its line break; a Long; or BINARY
Group = tuple[str, "list[str] | Long | None"]


class Output:
    """rg's stdout, read a block at a time; `searched` is set at the end.

    rg on all its threads writes each file's output as it finishes it, a few records at a
    time; read as soon as they come, 13k files cost 2,300 wake-ups of the worker, and
    its CPU beside rg's two threads cost a third of rg's time. Read `patiently` (a search
    that reads everything anyway), a short read is followed by a short pause, so rg fills
    the pipe a little first (about 50 reads). The pause ends at once when rg closes its
    end (it exited): a fixed sleep there cost a small search up to PAUSE_MS for nothing."""

    def __init__(self, fd: int, patient: bool = False) -> None:
        self.fd = fd
        self.patient = patient
        self.searched: int | None = None  # rg's "files searched", once it finished
        self.rest = b""  # read, not yet handed out: the start of a record
        self._short = False
        self._hangup = select.poll() if patient else None
        if self._hangup is not None:
            self._hangup.register(fd, 0)  # no events asked: it wakes on the writer's close

    def read(self) -> bytes:
        if self._short and self._hangup is not None:
            self._hangup.poll(PAUSE_MS)
        chunk = os.read(self.fd, _READ)
        self._short = self.patient and len(chunk) < _READ // 4
        return chunk

    def finish(self, tail: bytes) -> list[str]:
        """The binary notes before the stats at the end of the output; the stats read."""
        stats = _STATS.search(tail)
        if stats is not None:
            self.searched = int(stats[1])
            tail = tail[:stats.start()]
        return notes(tail)[0]


def notes(head: bytes) -> tuple[list[str], bytes]:
    """The paths of the binary notes at the start of `head`, and what follows them (the
    next record's path)."""
    said = []
    while (note := _NOTE.match(head)) is not None:
        said.append(os.fsdecode(note[1]))
        head = head[note.end():]
    return said, head


def groups(out: Output, keep: int, text: bool) -> Iterator[Group]:
    """rg -n's records, grouped per path as they come (a file's records are together);
    a record past MAX_RECORD bytes comes as a Long, its line cut to `keep` characters
    (left empty without `text`). A note after a file's records comes as (path, BINARY)."""
    while chunk := out.read():
        data = out.rest + chunk
        end = _complete(data)
        if end >= 0:
            out.rest = data[end:]
            yield from _block(data[:end])
        elif len(data) > MAX_RECORD and b"\0" in data:
            yield from _long(out, data, keep, text)
        else:
            out.rest = data
    for path in out.finish(out.rest):
        yield path, BINARY


def _complete(data: bytes) -> int:
    """Where the last whole record in `data` ends (after its line break), or -1."""
    last = data.rfind(b"\0")
    while last >= 0:
        newline = data.find(b"\n", last)
        if newline >= 0:
            return newline + 1
        last = data.rfind(b"\0", 0, last)
    return -1


def _block(data: bytes) -> Iterator[Group]:
    """The groups of whole records: a line at a time when the block is UTF-8 and each of
    its lines one record (no note, no path holding a line break), else a NUL at a time."""
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        decoded = ""
    if not decoded or decoded.count("\0") != decoded.count("\n"):
        yield from _pieces(data.split(b"\0"))
        return
    if "\r" in decoded:  # a CRLF file's lines: not shown with their \r
        decoded = decoded.replace("\r\n", "\n")
    lines = decoded.split("\n")
    lines.pop()  # after the last line break
    path, records = "", []
    for line in lines:
        name, _, record = line.partition("\0")
        if name != path:
            if records:
                yield path, records
            path, records = name, []
        records.append(record)
    if records:
        yield path, records


def _pieces(pieces: list[bytes]) -> Iterator[Group]:
    """Groups from a block cut at its NULs: pieces[0] is the first path (after any
    notes), each later piece a line and the next path."""
    said, raw = notes(pieces[0]) if b"\n" in pieces[0] else ([], pieces[0])
    for noted in said:
        yield noted, BINARY
    path, records = os.fsdecode(raw), []
    for piece in pieces[1:]:
        newline = piece.find(b"\n")
        end = newline - 1 if piece.endswith(b"\r", 0, newline) else newline
        records.append(piece[:end].decode("utf-8", "replace"))
        following = piece[newline + 1:]
        if following != raw:
            yield path, records
            if b"\n" in following:
                said, following = notes(following)
                for noted in said:
                    yield noted, BINARY
            raw, path, records = following, os.fsdecode(following), []


def _long(out: Output, data: bytes, keep: int, text: bool) -> Iterator[Group]:
    """A record too long to hold (after any notes): its path and number from its start,
    its line cut as it streams past, never whole."""
    nul = data.index(b"\0")
    said, path = notes(data[:nul])
    for noted in said:
        yield noted, BINARY
    line = _LINE.match(data, nul + 1)
    if line is None:
        raise ValueError("a long rg record without its line number")
    cut = _Cut(keep)
    piece = data[line.end():]
    while (newline := piece.find(b"\n")) < 0:
        if text:
            cut.feed(piece)
        piece = out.read()
        if not piece:
            break
    if newline >= 0:
        if text:
            cut.feed(piece[:newline])
        out.rest = piece[newline + 1:]
    else:
        out.rest = b""
    yield os.fsdecode(path), Long(int(line[1]), line[2] == b":", cut.done() if text else "")


class _Cut:
    """One line fed in pieces: its first `keep` + 1 characters and its length, in
    characters of the text as shown (bytes that are not UTF-8 as U+FFFD)."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.head: list[str] = []
        self.held = self.length = 0
        self.last = ""
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self._decoder.decode(data, final)
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


def counts(out: Output) -> Iterator[list[tuple[str, str]]]:
    """rg -c's records a block at a time: (path, matched lines as digits)."""
    while chunk := out.read():
        data = out.rest + chunk
        end = _complete(data)
        if end < 0:
            out.rest = data
            continue
        out.rest = data[end:]
        # decoded whole (a name that is not UTF-8 as the walker keeps it), then cut: a
        # piece is a count, its line break and the next path
        path, *pieces = data[:end].decode("utf-8", "surrogateescape").split("\0")
        found = []
        for piece in pieces:
            count, _, following = piece.partition("\n")
            found.append((path, count))
            path = following
        yield found
    out.finish(out.rest)


def names(out: Output) -> Iterator[list[str]]:
    """rg -l's records a block at a time: the paths."""
    while chunk := out.read():
        *found, out.rest = (out.rest + chunk).split(b"\0")
        yield b"\0".join(found).decode("utf-8", "surrogateescape").split("\0") \
            if found else []
    out.finish(out.rest)
