"""A tar or tar.gz read once, in order, header by header (docs/protocol.md, Bytes in and
out): the reader of an archive import (tools/bytes/archive_check.py), in place of
tarfile's "r|" mode, which parsed each header field by field through a dozen Python calls
(60 µs a header, and tarfile writes a pax header before every entry whose mtime has a
fraction: two headers an entry) and copied every file through a buffered reader of its
own. Here a header is one checksum and a few slices, and a small file's bytes are a view
of the block they arrived in.

What it reads, as tarfile does: ustar with its prefix field, GNU long names and link names
('L', 'K'), pax headers ('x' for the next entry, 'g' for every later one: `path`,
`linkpath`, `size`), a V7 directory (a regular entry whose name ends in '/'), numbers in
octal or base-256, gzip made of several members (as our own exports are) with zero
padding between them. Names are UTF-8, undecodable bytes kept by surrogateescape, as
tarfile's default. Stricter than tarfile, which ends the archive quietly at a bad header
or a short one and drops the rest: a bad checksum anywhere, a stream that ends inside an
entry or before its end-of-archive block, a malformed pax record, a pax or GNU name
header over 1 MiB (tarfile reads it whole, whatever its size) are `Corrupt`. A GNU sparse
file (type 'S', or pax `GNU.sparse.*`) is reported as type 'S', which the import refuses.
Memory follows one compressed chunk and what it inflates to, never a file's size.
"""

from __future__ import annotations

import os
import queue
import re
import struct
import threading
import zlib
from contextlib import contextmanager
from typing import Iterator

CHUNK = 1 << 20
BLOCK = 512
GZIP_MAGIC = b"\x1f\x8b"
REGULAR = frozenset(b"07\0")  # tarfile's REGULAR_TYPES: a file, as its bytes follow
DIR, SYMLINK, HARDLINK, SPARSE = b"5", b"2", b"1", b"S"
_NAMES_MAX = 1 << 20
# a record's length in at most 19 digits (its header is at most _NAMES_MAX): a longer run
# is malformed, never an int() of thousands of digits, which Python refuses (ValueError)
_PAX_RECORD = re.compile(rb"(\d{1,19}) ([^=]+)=")
_SIGNED = struct.Struct("148b8x356b")


class Corrupt(Exception):
    """The stream is no whole, well-formed tar (or tar.gz)."""


class Header:
    """One entry as its headers describe it; `type` is its one-byte typeflag."""

    __slots__ = ("name", "type", "size", "mode", "linkname")

    def __init__(self, name: str, type: bytes, size: int, mode: int, linkname: str) -> None:
        self.name, self.type, self.size, self.mode, self.linkname = (
            name, type, size, mode, linkname)

    def isreg(self) -> bool:
        return self.type[0] in REGULAR


def chunks(fd: int) -> Iterator[bytes]:
    """The tar bytes of the archive open as `fd`: inflated, in pieces of at most CHUNK,
    when it starts with gzip's magic; as they are otherwise."""
    first = os.read(fd, CHUNK)
    if first[:2] != GZIP_MAGIC:
        while first:
            yield first
            first = os.read(fd, CHUNK)
        return
    yield from _inflate(first, fd)


