"""The lines of a big text file at memory speed: how many there are, its encoding, and
the byte where any line starts, found from whichever end is nearer.

file.read of lines 1-50 of a 10 MB file needs `total_lines`, and so a whole pass; in
Python (bytes.count is a byte-at-a-time loop) that pass cost ~7 ms. Here each piece of
the file is read into one reused buffer and compared and counted by numpy's vectorised
loops (~0.1 ms a MB from the page cache). mmap would save the copy, but a file truncated
under the mapping kills the worker with SIGBUS, so the copy stays.

A newline is the unit 0x0A: a byte in UTF-8 and latin-1 (where it never occurs inside
another character), a 16-bit unit in UTF-16 (whose 0x0A bytes may be half of another
character). The count settles UTF-8 against latin-1 on the way: only pieces with a byte
over 0x7F (or a sequence pending from the last one) go through the UTF-8 decoder.
"""

from __future__ import annotations

import codecs
import os
from dataclasses import dataclass
from typing import Any, Iterator

from chorus_tools.tools import text

NEWLINE = 10


@dataclass(frozen=True)
class Lines:
    """What a whole pass over a text file learns; what the line-count cache keeps."""

    newlines: int  # "\n" units
    total: int  # lines as file.read counts them: a last line without "\n" counts too
    encoding: str


def _np() -> Any:
    """numpy, imported on the first big file: a worker (and a spawn's first answer) pays
    nothing for it until then."""
    import numpy
    return numpy


def _dtype(encoding: str) -> str:
    return {"utf-16-le": "<u2", "utf-16-be": ">u2"}.get(encoding, "u1")


def _unit(encoding: str) -> int:
    return 2 if encoding.startswith("utf-16") else 1


def text_start(encoding: str) -> int:
    """Where the text starts: after the BOM, or at 0 (a BOM before latin-1 is text)."""
    return len(text.BOM_OF.get(encoding, b""))


def _pieces(fd: int, start: int, end: int, encoding: str) -> Iterator[tuple[int, Any]]:
    """(offset, units) from `start` to `end`, in text.CHUNK pieces. A trailing half unit
    (a UTF-16 file of odd length) comes last as an empty array. Bytes past `end`, the
    size the file had when it was opened, are not counted: a log appended to meanwhile
    is counted as the version its stat names, so line numbers found from that end agree."""
    np, dtype, unit = _np(), _dtype(encoding), _unit(encoding)
    pos, carry = start, b""
    for chunk in text.chunks(fd, start):
        data = carry + chunk if carry else chunk
        last = pos + len(data) >= end
        if last:
            data = data[:max(0, end - pos)]
        usable = len(data) - len(data) % unit
        carry = bytes(data[usable:])
        if usable:
            yield pos, np.frombuffer(data, dtype, usable // unit)
            pos += usable
        if last:
            break
    if carry:
        yield pos, np.empty(0, dtype)


SMALL = 1 << 16  # up to this size the file is decoded whole: no numpy to import


def _scratch() -> Any:
    return _np().empty(text.CHUNK + 1, bool)


def _newline_marks(units: Any, scratch: Any) -> Any:
    """Which units are newlines, written into `scratch` (a fresh array per piece would
    cost its page faults on every piece)."""
    if len(units) > len(scratch):
        return units == NEWLINE
    return _np().equal(units, NEWLINE, out=scratch[:len(units)])


def count(fd: int, head: bytes, size: int) -> Lines:
    """Count the lines of the first `size` bytes (its size when opened) of a text file
    whose first bytes are `head`, in one pass."""
    if size <= SMALL:
        content, encoding = text.decode(os.pread(fd, size, 0))
        return Lines(content.count("\n"), text.count_lines(content), encoding)
    np = _np()
    bom = text.bom_encoding(head)
    encoding = bom or "utf-8"
    validator = None if bom in ("utf-16-le", "utf-16-be") else \
        codecs.getincrementaldecoder("utf-8")()
    valid, newlines, ends_open = True, 0, False
    scratch = _scratch()
    for _, units in _pieces(fd, text_start(encoding), size, encoding):
        if not len(units):  # half a UTF-16 unit: an unfinished last line
            ends_open = True
            break
        newlines += int(np.count_nonzero(_newline_marks(units, scratch)))
        ends_open = int(units[-1]) != NEWLINE
        if valid and validator is not None and (validator.getstate()[0]
                                                or int(units.max()) > 0x7F):
            try:
                validator.decode(units.data)
            except UnicodeDecodeError:
                valid = False
    if valid and validator is not None:
        try:
            validator.decode(b"", final=True)
        except UnicodeDecodeError:
            valid = False
    return Lines(newlines, newlines + ends_open, encoding if valid else "latin-1")


def line_start(fd: int, lines: Lines, line: int, size: int) -> int | None:
    """The byte where line `line` (1 <= line <= lines.total) starts: after newline
    number line-1, sought from the start or from the end, whichever is nearer. None when
    the file no longer has that line (it shrank since it was counted)."""
    k = line - 1
    start = text_start(lines.encoding)
    if k == 0:
        return start
    if k <= lines.newlines - k:
        return _forward(fd, lines.encoding, start, size, k)
    return _backward(fd, lines.encoding, start, size, lines.newlines - k + 1)


def _forward(fd: int, encoding: str, start: int, end: int, k: int) -> int | None:
    """Just after the k-th newline between `start` and `end`."""
    np, unit, scratch = _np(), _unit(encoding), _scratch()
    for pos, units in _pieces(fd, start, end, encoding):
        hits = _newline_marks(units, scratch)
        found = int(np.count_nonzero(hits))
        if found >= k:
            return pos + unit * (int(np.flatnonzero(hits)[k - 1]) + 1)
        k -= found
    return None


def _backward(fd: int, encoding: str, start: int, size: int, k: int) -> int | None:
    """Just after the k-th newline counted back from the end; reads only the pieces
    between the end and that newline."""
    np, dtype, unit = _np(), _dtype(encoding), _unit(encoding)
    step = max(unit, text.CHUNK - text.CHUNK % unit)
    buf, scratch = bytearray(step), _scratch()
    end = size - (size - start) % unit
    while end > start:
        n = min(step, end - start)
        view = memoryview(buf)[:n]
        got = os.preadv(fd, [view], end - n)
        if got < n:
            break
        hits = np.flatnonzero(_newline_marks(np.frombuffer(view, dtype), scratch))
        if len(hits) >= k:
            return end - n + unit * (int(hits[len(hits) - k]) + 1)
        k -= len(hits)
        end -= n
    return None
