"""The lines of a big text file at memory speed: how many there are, its encoding, and
the byte where any line starts, found from whichever end is nearer.

file.read of lines 1-50 of a 10 MB file needs `total_lines`, and so a whole pass; in
Python (bytes.count is a byte-at-a-time loop) that pass cost ~7 ms. Here each piece of
the file is read into one reused buffer and compared and counted by numpy's vectorised
loops (~0.1 ms a MB from the page cache). mmap would save the copy, but a file truncated
under the mapping kills the worker with SIGBUS, so the copy stays. A file of several
megabytes is cut into parts at newlines and the parts are counted by threads at once:
the copy and numpy's loops release the GIL, so on two CPUs a 10 MB count repeated back to
back takes 65% of one thread's time; after a pause, when the file has left the CPU
caches, memory bandwidth bounds it and two threads save 10-20% (30% at 100 MB and up).

A newline is the unit 0x0A: a byte in UTF-8, latin-1 and every legacy encoding named
(GBK, Big5, Shift_JIS, EUC-*, where a byte below 0x40 is never part of another
character), a 16-bit unit in UTF-16 (whose 0x0A bytes may be half of another character).
The count checks UTF-8 on the way: only pieces with a byte over 0x7F (or a sequence
pending from the last one) go through the UTF-8 decoder. A file that is not UTF-8 is then
tallied by a second pass: UTF-8 with bad bytes when mostly well-formed UTF-8
(tools/read/lossy.py); else named from a bounded sample (tools/read/legacy.py) and, when
a legacy encoding is named, checked by a third pass to decode in it; the rest is latin-1.
"""

from __future__ import annotations

import codecs
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from functools import cache
from typing import Any, Callable, Iterator

from chorus_tools.tools.read import legacy, lossy, text

NEWLINE = 10


@dataclass(frozen=True)
class Lines:
    """What a whole pass over a text file learns; what the line-count cache keeps."""

    newlines: int  # "\n" units
    total: int  # lines as file.read counts them: a last line without "\n" counts too
    encoding: str
    invalid: int = 0  # bytes of ill-formed UTF-8 sequences in a UTF-8 file


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


def _pieces(fd: int, start: int, end: int, encoding: str,
            buf: bytearray | None = None) -> Iterator[tuple[int, Any]]:
    """(offset, units) from `start` to `end`, in text.CHUNK pieces. A trailing half unit
    (a UTF-16 file of odd length) comes last as an empty array. Bytes past `end`, the
    size the file had when it was opened, are not counted: a log appended to meanwhile
    is counted as the version its stat names, so line numbers found from that end agree."""
    np, dtype, unit = _np(), _dtype(encoding), _unit(encoding)
    pos, carry = start, b""
    for chunk in text.chunks(fd, start, buf=buf):
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


_kept = threading.local()


def _buffers() -> tuple[bytearray, Any]:
    """This thread's read buffer and newline marks, kept between passes: fresh ones cost
    their page faults on every pass (~15% of a 10 MB count)."""
    size = max(2, text.CHUNK)  # a UTF-16 unit at least
    kept = getattr(_kept, "buffers", None)
    if kept is None or len(kept[0]) != size:
        kept = _kept.buffers = (bytearray(size), _np().empty(size + 1, bool))
    return kept


def _newline_marks(units: Any, scratch: Any) -> Any:
    """Which units are newlines, written into `scratch` (a fresh array per piece would
    cost its page faults on every piece)."""
    if len(units) > len(scratch):
        return units == NEWLINE
    return _np().equal(units, NEWLINE, out=scratch[:len(units)])


def count(fd: int, head: bytes, size: int) -> Lines:
    """Count the lines of the first `size` bytes (its size when opened) of a text file
    whose first bytes are `head`, in one pass (split among threads when it is big)."""
    if size <= SMALL:
        found = text.decoded(os.pread(fd, size, 0))
        return Lines(found.text.count("\n"), text.count_lines(found.text), found.encoding,
                     found.invalid)
    bom = text.bom_encoding(head)
    encoding = bom or "utf-8"
    validate = bom not in ("utf-16-le", "utf-16-be")
    bounds = _part_bounds(fd, text_start(encoding), size, encoding)
    parts = _in_parallel(_count_part, [(fd, begin, end, encoding, validate)
                                       for begin, end in zip(bounds, bounds[1:])])
    newlines = sum(part.newlines for part in parts)
    ends_open = bool(parts) and parts[-1].ends_open
    bad = min((part.bad for part in parts if part.bad is not None), default=None)
    if bad is None:
        return Lines(newlines, newlines + ends_open, encoding)
    encoding, invalid = _not_utf8(fd, bad, size, bom)
    return Lines(newlines, newlines + ends_open, encoding, invalid)


def _not_utf8(fd: int, bad: int, size: int, bom: str | None) -> tuple[str, int]:
    """The encoding of a file that is not UTF-8 from byte `bad` on, and its bad bytes:
    UTF-8 (behind its BOM) when mostly well-formed; else, without a BOM, the legacy one
    named from a sample there (or its superset), if the whole file decodes in it; else
    latin-1."""
    counted = lossy.Tally()
    _fed(fd, text_start(bom or "utf-8"), size, counted.feed)
    if counted.mostly_utf8:
        return bom or "utf-8", counted.bad
    if bom is None:
        named = legacy.name_of(lambda pos, n: os.pread(fd, n, pos), bad, size)
        for name in legacy.widening(named):
            check = legacy.Decodes(name)
            if _fed(fd, 0, size, check.feed) and check.fits:
                return name, 0
    return "latin-1", 0


def _fed(fd: int, start: int, size: int, feed: Callable[[Any, bool], Any]) -> bool:
    """Feed the file's bytes from `start` up to `size` to `feed` in pieces, the last with
    final=True, while it answers anything but False; whether all were fed (one pass)."""
    pos = start
    for chunk in text.chunks(fd, start):
        piece = chunk[:max(0, size - pos)]
        pos += len(piece)
        if feed(piece, pos >= size) is False or pos >= size:
            break
    return pos >= size


@dataclass(frozen=True)
class _Part:
    newlines: int
    ends_open: bool  # its last unit is not a newline
    bad: int | None  # where its first byte that is not UTF-8 is (None when not checked)


def _count_part(fd: int, begin: int, end: int, encoding: str, validate: bool) -> _Part:
    """One part of a count. Parts start just after a newline, where no character is cut,
    so each part's UTF-8 is checked on its own, and the first part with a byte that is
    not UTF-8 holds the file's first such byte."""
    np, (buf, scratch) = _np(), _buffers()
    validator = codecs.getincrementaldecoder("utf-8")() if validate else None
    bad: int | None = None
    newlines, ends_open, pos = 0, False, begin
    for pos, units in _pieces(fd, begin, end, encoding, buf):
        if not len(units):  # half a UTF-16 unit: an unfinished last line
            return _Part(newlines, True, bad)
        newlines += int(np.count_nonzero(_newline_marks(units, scratch)))
        ends_open = int(units[-1]) != NEWLINE
        if bad is None and validator is not None and (validator.getstate()[0]
                                                      or int(units.max()) > 0x7F):
            bad = _first_bad(validator, units.data, pos)
        pos += len(units)
    if bad is None and validator is not None:
        bad = _first_bad(validator, b"", pos, final=True)
    return _Part(newlines, ends_open, bad)


def _first_bad(validator: Any, data: Any, pos: int, final: bool = False) -> int | None:
    """Where the first byte that is not UTF-8 is, when feeding `validator` the bytes at
    `pos` finds one (its error counts from the bytes it was still holding)."""
    held = len(validator.getstate()[0])
    try:
        validator.decode(data, final)
    except UnicodeDecodeError as exc:
        return pos - held + exc.start
    return None


def _part_bounds(fd: int, start: int, size: int, encoding: str) -> list[int]:
    """Where the parts of a count begin and end: each cut just after the first newline
    at or past an even share of the file (a cut with no newline near it is skipped)."""
    shares = min(_threads(), (size - start) // PART_BYTES)
    unit = _unit(encoding)
    bounds = [start]
    for i in range(1, shares):
        at = start + (size - start) * i // shares
        at -= (at - start) % unit
        cut = _forward(fd, encoding, at, min(size, at + text.CHUNK), 1)
        if cut is not None and bounds[-1] < cut < size:
            bounds.append(cut)
    return bounds + [size] if size > start else bounds


PART_BYTES = 2 << 20  # the least a thread takes: below it the hand-off costs more


@cache
def _threads() -> int:
    return max(1, min(4, len(os.sched_getaffinity(0))))


@cache
def _helpers() -> ThreadPoolExecutor:
    """Threads that count the other parts while the caller counts the first (numpy and
    preadv release the GIL). Made in the worker on its first big count, so they are in
    its Landlock domain; between counts they hold no lock, so a later fork (ripgrep) is as
    safe as without them. A forked child makes its own: its parent's threads are not in
    it, and their pool would take parts that nothing ever runs."""
    return ThreadPoolExecutor(max(1, _threads() - 1), thread_name_prefix="linecount")


os.register_at_fork(after_in_child=_helpers.cache_clear)


def _in_parallel(fn: Callable[..., _Part], calls: list[tuple[Any, ...]]) -> list[_Part]:
    """fn over each argument tuple, the first in this thread. Every part is finished
    before this returns or raises: they read the caller's descriptor."""
    if len(calls) <= 1:
        return [fn(*args) for args in calls]
    others = [_helpers().submit(fn, *args) for args in calls[1:]]
    try:
        first = fn(*calls[0])
    finally:
        wait(others)
    return [first] + [future.result() for future in others]


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
    np, unit, (buf, scratch) = _np(), _unit(encoding), _buffers()
    for pos, units in _pieces(fd, start, end, encoding, buf):
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
    buf, scratch = _buffers()
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
