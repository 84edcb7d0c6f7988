"""Legacy encodings read as their text (docs/protocol.md, file.read): the detector names
GBK, Big5, Shift_JIS, EUC-*, cp125x, KOI8 and ISO-8859 files with confidence, never runs
on UTF-8, falls back to latin-1 when unsure or when the file does not round-trip, decides
the same on every path (in memory, streamed, counted in parts), and a window of a big
legacy file is read in bounded memory."""

from __future__ import annotations

import os
import random
import tracemalloc
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from legacy_texts import ENCODED, TEXTS

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.read import legacy, linecount, text
from chorus_tools.tools.read import read as read_module
from chorus_tools.tools.read.info import info
from chorus_tools.tools.read.read import read


@pytest.fixture(params=["memory", "stream"])
def rctx(request: pytest.FixtureRequest, ctx: ToolContext,
         monkeypatch: pytest.MonkeyPatch) -> ToolContext:
    """`ctx` on the in-memory path, and on the streamed one with small odd chunks and
    the count cut into parts (so every decision is also made from a file descriptor)."""
    if request.param == "stream":
        monkeypatch.setattr(read_module, "SMALL_FILE", 0)
        monkeypatch.setattr(read_module, "WHOLE_FILE", 0)
        monkeypatch.setattr(linecount, "SMALL", -1)
        monkeypatch.setattr(linecount, "PART_BYTES", 97)
        monkeypatch.setattr(linecount, "_threads", lambda: 3)
        monkeypatch.setattr(text, "CHUNK", 61)
    return ctx


@pytest.mark.parametrize(("language", "codec", "name"), ENCODED,
                         ids=[f"{lang}-{codec}" for lang, codec, _ in ENCODED])
def test_a_legacy_file_reads_as_its_text(rctx: ToolContext, root: Path, language: str,
                                         codec: str, name: str) -> None:
    (root / "f.py").write_bytes(TEXTS[language].encode(codec))
    raw = read(rctx, "f.py", raw=True)
    assert (raw["content"], raw["encoding"]) == (TEXTS[language], name)
    numbered = read(rctx, "f.py", offset=3, limit=2)
    lines = TEXTS[language].split("\n")
    assert numbered["content"] == f"     3\t{lines[2]}\n     4\t{lines[3]}"
    described = info(rctx, "f.py")
    assert (described["encoding"], described["lines"]) == (name, TEXTS[language].count("\n"))


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(picked=st.sampled_from([case for case in ENCODED if case[2] != "latin-1"]),
       repeat=st.integers(1, 4), chunk=st.sampled_from([5, 64, 1 << 18]),
       part=st.sampled_from([7, 300, 1 << 21]), head=st.sampled_from(["", "x = 1\n" * 40]))
def test_the_count_in_parts_decides_as_the_whole_decode(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, picked: tuple[str, str, str],
        repeat: int, chunk: int, part: int, head: str) -> None:
    language, codec, name = picked
    data = (head + TEXTS[language] * repeat).encode(codec)
    monkeypatch.setattr(linecount, "SMALL", -1)
    monkeypatch.setattr(text, "CHUNK", chunk)
    monkeypatch.setattr(linecount, "PART_BYTES", part)
    monkeypatch.setattr(linecount, "_threads", lambda: 4)
    path = tmp_path / "f"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        lines = linecount.count(fd, data[:text.SNIFF_BYTES], len(data))
        starts = [linecount.line_start(fd, lines, n, len(data)) for n in (1, lines.total)]
    finally:
        os.close(fd)
    decoded, encoding = text.decode(data)
    assert (lines.encoding, lines.total) == (encoding, text.count_lines(decoded))
    assert encoding == name
    assert starts == [0, data.rstrip(b"\n").rfind(b"\n") + 1]


@given(st.text())
def test_utf8_text_is_never_given_a_legacy_name(s: str) -> None:
    data = s.encode("utf-8", "surrogatepass")
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return  # a lone surrogate is not UTF-8: nothing to assert
    assert text.decode(data) == (s, "utf-8")


