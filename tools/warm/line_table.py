"""The lines a warm code.references shows (tools/warm/code_answers.py), read without
reading their file whole on every answer.

The uses come from the symbol index as byte offsets into the text it parsed; a reply
needs each one's line, column and text. The first answer that shows a file reads it
whole, checks it against the index's stamp (the CRC-32 of the text parsed: lines are
read only from that text) and keeps where its lines start, with the file's signature
(inode, size, change and modification times, from fstat). A later answer that finds the
same stamp and signature reads only the span from its first line to its last, with one
pread, and checks the signature again after it: a file written since is read whole and
checked again, and one that no longer holds the text parsed is None (its asker parses
it). The kept starts (4 bytes a line) stay within a byte bound, least recently used out.
"""

from __future__ import annotations

import os
import zlib
from array import array
from bisect import bisect_right
from collections import OrderedDict
from typing import NamedTuple

import numpy as np

from chorus_tools.tools.code.source import CHUNK
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError

Signature = tuple[int, int, int, int]
GAP = 4096  # lines closer than this are read together: a syscall costs more than 4 KiB


class Starts(NamedTuple):
    stamp: int  # the index's stamp of the text they were found in
    signature: Signature  # the file's, when that text was read and checked
    at: array  # uint32: where each line starts, then the text's length + 1


class Span(NamedTuple):
    """Some lines of a file: each one's bytes by its 0-based number (its line break not
    included), and how many lines the file has."""

    text: dict[int, bytes]
    count: int


class LineTables:
    """Per file, where its lines start, as the module doc says; at most `limit` bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.bytes = 0
        self._kept: OrderedDict[str, Starts] = OrderedDict()

    def span(self, ctx: ToolContext, path: str, stamp: int, offsets: list[int],
             around: int) -> tuple[list[int], list[int], Span] | None:
        """The 0-based line of each of `offsets` (sorted) and where that line starts, and
        the lines holding them with `around` lines either side; None when the file is no
        longer the text the index parsed (or cannot be read as code any more). Plain
        Python per use: a file shows a few uses as a rule, fewer than a numpy call pays."""
        try:
            fd, _ = ctx.ws.open_regular(path)
        except ToolError:
            return None
        try:
            kept = self._kept.get(path)
            if kept is None or kept.stamp != stamp or kept.signature != _signature(fd):
                kept = self._read(ctx, fd, path, stamp)
                if kept is None:
                    return None
            else:
                self._kept.move_to_end(path)
            at = kept.at
            lines = [bisect_right(at, offset) - 1 for offset in offsets]
            count = len(at) - 1
            wanted = sorted({near for line in lines for near in range(
                max(0, line - around), min(count, line + around + 1))}) if around \
                else sorted(set(lines))
            text = _read_lines(fd, at, wanted)
            if text is None or _signature(fd) != kept.signature:
                return None
            return lines, [at[line] for line in lines], Span(text, count)
        except OSError:
            return None
        finally:
            os.close(fd)

    def _read(self, ctx: ToolContext, fd: int, path: str, stamp: int) -> Starts | None:
        """Read the file whole, check it is the text parsed, and keep its lines' starts."""
        signature = _signature(fd)
        if signature[1] > ctx.limits.max_write_bytes:
            return None
        chunks = []
        while chunk := os.read(fd, CHUNK):
            chunks.append(chunk)
        data = b"".join(chunks)
        if zlib.crc32(data) != stamp:
            return None
        breaks = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
        found = Starts(stamp, signature, array("I", np.concatenate(
            ([0], breaks + 1, [len(data) + 1])).astype(np.uint32).tobytes()))
        if _signature(fd) == signature:  # else written meanwhile: checked again next time
            self._keep(path, found)
        return found

    def _keep(self, path: str, found: Starts) -> None:
        self.drop(path)
        if _size(found) > self.limit:
            return
        self._kept[path] = found
        self.bytes += _size(found)
        while self.bytes > self.limit:
            self.drop(next(iter(self._kept)))

    def drop(self, path: str) -> None:
        gone = self._kept.pop(path, None)
        if gone is not None:
            self.bytes -= _size(gone)

    def clear(self) -> None:
        self._kept.clear()
        self.bytes = 0


def _read_lines(fd: int, at: array, lines: list[int]) -> dict[int, bytes] | None:
    """The bytes of `lines` (sorted), each run of lines less than GAP bytes apart read
    with one pread; None when the file is shorter than the text parsed."""
    starts, ends = [at[line] for line in lines], [at[line + 1] - 1 for line in lines]
    text: dict[int, bytes] = {}
    run = 0
    for i in range(1, len(lines) + 1):
        if i < len(lines) and starts[i] - ends[i - 1] < GAP:
            continue
        base, size = starts[run], ends[i - 1] - starts[run]
        data = os.pread(fd, size, base)
        if len(data) != size:
            return None
        for j in range(run, i):
            text[lines[j]] = data[starts[j] - base:ends[j] - base]
        run = i
    return text


def _size(found: Starts) -> int:
    return len(found.at) * found.at.itemsize


def _signature(fd: int) -> Signature:
    st = os.fstat(fd)
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns
