"""file.read: numbered and raw windows, paging, caps, encodings, images, errors, and
memory bounded by the window on a 2 GB file."""

from __future__ import annotations

import base64
import codecs
import functools
import os
import re
import tracemalloc
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzing import examples
from chorus_tools.tools.read import read as read_module
from chorus_tools.tools.read import linecount, text
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.read.read import read
from chorus_tools.tools.confine.sandbox import version_of

MARKER = re.compile(r"… \[line truncated: showing (\d+) of (\d+) characters\]$")
PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06"
       b"\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00"
       b"\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")


@pytest.fixture(params=["memory", "stream"])
def rctx(request: pytest.FixtureRequest, ctx: ToolContext,
         monkeypatch: pytest.MonkeyPatch) -> ToolContext:
    """`ctx`, once on the in-memory path and once on the streaming path with tiny chunks
    (odd-sized, so UTF-8 sequences, UTF-16 units and CRLFs straddle them; a window's first
    read is smaller still)."""
    if request.param == "stream":
        monkeypatch.setattr(read_module, "SMALL_FILE", 0)
        monkeypatch.setattr(read_module, "WHOLE_FILE", 0)
        monkeypatch.setattr(linecount, "SMALL", -1)
        monkeypatch.setattr(read_module, "_WINDOW_FIRST", 3)
        monkeypatch.setattr(text, "CHUNK", 7)
    return ctx


def limited(ctx: ToolContext, **limits: int) -> ToolContext:
    return replace(ctx, limits=replace(ctx.limits, **limits))


def numbered(lines: list[str], start: int = 1) -> str:
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, start))


def code_of(call: Any) -> ToolError:
    with pytest.raises(ToolError) as info:
        call()
    return info.value


# --- the shape of a window ---------------------------------------------------------------

def test_numbered_like_cat_n(rctx: ToolContext, root: Path) -> None:
    (root / "a.py").write_text("import os\n\nprint(os.getcwd())\n")
    result = read(rctx, "a.py")
    assert result == {
        "content": "     1\timport os\n     2\t\n     3\tprint(os.getcwd())",
        "total_lines": 3, "truncated": False, "start_line": 1, "end_line": 3,
        "encoding": "utf-8", "version": version_of(os.stat(root / "a.py")),
    }


def test_last_line_without_newline_counts(rctx: ToolContext, root: Path) -> None:
    (root / "a").write_text("one\ntwo")
    result = read(rctx, "a")
    assert (result["content"], result["total_lines"]) == (numbered(["one", "two"]), 2)


def test_wide_line_numbers_keep_their_digits(ctx: ToolContext, root: Path) -> None:
    (root / "a").write_text("x\n" * 1_000_001)
    result = read(ctx, "a", offset=1_000_000, limit=2)
    assert result["content"] == "1000000\tx\n1000001\tx"
    assert (result["start_line"], result["end_line"], result["truncated"]) == \
        (1_000_000, 1_000_001, False)


def test_numbers_past_the_cached_prefixes(rctx: ToolContext, root: Path) -> None:
    (root / "a").write_text("".join(f"{i}\n" for i in range(1, 20001)))
    result = read(rctx, "a", offset=16380, limit=10)
    assert result["content"] == numbered([str(i) for i in range(16380, 16390)], 16380)


def test_offset_and_limit(rctx: ToolContext, root: Path) -> None:
    (root / "a").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = read(rctx, "a", offset=3, limit=4)
    assert result["content"] == numbered([f"line {i}" for i in range(3, 7)], 3)
    assert (result["start_line"], result["end_line"], result["total_lines"],
            result["truncated"]) == (3, 6, 10, True)
    tail = read(rctx, "a", offset=7, limit=100)
    assert (tail["start_line"], tail["end_line"], tail["truncated"]) == (7, 10, False)


def test_offset_past_the_end(rctx: ToolContext, root: Path) -> None:
    (root / "a").write_text("1\n2\n3\n")
    for offset in (4, 50):
        assert read(rctx, "a", offset=offset) == {
            "content": "", "total_lines": 3, "truncated": False, "start_line": offset,
            "end_line": offset - 1, "encoding": "utf-8",
            "version": version_of(os.stat(root / "a"))}