def test_the_detector_never_runs_for_utf8(rctx: ToolContext, root: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("the detector ran for a UTF-8 file")
    monkeypatch.setattr(legacy, "name_of", refuse)
    samples = {"ascii.txt": b"plain ascii\n" * 500, "zh.txt": TEXTS["zh_hans"].encode(),
               "ru.txt": TEXTS["ru"].encode() * 30, "bom.txt": b"\xef\xbb\xbf" + "é\n".encode()}
    for name, data in samples.items():
        (root / name).write_bytes(data)
        assert read(rctx, name)["encoding"] in ("utf-8", "utf-8-sig")
        assert info(rctx, name)["encoding"] in ("utf-8", "utf-8-sig")


LOW_CONFIDENCE = {
    "one accent": b"caf\xe9\n",
    "a short GBK word": "你好\n".encode("gbk"),
    "a short cp1251 line": "Привет\n".encode("cp1251"),
    "random bytes": bytes(random.Random(5).randrange(0x20, 0x100) for _ in range(3000)),
    "broken UTF-8 behind a BOM": b"\xef\xbb\xbf" + TEXTS["ru"].encode("cp1251"),
}


@pytest.mark.parametrize("data", LOW_CONFIDENCE.values(), ids=LOW_CONFIDENCE.keys())
def test_without_confidence_a_file_is_latin1(rctx: ToolContext, root: Path,
                                             data: bytes) -> None:
    (root / "f").write_bytes(data)
    got = read(rctx, "f", raw=True)
    assert (got["content"], got["encoding"]) == (data.decode("latin-1"), "latin-1")
    assert info(rctx, "f")["encoding"] == "latin-1"


def test_utf8_with_a_stray_byte_is_no_legacy_encoding(rctx: ToolContext, root: Path) -> None:
    """The detector is not trusted on a sample that is mostly UTF-8: the file is UTF-8
    with its bad byte shown as U+FFFD (tests/tools/test_broken_utf8.py)."""
    (root / "f").write_bytes(TEXTS["zh_hans"].encode() + b"\xff\n")
    got = read(rctx, "f", raw=True)
    assert (got["content"], got["encoding"]) == (TEXTS["zh_hans"] + "\ufffd\n", "utf-8")
    assert info(rctx, "f")["invalid_bytes"] == got["invalid_bytes"] == 1


def test_a_file_that_does_not_decode_past_the_sample_is_latin1(rctx: ToolContext,
                                                                root: Path) -> None:
    data = TEXTS["zh_hans"].encode("gbk") * 100 + b"\x81\n"  # the sample sees only GBK
    assert len(data) > 2 * legacy.SAMPLE_BYTES
    (root / "f").write_bytes(data)
    assert read(rctx, "f", limit=1)["encoding"] == "latin-1"


def test_a_character_with_two_byte_forms_is_still_named(rctx: ToolContext,
                                                        root: Path) -> None:
    # Windows writes 纊 as FA5C (IBM), Python's cp932 as ED40 (NEC): both decode to it
    data = (TEXTS["ja"] * 40).encode("cp932") + b"\xfa\x5c\n"
    (root / "f").write_bytes(data)
    got = read(rctx, "f", offset=-1)
    assert (got["encoding"], got["content"]) == ("cp932", f"{40 * 12 + 1:>6}\t纊")


def test_each_name_is_the_detected_texts_first_candidate() -> None:
    # Greek in cp1253 and ISO-8859-7 is the same text here: the first candidate names it.
    greek = TEXTS["el"].encode("iso8859_7")
    assert text.decode(greek) == (TEXTS["el"], "cp1253")
    # Japanese without Microsoft's extensions is shift_jis; with ① only cp932 holds it.
    assert text.decode(TEXTS["ja"].encode("cp932"))[1] == "shift_jis"
    assert text.decode((TEXTS["ja"] + "① 注意\n").encode("cp932"))[1] == "cp932"


def test_the_decision_is_the_same_in_every_process() -> None:
    # hash randomisation must not reach the decision: run it in fresh interpreters
    import subprocess
    import sys
    code = ("import sys; from chorus_tools.tools.read import text; "
            "print(text.decode(sys.stdin.buffer.read())[1])")
    data = TEXTS["pl"].encode("cp1250") + TEXTS["fr"].encode("cp1252")
    seen = {subprocess.run([sys.executable, "-c", code], input=data, capture_output=True,
                           check=True, env={**os.environ, "PYTHONHASHSEED": str(seed)}
                           ).stdout for seed in (1, 2, 3)}
    assert len(seen) == 1 and seen.pop().strip() == text.decode(data)[1].encode()


def test_a_window_of_a_big_gbk_file_reads_in_bounded_memory(ctx: ToolContext,
                                                            root: Path) -> None:
    line = "第{:06d}行：这是一个很大的文件，用来检查窗口读取不会把整个文件读进内存。\n"
    lines = [line.format(n) for n in range(1, 400_001)]
    data = "".join(lines).encode("gbk")  # about 30 MB
    (root / "big.txt").write_bytes(data)
    (root / "warm.txt").write_bytes(data[:data.index(b"\n", 2 << 20) + 1])  # > 1 MiB: counted
    del data
    read(ctx, "warm.txt", limit=1)  # the modules a first count imports are not the window's
    tracemalloc.start()
    try:
        first = read(ctx, "big.txt", offset=200_000, limit=3)  # counts, then the window
        again = read(ctx, "big.txt", offset=-2)  # from the cache: only the window
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert first["encoding"] == again["encoding"] == "gb18030"
    assert first["total_lines"] == 400_000
    assert first["content"] == "\n".join(f"{n:>6}\t{lines[n - 1][:-1]}"
                                         for n in range(200_000, 200_003))
    assert again["content"].endswith(f"400000\t{lines[-1][:-1]}")
    assert peak < 8 << 20, f"peak {peak} bytes for a window of a 30 MB file"


def test_a_legacy_file_under_the_byte_cap_is_cut_at_a_line(rctx: ToolContext,
                                                          root: Path) -> None:
    (root / "f").write_bytes(TEXTS["ko"].encode("euc_kr"))
    small = replace(rctx, limits=replace(rctx.limits, max_read_bytes=200))
    got = read(small, "f", raw=True)
    assert got["truncated"] and TEXTS["ko"].startswith(got["content"])
    assert got["content"].endswith("\n") and len(got["content"].encode()) <= 200
