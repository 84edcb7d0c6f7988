"""tools.linecount and tools.count_cache: the lines of big files counted at memory speed,
any line's start found from the nearer end, and counts shared by workers per version."""

from __future__ import annotations

import codecs
import os
import signal
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chorus_tools.tools.read import linecount, text
from chorus_tools.tools.read.count_cache import CountCache
from chorus_tools.tools.read.linecount import Lines


@pytest.fixture(autouse=True)
def big_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file takes the numpy path, however small."""
    monkeypatch.setattr(linecount, "SMALL", -1)


def _count(path: Path, data: bytes) -> tuple[Lines, list[int | None]]:
    """The file's Lines and the start of each of its lines, 1..total."""
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        lines = linecount.count(fd, os.pread(fd, text.SNIFF_BYTES, 0), len(data))
        starts = [linecount.line_start(fd, lines, n, len(data))
                  for n in range(1, lines.total + 1)]
        return lines, starts
    finally:
        os.close(fd)


def _expected_starts(data: bytes) -> list[int]:
    """Reference: the byte offset of every line, from the decoded lines (BOM included).
    In an encoding where a line break is the byte \\n, the bytes after each one: bytes
    decoded as U+FFFD would encode back to other bytes (regression: `e9 e9 85 85 0a`,
    read as UTF-8 with one replaced byte, put the second line at 7, not 5)."""
    decoded, encoding = text.decode(data)
    lines = text.lines_with_endings(decoded)
    first = len(text.encode("", encoding))  # after a BOM
    if text.encode("\n", encoding)[first:] == b"\n":
        return ([first] + [at + 1 for at, byte in enumerate(data) if byte == 10])[:len(lines)]
    return [len(text.encode("".join(lines[:n]), encoding)) for n in range(len(lines))]


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=300,
          deadline=None)
@given(chars=st.lists(st.sampled_from(["a", "\n", "\r\n", "é", "€", "😀", "Ċ", "\u0a00",
                                       "\u2028", "\x85"]), max_size=30),
       encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16-le", "utf-16-be",
                                 "latin-1"]),
       chunk=st.sampled_from([1, 2, 3, 7, 1 << 20]), odd_tail=st.booleans(),
       part=st.sampled_from([1, 2, 5, 1 << 21]))
def test_count_and_starts_agree_with_decode_at_any_chunk_and_part_size(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chars: list[str], encoding: str,
        chunk: int, odd_tail: bool, part: int) -> None:
    s = "".join(chars)
    data = s.encode("latin-1", "replace") + b"\xff" if encoding == "latin-1" \
        else text.encode(s, encoding)
    if odd_tail and encoding.startswith("utf-16"):
        data += b"\n"  # half a unit: an unfinished last line, not a newline
    monkeypatch.setattr(text, "CHUNK", chunk)
    monkeypatch.setattr(linecount, "PART_BYTES", part)  # cut into up to 4 threads' parts
    monkeypatch.setattr(linecount, "_threads", lambda: 4)
    lines, starts = _count(tmp_path / "f", data)
    decoded, expected_encoding = text.decode(data)
    assert lines.encoding == expected_encoding
    assert lines.total == text.count_lines(decoded)
    assert lines.newlines == decoded.count("\n")
    assert starts == _expected_starts(data)


def test_utf16_counts_newline_units_not_0x0a_bytes(tmp_path: Path) -> None:
    # U+010A is 0A 01 in UTF-16-LE, U+0A00 is 0A 00 in UTF-16-BE: neither is a newline.
    assert _count(tmp_path / "le", text.encode("\u010a\u010a\nx", "utf-16-le"))[0].total == 2
    assert _count(tmp_path / "be", text.encode("\u0a00\u0a00", "utf-16-be"))[0].total == 1


def test_a_late_byte_settles_latin1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text, "CHUNK", 16)
    lines, _ = _count(tmp_path / "f", b"abc\n" * 100 + b"caf\xe9\n")
    assert (lines.encoding, lines.total) == ("latin-1", 101)