def test_empty_file(rctx: ToolContext, root: Path) -> None:
    (root / "e").write_bytes(b"")
    result = read(rctx, "e")
    assert (result["content"], result["total_lines"], result["truncated"],
            result["start_line"], result["end_line"], result["encoding"]) == \
        ("", 0, False, 1, 0, "utf-8")
    assert read(rctx, "e", raw=True)["content"] == ""


def test_a_file_of_empty_lines(rctx: ToolContext, root: Path) -> None:
    (root / "n").write_text("\n\n\n")
    result = read(rctx, "n")
    assert (result["content"], result["total_lines"]) == ("     1\t\n     2\t\n     3\t", 3)
    assert read(rctx, "n", raw=True)["content"] == "\n\n\n"


def test_paging_with_end_line_plus_one_walks_the_whole_file(rctx: ToolContext,
                                                            root: Path) -> None:
    lines = [f"{i}: " + "é" * (i % 37) for i in range(1, 301)]
    (root / "a").write_text("\n".join(lines) + "\n")
    small = limited(rctx, max_read_bytes=500)
    seen: list[str] = []
    offset = 1
    while True:
        result = read(small, "a", offset=offset, limit=17)
        seen.extend(line.split("\t", 1)[1] for line in result["content"].split("\n"))
        assert len(result["content"].encode()) <= 500
        if not result["truncated"]:
            break
        offset = result["end_line"] + 1
    assert seen == lines
    assert result["end_line"] == result["total_lines"] == 300


def test_raw_windows_concatenate_to_the_whole_file(rctx: ToolContext, root: Path) -> None:
    body = "α\r\nβ\n\n" + "x" * 3000 + "\r\n\u2028 line\x0c\x85\r\nno newline at end\r"
    (root / "a").write_text(body, newline="")
    small = limited(rctx, max_read_bytes=40)
    pieces: list[str] = []
    offset = 1
    while True:
        result = read(small, "a", offset=offset, limit=2, raw=True)
        pieces.append(result["content"])
        if not result["truncated"]:
            break
        offset = result["end_line"] + 1
    assert "".join(pieces) == body
    assert read(rctx, "a", raw=True)["content"] == body


def test_raw_is_exact_text_with_line_endings(rctx: ToolContext, root: Path) -> None:
    (root / "a").write_bytes(b"a\r\nb\nc")
    assert read(rctx, "a", raw=True, limit=1)["content"] == "a\r\n"
    assert read(rctx, "a", raw=True, offset=2)["content"] == "b\nc"
    assert read(rctx, "a", raw=True, offset=2, limit=1)["content"] == "b\n"


# --- line endings and odd characters -------------------------------------------------------

def test_crlf_lines_are_numbered_without_cr(rctx: ToolContext, root: Path) -> None:
    (root / "w").write_bytes(b"one\r\ntwo\r\n\r\nlone\rcr\r\nend\r")
    result = read(rctx, "w")
    assert result["content"] == numbered(["one", "two", "", "lone\rcr", "end\r"])
    assert result["total_lines"] == 5


def test_only_newline_breaks_lines(rctx: ToolContext, root: Path) -> None:
    odd = "a\u2028b\u2029c\x0cd\x0be\x85f\x1cg"
    (root / "u").write_text(odd + "\nsecond\n")
    result = read(rctx, "u")
    assert result["total_lines"] == 2
    assert result["content"] == numbered([odd, "second"])


# --- caps --------------------------------------------------------------------------------

def test_byte_cap_cuts_at_a_line_boundary(rctx: ToolContext, root: Path) -> None:
    (root / "a").write_text("".join(f"{i:04d}" + "ü" * 20 + "\n" for i in range(1, 101)))
    small = limited(rctx, max_read_bytes=200)
    result = read(small, "a")
    size = len(result["content"].encode())
    assert size <= 200
    assert result["truncated"] is True
    count = result["end_line"] - result["start_line"] + 1
    assert result["content"].count("\n") == count - 1
    one_more = numbered([f"{i:04d}" + "ü" * 20 for i in range(1, count + 2)])
    assert len(one_more.encode()) > 200  # the cap really was the reason to stop
    assert result["content"] == numbered([f"{i:04d}" + "ü" * 20 for i in range(1, count + 1)])


