"""Bytes to text and back: BOMs, binary sniffing, the encoding names of docs/protocol.md,
lines.

Shared by file.read, file.info, file.patch and file.search so that they agree on what is
text, how it decodes and where its lines are. Only "\\n" ends a line (a "\\r" before it is
part of the line ending); U+2028, form feeds, U+0085 and the like are ordinary characters,
so nothing here uses str.splitlines().

Encoding names (docs/protocol.md, `file.read`): "utf-8", "utf-8-sig" (UTF-8 behind a
BOM; either may hold a few bytes that are not UTF-8, shown as U+FFFD and counted as
`invalid`: tools/read/lossy.py), "utf-16-le" and "utf-16-be" (behind their BOM), a legacy
encoding the charset detector names with confidence for other text (tools/read/legacy.py:
"gb18030", "shift_jis", "cp1251", ...), and "latin-1" for the rest; latin-1 maps every
byte to one character, so that decoding is lossless. A legacy encoding is named only when
the whole file decodes in it; an edit goes back to bytes through tools/read/reencode.py,
which keeps every unchanged byte.
"""

from __future__ import annotations

import codecs
import errno
import os
from dataclasses import dataclass
from typing import Iterator

from chorus_tools.tools.read import legacy, lossy

SNIFF_BYTES = 8192  # a NUL within this many leading bytes makes a file binary
CHUNK = 1 << 18  # streaming read size: bounds memory, amortises the syscalls, and
# stays in L2 cache between the read and the passes over it (10% faster than 1 MiB)

_BOMS = (  # longest first is not needed: no BOM here is a prefix of another
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
BOM_OF = {name: bom for bom, name in _BOMS}

# The Python codec that decodes what follows the BOM, by protocol encoding name.
CODEC_OF = {"utf-8": "utf-8", "utf-8-sig": "utf-8", "utf-16-le": "utf-16-le",
            "utf-16-be": "utf-16-be", "latin-1": "latin-1", **legacy.CODEC_OF}
ENCODINGS = ("utf-8", "utf-8-sig", "utf-16-le", "utf-16-be", "latin-1", *legacy.NAMES)

IMAGE_MIMES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})

# Leading bytes that mark a binary format even without a NUL in the sniffed head. Each is
# long enough that no ordinary text starts with it by accident.
_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
    (b"PK\x03\x04", "application/zip"),
    (b"PK\x05\x06", "application/zip"),
    (b"PK\x07\x08", "application/zip"),
    (b"\x1f\x8b", "application/gzip"),
    (b"\x7fELF", "application/x-executable"),
    (b"\xfd7zXZ\x00", "application/x-xz"),
    (b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"),
    (b"\x28\xb5\x2f\xfd", "application/zstd"),
    (b"Rar!\x1a\x07", "application/vnd.rar"),
    (b"\xca\xfe\xba\xbe", "application/java-vm"),
    (b"\xfe\xed\xfa\xce", "application/x-mach-binary"),
    (b"\xfe\xed\xfa\xcf", "application/x-mach-binary"),
    (b"\xce\xfa\xed\xfe", "application/x-mach-binary"),
    (b"\xcf\xfa\xed\xfe", "application/x-mach-binary"),
    (b"\x00asm", "application/wasm"),
    (b"SQLite format 3\x00", "application/vnd.sqlite3"),
    (b"OggS\x00", "audio/ogg"),
    (b"fLaC", "audio/flac"),
)
_MAGICS = tuple(magic for magic, _ in _SIGNATURES)
OCTET_STREAM = "application/octet-stream"


def bom_encoding(head: bytes) -> str | None:
    """The encoding a leading BOM announces ("utf-8-sig", "utf-16-le", "utf-16-be")."""
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name
    return None


def binary_mime(head: bytes) -> str | None:
    """None when `head` (a file's first SNIFF_BYTES or more) starts a text file; else the
    binary's mime type, "application/octet-stream" when no signature names it.

    A UTF-16 BOM means text even though UTF-16 is full of NULs; otherwise a known
    signature or a NUL in the first SNIFF_BYTES means binary."""
    if head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        return None
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(_MAGICS):
        return next(mime for magic, mime in _SIGNATURES if head.startswith(magic))
    if b"\0" in head[:SNIFF_BYTES]:
        return OCTET_STREAM
    return None