@contextmanager
def read_ahead(source: Iterator[bytes], depth: int = 4) -> Iterator[Iterator[bytes]]:
    """`source`'s chunks made in a thread, up to `depth` ahead of the reader: `tar -xzf`
    inflates in a gzip process beside tar, and zlib releases the GIL while it inflates,
    so the worker's main thread parses and writes meanwhile. Memory: `depth` chunks.
    Leaving the block stops the thread and waits for it (before the caller closes the
    descriptor it reads); an error in it is raised to the reader."""
    ready: queue.Queue[bytes | BaseException | None] = queue.Queue(depth)
    stop = threading.Event()

    def offer(item: bytes | BaseException | None) -> bool:
        while not stop.is_set():
            try:
                ready.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def run() -> None:
        try:
            for chunk in source:
                if not offer(chunk):
                    return
            offer(None)
        except BaseException as exc:  # handed to the reader, raised there
            offer(exc)

    def taken() -> Iterator[bytes]:
        while (item := ready.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item

    thread = threading.Thread(target=run, name="inflate", daemon=True)
    thread.start()
    try:
        yield taken()
    finally:
        stop.set()
        thread.join()


def _inflate(data: bytes, fd: int) -> Iterator[bytes]:
    """Every gzip member in turn (zlib checks each one's CRC and length), zero padding
    between members skipped as gzip(1) and Python's gzip do; anything else is Corrupt."""
    member: "zlib._Decompress | None" = zlib.decompressobj(31)
    while True:
        if member is None:  # between members: padding, or the next one's header
            data = data.lstrip(b"\0")
            if data:
                member = zlib.decompressobj(31)
        if member is not None and data:
            try:
                out = member.decompress(data, CHUNK)
                while True:
                    if out:
                        yield out
                    if not member.unconsumed_tail:
                        break
                    out = member.decompress(member.unconsumed_tail, CHUNK)
            except zlib.error as exc:
                raise Corrupt(f"gzip: {exc}") from None
            if member.eof:
                data, member = member.unused_data, None
                continue
        data = os.read(fd, CHUNK)
        if not data:
            if member is not None:
                raise Corrupt("the gzip stream ends before its last member does")
            return


class Reader:
    """Headers and file bytes out of a stream of tar bytes, in order."""

    def __init__(self, source: Iterator[bytes]) -> None:
        self._source = source
        self._buf = b""
        self._pos = 0
        self._left = 0  # bytes of the current entry (and its padding) not read yet

    def _fill(self, n: int) -> bool:
        """At least `n` bytes buffered from `_pos`, or False at the stream's end."""
        have = len(self._buf) - self._pos
        if have >= n:
            return True
        parts = [self._buf[self._pos:]]
        while have < n:
            more = next(self._source, None)
            if more is None:
                self._buf, self._pos = b"".join(parts), 0
                return False
            parts.append(more)
            have += len(more)
        self._buf, self._pos = b"".join(parts), 0
        return True

    def _take(self, n: int) -> bytes:
        if not self._fill(n):
            raise Corrupt("the stream ends inside an entry")
        out = self._buf[self._pos:self._pos + n]
        self._pos += n
        return out

    def _skip(self, n: int) -> None:
        while n:
            have = len(self._buf) - self._pos
            if have >= n:
                self._pos += n
                return
            n -= have
            self._buf, self._pos = next(self._source, b""), 0
            if not self._buf:
                raise Corrupt("the stream ends inside an entry")

    def data(self, size: int) -> Iterator[memoryview]:
        """The current regular entry's `size` bytes, as views of the blocks they came
        in (valid until the next call on the reader); its padding is skipped later."""
        left = size
        while left:
            have = len(self._buf) - self._pos
            if not have:
                self._buf, self._pos = next(self._source, b""), 0
                have = len(self._buf)
                if not have:
                    raise Corrupt("the stream ends inside an entry")
            n = min(have, left)
            yield memoryview(self._buf)[self._pos:self._pos + n]
            self._pos += n
            left -= n
        self._left -= size

    def rest(self) -> Iterator[bytes]:
        """What follows the end-of-archive block, to its end (a gzip's trailer is
        checked only once it is read)."""
        if len(self._buf) > self._pos:
            yield self._buf[self._pos:]
        self._buf, self._pos = b"", 0
        yield from self._source

    def headers(self) -> Iterator[Header]:
        """Each entry's header, pax and GNU long names applied, until the first zero
        block (the end-of-archive marker, as tarfile reads it)."""
        global_pax: dict[bytes, bytes] = {}
        pending: dict[bytes, bytes] = {}
        long_name = long_link = None
        while True:
            self._skip(self._left)
            self._left = 0
            if not self._fill(BLOCK):
                raise Corrupt("the archive ends without its end-of-archive block")
            block = self._take(BLOCK)
            if block.count(0) == BLOCK:
                return
            kind, name, size, mode, link = _parse(block)
            self._left = -(-size // BLOCK) * BLOCK
            if kind in (b"x", b"X", b"g", b"L", b"K"):
                if size > _NAMES_MAX:
                    raise Corrupt(f"a {kind.decode()!r} header of {size} bytes")
                body = self._take(size)
                self._left -= size
                if kind == b"L":
                    long_name = _text(body.split(b"\0", 1)[0])
                elif kind == b"K":
                    long_link = _text(body.split(b"\0", 1)[0])
                elif kind == b"g":
                    global_pax.update(_pax(body))
                else:
                    pending = _pax(body)
                continue
            name = long_name if long_name is not None else name
            link = long_link if long_link is not None else link
            if pending or global_pax:  # a global header's records apply to every entry
                name, link, size, sparse = _apply({**global_pax, **pending}, name, link,
                                                  size)
                self._left = -(-size // BLOCK) * BLOCK if kind[0] in REGULAR else 0
                kind = SPARSE if sparse else kind
            elif kind[0] not in REGULAR:
                self._left = 0  # tarfile reads no bytes after a link, directory, device
            if kind == DIR:
                name = name.rstrip("/")
            pending, long_name, long_link = {}, None, None
            yield Header(name, kind, size, mode, link)


def _parse(block: bytes) -> tuple[bytes, str, int, int, str]:
    """(typeflag, name, size, mode, link name) of one header block, checksum checked."""
    stored = _number(block[148:156])
    if stored != 256 + sum(block) - sum(block[148:156]) and \
            stored != 256 + sum(_SIGNED.unpack(block)):
        raise Corrupt("a header's checksum does not match (not a tar, or corrupt)")
    kind = block[156:157]
    name = block[:100].split(b"\0", 1)[0]
    if block[257:263] == b"ustar\0" and kind not in (b"L", b"K", b"S"):
        prefix = block[345:500].split(b"\0", 1)[0]
        if prefix:
            name = prefix + b"/" + name
    if kind == b"\0" and name.endswith(b"/"):
        kind = DIR  # an old V7 directory
    size = _number(block[124:136])
    if size < 0:
        raise Corrupt("a header's size is negative")
    return (kind, _text(name), size, _number(block[100:108]),
            _text(block[157:257].split(b"\0", 1)[0]))


def _number(field: bytes) -> int:
    """A numeric field: octal (NUL or space ended), or base-256 (GNU) for large ones."""
    if field[0] in (0o200, 0o377):
        value = int.from_bytes(field[1:], "big")
        return value - 256 ** (len(field) - 1) if field[0] == 0o377 else value
    try:
        return int(field.split(b"\0", 1)[0].strip() or b"0", 8)
    except ValueError:
        raise Corrupt(f"a header's number is not octal: {field!r}") from None


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _pax(body: bytes) -> dict[bytes, bytes]:
    """The records of a pax header: `LEN KEY=VALUE\n`, LEN counting the whole record."""
    records: dict[bytes, bytes] = {}
    pos = 0
    while pos < len(body) and body[pos] != 0:
        match = _PAX_RECORD.match(body, pos)
        length = int(match.group(1)) if match else 0
        end = pos + length
        if match is None or end > len(body) or end <= match.end() or body[end - 1] != 10:
            raise Corrupt("a pax header's record is malformed")
        records[match.group(2)] = body[match.end():end - 1]
        pos = end
    return records


def _apply(pax: dict[bytes, bytes], name: str, link: str,
           size: int) -> tuple[str, str, int, bool]:
    """A pax header's `path`, `linkpath` and `size` over the entry's own, and whether its
    `GNU.sparse.*` records say the entry is a sparse file."""
    if b"path" in pax:
        name = _text(pax[b"path"])
    if b"linkpath" in pax:
        link = _text(pax[b"linkpath"])
    if b"size" in pax:
        try:
            size = int(pax[b"size"])
        except ValueError:
            raise Corrupt("a pax header's size is not a number") from None
        if size < 0:
            raise Corrupt("a pax header's size is negative")
    return name, link, size, any(key.startswith(b"GNU.sparse.") for key in pax)