def test_default_byte_cap_is_256_kib(rctx: ToolContext, root: Path) -> None:
    (root / "big").write_text("y" * 99 + "\n" * 1 + ("z" * 99 + "\n") * 5000)
    result = read(rctx, "big")
    assert result["truncated"] is True
    assert len(result["content"].encode()) <= 256 * 1024
    assert len(result["content"].encode()) > 256 * 1024 - 120


def test_one_line_is_returned_even_over_the_cap(rctx: ToolContext, root: Path) -> None:
    (root / "a").write_text("x" * 500 + "\nsecond\n")
    small = limited(rctx, max_read_bytes=10)
    result = read(small, "a")
    assert (result["start_line"], result["end_line"], result["truncated"]) == (1, 1, True)
    assert result["content"] == numbered(["x" * 500])
    raw = read(small, "a", raw=True)
    assert (raw["content"], raw["end_line"]) == ("x" * 500 + "\n", 1)


def test_long_lines_are_cut_with_a_marker(rctx: ToolContext, root: Path) -> None:
    long = "".join(chr(0x41 + i % 26) for i in range(5000))
    (root / "a").write_text(f"short\n{long}\r\n{'é' * 2000}\n{'é' * 2001}\n")
    lines = read(rctx, "a")["content"].split("\n")
    assert lines[0] == "     1\tshort"
    cut = lines[1].split("\t", 1)[1]
    assert cut.startswith(long[:2000])
    match = MARKER.search(cut)
    assert match is not None and match.group(1, 2) == ("2000", "5000")
    assert cut[:match.start()] == long[:2000]
    assert lines[2] == "     3\t" + "é" * 2000  # exactly the limit: whole
    match = MARKER.search(lines[3])
    assert match is not None and match.group(2) == "2001"


def test_raw_never_cuts_a_line(rctx: ToolContext, root: Path) -> None:
    long = "q" * 7000
    (root / "a").write_text(long + "\n")
    assert read(rctx, "a", raw=True)["content"] == long + "\n"


def test_line_cut_follows_max_line_chars(rctx: ToolContext, root: Path) -> None:
    (root / "a").write_text("abcdefgh\r\nabc\r\n")
    result = read(limited(rctx, max_line_chars=3), "a")
    assert result["content"] == numbered(
        ["abc… [line truncated: showing 3 of 8 characters]", "abc"])


# --- encodings ---------------------------------------------------------------------------

@pytest.mark.parametrize("data, encoding", [
    ("naïve\r\nline\n".encode(), "utf-8"),
    (codecs.BOM_UTF8 + "naïve\r\nline\n".encode(), "utf-8-sig"),
    (codecs.BOM_UTF16_LE + "naïve\r\nline\n".encode("utf-16-le"), "utf-16-le"),
    (codecs.BOM_UTF16_BE + "naïve\r\nline\n".encode("utf-16-be"), "utf-16-be"),
    ("naïve\r\nline\n".encode("latin-1"), "latin-1"),
])
def test_encodings(rctx: ToolContext, root: Path, data: bytes, encoding: str) -> None:
    (root / "e").write_bytes(data)
    result = read(rctx, "e")
    assert (result["content"], result["encoding"]) == (numbered(["naïve", "line"]), encoding)
    assert read(rctx, "e", raw=True)["content"] == "naïve\r\nline\n"  # no BOM in the text


def test_latin1_is_lossless_for_every_byte(rctx: ToolContext, root: Path) -> None:
    data = bytes(b for b in range(1, 256) if b != 10) + b"\n"
    (root / "l").write_bytes(b"text " + data)
    result = read(rctx, "l", raw=True)
    assert result["encoding"] == "latin-1"
    assert result["content"].encode("latin-1") == b"text " + data


def test_bom_then_invalid_utf8_is_latin1_bom_and_all(rctx: ToolContext, root: Path) -> None:
    (root / "b").write_bytes(codecs.BOM_UTF8 + b"caf\xe9\n")
    result = read(rctx, "b", raw=True)
    assert (result["content"], result["encoding"]) == ("\xef\xbb\xbfcafé\n", "latin-1")