def test_a_big_file_is_counted_in_parts_cut_after_newlines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(linecount, "_threads", lambda: 2)
    line = "€uro é\n".encode()  # multibyte characters on both sides of every cut
    data = line * ((2 * linecount.PART_BYTES) // len(line) + 3)
    path = tmp_path / "big"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        bounds = linecount._part_bounds(fd, 0, len(data), "utf-8")
        assert len(bounds) == 3 and all(data[cut - 1] == 0x0A for cut in bounds[1:-1])
        assert linecount.count(fd, data[:64], len(data)) == Lines(
            data.count(b"\n"), data.count(b"\n"), "utf-8")
    finally:
        os.close(fd)


def test_bad_bytes_in_a_later_part_settle_the_encoding(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """One bad byte among well-formed UTF-8 is UTF-8 with an invalid byte; more bad bytes
    than well-formed ones over 0x7F are latin-1. Both found whatever part holds them."""
    monkeypatch.setattr(linecount, "PART_BYTES", 64)
    monkeypatch.setattr(linecount, "_threads", lambda: 4)
    lines, _ = _count(tmp_path / "f", "é\n".encode() * 200 + b"caf\xe9\n" + b"x\n" * 100)
    assert (lines.encoding, lines.total, lines.invalid) == ("utf-8", 301, 1)
    lines, _ = _count(tmp_path / "g", "é\n".encode() * 4 + b"caf\xe9\n" * 9 + b"x\n" * 100)
    assert (lines.encoding, lines.total, lines.invalid) == ("latin-1", 113, 0)


def test_a_part_that_fails_fails_the_count_after_every_part_ends(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(linecount, "PART_BYTES", 64)
    monkeypatch.setattr(linecount, "_threads", lambda: 4)
    ended = []
    real = linecount._count_part

    def flaky(fd: int, begin: int, end: int, *args: object) -> object:
        if begin == 0:  # the caller's own part fails at once
            raise OSError(5, "Input/output error")
        time.sleep(0.05)  # the helpers' parts are still reading
        ended.append(begin)
        return real(fd, begin, end, *args)
    monkeypatch.setattr(linecount, "_count_part", flaky)
    with pytest.raises(OSError):
        _count(tmp_path / "f", b"line\n" * 200)
    assert len(ended) == 3  # no helper still reads the descriptor the caller then closes


def test_a_utf8_sequence_cut_at_the_end_is_latin1(tmp_path: Path) -> None:
    assert _count(tmp_path / "a", b"ok\n\xe2\x82")[0].encoding == "latin-1"
    assert _count(tmp_path / "b", b"ok\n\xe2\x82\xac")[0].encoding == "utf-8"


def test_empty_and_bom_only_files(tmp_path: Path) -> None:
    assert _count(tmp_path / "e", b"")[0] == Lines(0, 0, "utf-8")
    assert _count(tmp_path / "u", codecs.BOM_UTF8)[0] == Lines(0, 0, "utf-8-sig")
    assert _count(tmp_path / "w", codecs.BOM_UTF16_LE)[0] == Lines(0, 0, "utf-16-le")


def test_small_files_are_counted_by_decoding(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    data = "x\né\r\nlast".encode("utf-16-le")
    big, _ = _count(tmp_path / "a", codecs.BOM_UTF16_LE + data)
    monkeypatch.setattr(linecount, "SMALL", 1 << 20)
    assert _count(tmp_path / "b", codecs.BOM_UTF16_LE + data)[0] == big == \
        Lines(2, 3, "utf-16-le")


def test_holes_count_as_zeros(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text, "CHUNK", 4096)
    path = tmp_path / "s"
    with open(path, "wb") as f:
        f.write(b"head\n" * 10)
        f.seek(3 << 20)
        f.write("mid é\nline\n".encode())
        f.truncate(5 << 20)
    data = path.read_bytes()
    lines, _ = _count(path, data)
    decoded, encoding = text.decode(data)
    assert (lines.encoding, lines.total) == (encoding, text.count_lines(decoded))


def test_a_file_that_shrank_since_its_count_has_no_such_line(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"a\n" * 100)
    fd = os.open(path, os.O_RDONLY)
    try:
        lines = linecount.count(fd, b"a\n", 200)
        os.truncate(path, 20)
        assert linecount.line_start(fd, lines, 30, 200) is None  # sought forward
        assert linecount.line_start(fd, lines, 90, 200) is None  # sought backward
    finally:
        os.close(fd)


# --- the cache ------------------------------------------------------------------------

def test_cache_answers_only_for_the_same_version(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"a\nb\n")
    cache = CountCache(slots=8)
    before = os.stat(path)
    cache.put(before, Lines(2, 2, "utf-8"))
    assert cache.get(os.stat(path)) == Lines(2, 2, "utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1))
    assert cache.get(os.stat(path)) is None


def test_cache_is_shared_with_forked_workers(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"one\ntwo\nthree")
    cache = CountCache()
    pid = os.fork()
    if pid == 0:  # a worker: counts the file, remembers it, exits
        fd = os.open(path, os.O_RDONLY)
        cache.lines(fd, os.fstat(fd), b"one")
        os._exit(0)
    assert os.waitpid(pid, 0)[1] == 0
    assert cache.get(os.stat(path)) == Lines(2, 3, "utf-8")


def test_a_torn_slot_is_a_miss_not_a_wrong_count(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x\n")
    cache = CountCache(slots=1)
    st = os.stat(path)
    cache.put(st, Lines(1, 1, "utf-8"))
    cache._map[40] ^= 0xFF  # one byte of the total, as a concurrent writer might leave it
    assert cache.get(st) is None
    cache.put(st, Lines(1, 1, "utf-8"))
    assert cache.get(st) == Lines(1, 1, "utf-8")


def test_a_log_appended_to_is_counted_as_the_version_opened(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"".join(b"line %d\n" % i for i in range(1, 101)))
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        with open(path, "ab") as f:  # the writer goes on while the reader counts
            f.write(b"".join(b"late %d\n" % i for i in range(1, 51)))
        lines = linecount.count(fd, b"line 1\n", size)
        assert lines == Lines(100, 100, "utf-8")
        at = linecount.line_start(fd, lines, 99, size)  # sought back from `size`
        assert os.pread(fd, 8, at) == b"line 99\n"
    finally:
        os.close(fd)


def test_a_forked_child_counts_in_parts_with_threads_of_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: a child forked after a count inherited its parent's thread pool
    without the threads, and its next count waited forever for parts nobody ran."""
    monkeypatch.setattr(linecount, "PART_BYTES", 64)
    monkeypatch.setattr(linecount, "_threads", lambda: 2)
    data = b"line\n" * 1000
    assert _count(tmp_path / "parent", data)[0].total == 1000  # the parent's pool exists
    pid = os.fork()
    if pid == 0:
        signal.alarm(10)  # a hang fails the test instead of the run
        lines, _ = _count(tmp_path / "child", data)
        os._exit(0 if lines.total == 1000 else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