@dataclass(frozen=True)
class Decoded:
    """A whole text file's text (without its BOM), encoding name, and the bytes of its
    ill-formed UTF-8 sequences (each shown as U+FFFD) when the encoding is UTF-8."""

    text: str
    encoding: str
    invalid: int = 0


def decoded(data: bytes) -> Decoded:
    """Decode a whole text file.

    UTF-16 that is not well formed decodes with U+FFFD replacements (the BOM settles the
    encoding). Other bytes that are not UTF-8 decode as UTF-8 with U+FFFD for each
    ill-formed sequence when most bytes over 0x7F are well-formed UTF-8
    (tools/read/lossy.py), else in the legacy encoding the detector names, else losslessly
    as latin-1 (BOM and all). `encode(text, encoding) == data` for all but those with
    U+FFFD replacements and the few legacy files with a character of two byte forms; an
    edit keeps their bytes (tools/read/reencode.py)."""
    bom = bom_encoding(data)
    if bom is not None and bom != "utf-8-sig":
        return Decoded(data[2:].decode(bom, errors="replace"), bom)
    body = data[3:] if bom else data
    try:
        return Decoded(body.decode("utf-8"), bom or "utf-8")
    except UnicodeDecodeError as exc:
        counted = lossy.tally(body)
        if counted.mostly_utf8:
            return Decoded(body.decode("utf-8", "replace"), bom or "utf-8", counted.bad)
        found = None if bom else legacy.named_text(data, exc.start)
        return Decoded(*found) if found else Decoded(data.decode("latin-1"), "latin-1")


def decode(data: bytes) -> tuple[str, str]:
    """`decoded(data)` as (text, encoding name)."""
    found = decoded(data)
    return found.text, found.encoding


def encode(text: str, encoding: str) -> bytes:
    """Text back to file bytes in `encoding` (a name `decode` returned), BOM included.

    Raises UnicodeEncodeError when the text holds a character the encoding cannot carry
    (anything above U+00FF in a latin-1 file, a kana in a cp1251 one, a lone surrogate
    anywhere): the caller decides how to report it rather than the file silently changing
    encoding. gb18030 holds every character."""
    return BOM_OF.get(encoding, b"") + text.encode(CODEC_OF[encoding])


def lines_with_endings(text: str) -> list[str]:
    """The lines of `text`, each keeping its "\\n" or "\\r\\n" (the last may have none).

    Like str.splitlines(keepends=True) but breaking at "\\n" only."""
    lines = text.split("\n")
    last = lines.pop()
    lines = [line + "\n" for line in lines]
    if last:
        lines.append(last)
    return lines


def count_lines(text: str) -> int:
    """Number of lines: every "\\n" ends one, plus a final line without one."""
    return text.count("\n") + (1 if text and text[-1] != "\n" else 0)


def chunks(fd: int, pos: int = 0, first: int | None = None,
           buf: bytearray | None = None) -> Iterator[bytes | bytearray]:
    """The file from byte `pos` to its end in pieces of at most CHUNK bytes, read into one
    reused buffer, `buf` when given (a fresh megabyte per read costs page faults that dwarf
    the read): each piece is valid only until the next one is asked for. Holes of a sparse
    file come out as zeros without being read, so a 2 GB sparse file does not fill the page
    cache (a file with as many blocks as bytes has no holes: it is not asked where they are,
    which cost a system call per piece). The first piece is at most `first` bytes, for a
    caller that likely needs only a few lines (a window of 50 lines should not read and
    decode a megabyte)."""
    size = CHUNK if first is None else min(first, CHUNK)
    if buf is None or len(buf) != size:
        buf = bytearray(size)
    zeros = b""
    st = os.fstat(fd)
    sparse = st.st_blocks * 512 < st.st_size
    while True:
        data = _next_data(fd, pos) if sparse else pos
        if data > pos:
            zeros = zeros or bytes(CHUNK)
            n = min(size, data - pos)
            yield zeros if n == CHUNK else zeros[:n]
        else:
            n = os.preadv(fd, [buf], pos)
            if not n:
                return
            yield buf if n == size else buf[:n]
        pos += n
        if size < CHUNK:
            size = CHUNK
            buf = bytearray(size)


def _next_data(fd: int, pos: int) -> int:
    """Where data (not a hole) starts at or after `pos`: the file's size when only a hole
    follows; `pos` itself where the file system cannot tell."""
    try:
        return os.lseek(fd, pos, os.SEEK_DATA)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            return max(pos, os.fstat(fd).st_size)
        return pos