def test_late_non_utf8_bytes_settle_a_large_files_encoding(
        ctx: ToolContext, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A window at the top of a big file is read in the encoding the whole file has: one
    late bad byte leaves it UTF-8 (with an invalid byte), late latin-1 text makes it
    latin-1."""
    monkeypatch.setattr(read_module, "SMALL_FILE", 1000)
    (root / "u").write_bytes(b"caf\xc3\xa9?\n" + b"abc\n" * 1000 + b"\xe9\n")
    result = read(ctx, "u", limit=1)
    assert (result["content"], result["encoding"]) == ("     1\tcafé?", "utf-8")
    assert (result["total_lines"], result["invalid_bytes"]) == (1002, 1)
    (root / "l").write_bytes(b"caf\xc3\xa9?\n" + b"abc\n" * 1000 + b"\xe9\xe8\n")
    result = read(ctx, "l", limit=1)
    assert (result["content"], result["encoding"]) == ("     1\tcafÃ©?", "latin-1")
    assert result["total_lines"] == 1002 and "invalid_bytes" not in result


# --- images and binaries ---------------------------------------------------------------

def test_png_comes_back_as_base64(rctx: ToolContext, root: Path) -> None:
    (root / "p.png").write_bytes(PNG)
    result = read(rctx, "p.png")
    assert result == {"image": base64.b64encode(PNG).decode(), "mime_type": "image/png",
                      "size": len(PNG), "version": version_of(os.stat(root / "p.png"))}


@pytest.mark.parametrize("head, mime", [(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", "image/jpeg"),
                                        (b"GIF89a\x01\x00\x01\x00", "image/gif"),
                                        (b"RIFF\x1a\x00\x00\x00WEBPVP8L", "image/webp")])
def test_other_images_by_signature_not_name(rctx: ToolContext, root: Path, head: bytes,
                                            mime: str) -> None:
    (root / "image.txt").write_bytes(head + b"rest")
    result = read(rctx, "image.txt")
    assert (result["mime_type"], base64.b64decode(result["image"])) == (mime, head + b"rest")


def test_image_over_the_limit_is_file_too_large(rctx: ToolContext, root: Path) -> None:
    (root / "p.png").write_bytes(PNG + b"\0" * 1000)
    err = code_of(lambda: read(limited(rctx, max_image_bytes=500), "p.png"))
    assert err.code == "file_too_large"
    assert err.details == {"path": "p.png", "size": len(PNG) + 1000, "limit": 500}


@pytest.mark.parametrize("data, mime", [(b"%PDF-1.4\n%\xe2\xe3\n1 0 obj", "application/pdf"),
                                        (b"\x7fELF\x02\x01\x01", "application/x-executable"),
                                        (b"abc\0def\n", "application/octet-stream")])
def test_binary_file(rctx: ToolContext, root: Path, data: bytes, mime: str) -> None:
    (root / "bin").write_bytes(data)
    err = code_of(lambda: read(rctx, "bin"))
    assert err.code == "binary_file"
    assert err.details == {"path": "bin", "mime_type": mime, "size": len(data)}


def test_utf16_is_text_not_binary(rctx: ToolContext, root: Path) -> None:
    (root / "w").write_bytes("hi\n".encode("utf-16"))
    assert read(rctx, "w")["content"] == "     1\thi"


# --- errors ------------------------------------------------------------------------------

def test_file_not_found(rctx: ToolContext) -> None:
    err = code_of(lambda: read(rctx, "src/missing.py"))
    assert (err.code, err.details["path"]) == ("file_not_found", "src/missing.py")


def test_directory_is_is_directory(rctx: ToolContext, root: Path) -> None:
    (root / "d").mkdir()
    assert code_of(lambda: read(rctx, "d")).code == "is_directory"
    assert code_of(lambda: read(rctx, ".")).code == "is_directory"


@pytest.mark.usefixtures("no_hang")
def test_fifo_is_refused_without_blocking(rctx: ToolContext, root: Path) -> None:
    os.mkfifo(root / "pipe")
    err = code_of(lambda: read(rctx, "pipe"))
    assert (err.code, err.details["path"]) == ("not_a_regular_file", "pipe")


@pytest.mark.parametrize("path", ["../outside/canary.txt", "a/../../outside/canary.txt"])
def test_lexical_escape(rctx: ToolContext, outside: Path, path: str) -> None:
    assert code_of(lambda: read(rctx, path)).code == "path_outside_workspace"


def test_absolute_paths(rctx: ToolContext, root: Path, outside: Path) -> None:
    (root / "in.txt").write_text("inside\n")
    assert read(rctx, str(root / "in.txt"))["content"] == "     1\tinside"
    err = code_of(lambda: read(rctx, str(outside / "canary.txt")))
    assert err.code == "path_outside_workspace"


def test_symlinks(rctx: ToolContext, root: Path, outside: Path) -> None:
    (root / "real.txt").write_text("real\n")
    (root / "rel").symlink_to("real.txt")
    (root / "out").symlink_to("../outside/canary.txt")
    (root / "abs").symlink_to(root / "real.txt")
    assert read(rctx, "rel")["content"] == "     1\treal"
    for link in ("out", "abs"):
        err = code_of(functools.partial(read, rctx, link))
        assert err.code == "path_outside_workspace"
        assert "CANARY" not in err.message


@pytest.mark.parametrize("path", ["", "a\0b"])
def test_invalid_path_is_invalid_params(rctx: ToolContext, path: str) -> None:
    err = code_of(lambda: read(rctx, path))
    assert (err.code, err.details["param"]) == ("invalid_params", "path")


@pytest.mark.parametrize("kwargs, param", [({"offset": 0}, "offset"), ({"limit": 0}, "limit")])
def test_offset_and_limit_must_be_positive(rctx: ToolContext, root: Path,
                                           kwargs: dict[str, int], param: str) -> None:
    (root / "a").write_text("x\n")
    err = code_of(lambda: read(rctx, "a", **kwargs))
    assert (err.code, err.details["param"]) == ("invalid_params", param)


# --- both paths against a reference model ------------------------------------------------

def reference(data: bytes, offset: int, limit: int | None, raw: bool, cap: int,
              max_chars: int) -> dict[str, Any]:
    """docs/protocol.md's `file.read` (its negative offset included), written as plainly as
    possible."""
    decoded, _ = text.decode(data)
    lines = text.lines_with_endings(decoded)
    total = len(lines)
    if offset < 0:
        offset = max(1, total + offset + 1)
    window = lines[offset - 1:] if limit is None else lines[offset - 1:offset - 1 + limit]
    parts: list[str] = []
    used = 0
    for n, line in enumerate(window, offset):
        if raw:
            part, size = line, len(line.encode())
        else:
            body = line[:-2] if line.endswith("\r\n") else line.rstrip("\n")
            if len(body) > max_chars:
                body = (f"{body[:max_chars]}… [line truncated: showing {max_chars} of "
                        f"{len(body)} characters]")
            part = f"{n:>6}\t{body}"
            size = len(part.encode()) + (1 if parts else 0)
        if parts and used + size > cap:
            break
        parts.append(part)
        used += size
    if offset > total:
        return {"content": "", "total_lines": total, "truncated": False,
                "start_line": offset, "end_line": offset - 1}
    end = offset + len(parts) - 1
    return {"content": ("" if raw else "\n").join(parts), "total_lines": total,
            "truncated": end < total, "start_line": offset, "end_line": end}


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture],
          max_examples=examples(150), deadline=None)
@given(chars=st.lists(st.sampled_from(["a", "bc", "\n", "\r", "\r\n", "é", "€", "😀",
                                       "\u2028", "\x85", "\x0c"]), max_size=40),
       encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16-le", "utf-16-be",
                                 "latin-1"]),
       offset=st.integers(-10, 10).filter(bool), limit=st.one_of(st.none(),
                                                                  st.integers(1, 6)),
       raw=st.booleans(), cap=st.integers(1, 80), max_chars=st.integers(1, 8))
def test_matches_the_reference(rctx: ToolContext, root: Path, chars: list[str],
                               encoding: str, offset: int, limit: int | None, raw: bool,
                               cap: int, max_chars: int) -> None:
    s = "".join(chars)
    data = s.encode("latin-1", "replace") + b"\xff" if encoding == "latin-1" \
        else text.encode(s, encoding)
    (root / "h").write_bytes(data)
    result = read(limited(rctx, max_read_bytes=cap, max_line_chars=max_chars), "h",
                  offset=offset, limit=limit, raw=raw)
    expected = reference(data, offset, limit, raw, cap, max_chars)
    assert {k: result[k] for k in expected} == expected
    assert result["encoding"] == text.decode(data)[1]


# --- a negative offset: the tail ------------------------------------------------------

def test_negative_offset_is_the_last_lines_numbered_as_in_the_file(
        rctx: ToolContext, root: Path) -> None:
    lines = [f"entry {i}" for i in range(1, 101)]
    (root / "log").write_text("\n".join(lines) + "\n")
    result = read(rctx, "log", offset=-3)
    assert result["content"] == numbered(lines[-3:], start=98)
    assert (result["start_line"], result["end_line"], result["total_lines"],
            result["truncated"]) == (98, 100, 100, False)
    again = read(rctx, "log", offset=result["start_line"], limit=3)
    assert again["content"] == result["content"]


def test_negative_offset_with_limit_and_cap_keeps_truncated_meaning(
        rctx: ToolContext, root: Path) -> None:
    (root / "log").write_text("".join(f"line {i}\n" for i in range(1, 21)))
    result = read(rctx, "log", offset=-5, limit=2)
    assert (result["start_line"], result["end_line"], result["truncated"]) == (16, 17, True)
    capped = read(limited(rctx, max_read_bytes=20), "log", offset=-5)
    assert (capped["start_line"], capped["end_line"], capped["truncated"]) == (16, 16, True)


def test_more_lines_than_the_file_has_start_at_line_one(rctx: ToolContext,
                                                        root: Path) -> None:
    (root / "short").write_text("a\nb")
    assert read(rctx, "short", offset=-50)["content"] == numbered(["a", "b"])
    (root / "empty").write_text("")
    empty = read(rctx, "empty", offset=-1)
    assert (empty["content"], empty["start_line"], empty["end_line"]) == ("", 1, 0)


def test_repeat_tail_of_an_unchanged_file_counts_nothing(
        ctx: ToolContext, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read_module, "SMALL_FILE", 0)
    monkeypatch.setattr(linecount, "SMALL", -1)
    (root / "log").write_text("".join(f"line {i}\n" for i in range(1, 1001)))
    counted = []
    real_count = linecount.count
    monkeypatch.setattr(linecount, "count", lambda *a: counted.append(a) or real_count(*a))
    first = read(ctx, "log", offset=-2)
    assert read(ctx, "log", offset=-2) == first and len(counted) == 1
    with open(root / "log", "a") as f:
        f.write("line 1001\n")
    assert read(ctx, "log", offset=-1)["content"] == numbered(["line 1001"], start=1001)
    assert len(counted) == 2  # a new version is counted again


# --- memory bounded by the window --------------------------------------------------------

def peak_of(call: Any) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_two_gb_sparse_file_reads_lines_without_loading_it(ctx: ToolContext,
                                                           root: Path) -> None:
    lines = [f"line {i}: " + "w" * 40 for i in range(1, 501)]  # > 8 KiB: no NUL sniffed
    path = root / "huge.log"
    path.write_text("\n".join(lines) + "\n")
    os.truncate(path, 2 * 1024 ** 3)
    result, peak = peak_of(lambda: read(ctx, "huge.log", offset=1, limit=50))
    assert result["content"] == numbered(lines[:50])
    assert (result["start_line"], result["end_line"], result["truncated"]) == (1, 50, True)
    assert result["total_lines"] == 501  # the NUL tail is one last, unterminated line
    assert peak < 16 * 1024 ** 2


def test_a_giant_single_line_is_never_held_whole(ctx: ToolContext, root: Path) -> None:
    size = 48 * 1024 ** 2
    with open(root / "one", "wb") as f:
        for _ in range(size // (1 << 20)):
            f.write(b"\xc3\xa9" * (1 << 19))  # "é": a multibyte character on every cut
        f.write(b"\nnext\n")
    result, peak = peak_of(lambda: read(ctx, "one"))
    match = MARKER.search(result["content"].split("\n")[0])
    assert match is not None and match.group(2) == str(size // 2)
    assert result["content"].split("\n")[1] == "     2\tnext"
    assert peak < 16 * 1024 ** 2


def test_a_file_path_ending_in_slash_is_not_a_directory(ctx, root):
    """Regression: 'f/' read the file 'f' (normalisation dropped the slash); a path that
    ends with '/' names a directory, as the kernel would say."""
    (root / "f.txt").write_text("x\n")
    (root / "d").mkdir()
    for path in ("f.txt/", "f.txt/.", "d/../f.txt/"):
        with pytest.raises(ToolError) as err:
            read(ctx, path)
        assert err.value.code == "not_a_directory"
    with pytest.raises(ToolError) as err:
        read(ctx, "d/")
    assert err.value.code == "is_directory"
