"""tools.text: what is text, how it decodes and encodes, how a file is read in pieces."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chorus_tools.tools.read import text
from chorus_tools.tools.read.reencode import encode_edit

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
ODD_CHARS = "\u2028\u2029\x0c\x0b\x85\x1c\x1d\x1e\r"


@pytest.mark.parametrize("data, expected", [
    (codecs.BOM_UTF8 + b"x", "utf-8-sig"),
    (codecs.BOM_UTF16_LE + b"x\x00", "utf-16-le"),
    (codecs.BOM_UTF16_BE + b"\x00x", "utf-16-be"),
    (b"plain", None),
    (b"", None),
])
def test_bom_encoding(data: bytes, expected: str | None) -> None:
    assert text.bom_encoding(data) == expected


@pytest.mark.parametrize("head, mime", [
    (PNG, "image/png"),
    (b"\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg"),
    (b"GIF89a\x01\x00", "image/gif"),
    (b"GIF87a\x01\x00", "image/gif"),
    (b"RIFF\x24\x00\x00\x00WEBPVP8 ", "image/webp"),
    (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "application/pdf"),
    (b"PK\x03\x04\x14\x00", "application/zip"),
    (b"\x1f\x8b\x08\x08abc", "application/gzip"),
    (b"\x7fELF\x02\x01\x01", "application/x-executable"),
    (b"some text\0with a NUL", "application/octet-stream"),
])
def test_binary_mime_names_known_formats(head: bytes, mime: str) -> None:
    assert text.binary_mime(head) == mime


def test_utf16_bom_is_text_despite_nuls() -> None:
    assert text.binary_mime("hello\n".encode("utf-16")) is None
    assert text.binary_mime(codecs.BOM_UTF16_BE + "hi".encode("utf-16-be")) is None


def test_nul_only_counts_in_the_first_8_kib() -> None:
    assert text.binary_mime(b"a" * (text.SNIFF_BYTES - 1) + b"\0") == text.OCTET_STREAM
    assert text.binary_mime(b"a" * text.SNIFF_BYTES + b"\0") is None


@pytest.mark.parametrize("head", [b"BZh is a prefix of bzip2", b"MZ is a DOS header",
                                  b"RIFF but not webp", b"PK is a name", b""])
def test_ordinary_text_is_not_taken_for_a_signature(head: bytes) -> None:
    assert text.binary_mime(head) is None


def test_only_the_four_image_formats_are_images() -> None:
    assert text.binary_mime(PNG) in text.IMAGE_MIMES
    assert text.binary_mime(b"%PDF-1.4") not in text.IMAGE_MIMES
    assert text.binary_mime(b"text") is None
    assert text.IMAGE_MIMES == {"image/png", "image/jpeg", "image/gif", "image/webp"}


@pytest.mark.parametrize("data, expected", [
    (b"caf\xc3\xa9\n", ("café\n", "utf-8")),
    (codecs.BOM_UTF8 + b"caf\xc3\xa9", ("café", "utf-8-sig")),
    ("café\n".encode("utf-16-le"), None),  # no BOM: NULs, so not text, but decodes as bytes
    (codecs.BOM_UTF16_LE + "café\n".encode("utf-16-le"), ("café\n", "utf-16-le")),
    (codecs.BOM_UTF16_BE + "café\n".encode("utf-16-be"), ("café\n", "utf-16-be")),
    (b"caf\xe9\n", ("café\n", "latin-1")),
    (codecs.BOM_UTF8 + b"caf\xe9", ("\xef\xbb\xbfcaf\xe9", "latin-1")),
    (b"", ("", "utf-8")),
])
def test_decode(data: bytes, expected: tuple[str, str] | None) -> None:
    result = text.decode(data)
    if expected is not None:
        assert result == expected
    assert text.encode(*result) == data


@given(st.binary(max_size=64))
def test_decode_is_lossless_for_any_bytes_without_a_utf16_bom(data: bytes) -> None:
    """Lossless as text, or UTF-8 whose bad bytes, shown as U+FFFD, an edit that changes
    nothing writes back as they were."""
    if data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        data = b"x" + data
    found = text.decoded(data)
    if found.invalid:
        assert found.encoding in ("utf-8", "utf-8-sig")
        assert text.encode(found.text, found.encoding) != data
    else:
        assert text.encode(found.text, found.encoding) == data
    assert encode_edit(found.text, found.encoding, found.text, data) == data


@given(st.text(max_size=40).filter(lambda s: not any(0xD800 <= ord(c) <= 0xDFFF for c in s)),
       st.sampled_from(["utf-8", "utf-8-sig", "utf-16-le", "utf-16-be"]))
def test_encode_then_decode_round_trips(s: str, encoding: str) -> None:
    assert text.decode(text.encode(s, encoding)) == (s, encoding)


def test_encode_adds_the_bom_of_its_encoding() -> None:
    assert text.encode("a", "utf-8-sig") == codecs.BOM_UTF8 + b"a"
    assert text.encode("a", "utf-16-le") == codecs.BOM_UTF16_LE + b"a\x00"
    assert text.encode("a", "utf-16-be") == codecs.BOM_UTF16_BE + b"\x00a"
    assert text.encode("é", "latin-1") == b"\xe9"
    assert text.encode("é", "utf-8") == b"\xc3\xa9"


def test_encode_refuses_what_latin1_cannot_carry() -> None:
    with pytest.raises(UnicodeEncodeError):
        text.encode("€", "latin-1")


def test_only_newline_ends_a_line() -> None:
    s = f"a{ODD_CHARS}b\r\nc\n\nd"
    assert text.lines_with_endings(s) == [f"a{ODD_CHARS}b\r\n", "c\n", "\n", "d"]
    assert text.count_lines(s) == 4


@pytest.mark.parametrize("s, lines", [("", []), ("a", ["a"]), ("a\n", ["a\n"]),
                                      ("a\nb", ["a\n", "b"]), ("\n\n", ["\n", "\n"]),
                                      ("\r", ["\r"])])
def test_split_and_count_lines(s: str, lines: list[str]) -> None:
    assert text.lines_with_endings(s) == lines
    assert text.count_lines(s) == len(lines)


def _sparse(path: Path, pieces: list[tuple[int, bytes]], size: int) -> bytes:
    """A sparse file with `pieces` written at their offsets; returns its whole content."""
    with open(path, "wb") as f:
        for offset, data in pieces:
            f.seek(offset)
            f.write(data)
        f.truncate(size)
    return path.read_bytes()


@pytest.mark.parametrize("first", [None, 1, 5000])
@pytest.mark.parametrize("chunk", [4096, 1 << 20])
@pytest.mark.parametrize("pieces, size", [
    ([(0, b"head\n" * 10), (3 << 20, "mid é\nline\n".encode())], 5 << 20),
    ([(0, b"a" * 4095 + b"\xc3")], 64 << 10),  # a UTF-8 sequence cut by a hole
    ([(0, b"x\n"), (1 << 20, b"\n\n")], (1 << 20) + 2),  # ends with data, not a hole
])
def test_chunks_read_holes_as_zeros(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    chunk: int, pieces: list[tuple[int, bytes]],
                                    size: int, first: int | None) -> None:
    monkeypatch.setattr(text, "CHUNK", chunk)
    data = _sparse(tmp_path / "s", pieces, size)
    fd = os.open(tmp_path / "s", os.O_RDONLY)
    try:
        pieces_read = [bytes(piece) for piece in text.chunks(fd, first=first)]
        assert b"".join(pieces_read) == data
        assert len(pieces_read[0]) <= min(first or chunk, chunk)
    finally:
        os.close(fd)
