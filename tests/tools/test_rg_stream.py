"""rg's output read in blocks with bounded memory (tools/search/rg_output.py) and its
stderr read so that no failure passes for an empty result (tools/search/rg_errors.py),
issues 22 and 32."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.search import rg_output
from chorus_tools.tools.search.results import cut_line
from chorus_tools.tools.search.rg_errors import PathError, path_errors
from chorus_tools.tools.search.rg_output import BINARY, Long, Output, counts, groups, names
from chorus_tools.tools.search.rg_run import Query, search_args
from fanout_runner import RG_PATH

_PATH = st.lists(st.sampled_from(["a", "/", ":", "\n", " ", "é", "1", "-", "\\"]),
                 min_size=1, max_size=12).map("".join)
_LINE = st.lists(st.sampled_from(["x", ":", "-", '"', "\\", "\r", "é", "\t", "0"]),
                 max_size=40).map("".join)
_STATS = (b"\n3 matches\n3 matched lines\n2 files contained matches\n7 files searched\n"
          b"0 bytes printed\n99 bytes searched\n0.000010 seconds spent searching\n"
          b"0.006877 seconds total\n")


class _Pieces(Output):
    """rg's output handed out in the given pieces, as reads of a pipe may cut it."""

    def __init__(self, data: bytes, cuts: list[int]) -> None:
        super().__init__(-1)
        points = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
        self._pieces = [data[a:b] for a, b in zip(points, points[1:])]

    def read(self) -> bytes:
        return self._pieces.pop(0) if self._pieces else b""


_FILE = st.tuples(_PATH, st.lists(st.tuples(st.booleans(), _LINE), min_size=1, max_size=4),
                  st.sampled_from(["", "walked", "named"]))


def _collected(stream: Output, keep: int = 10) -> list:
    """groups() as (path, [(number, is_match, line)]), one file's records in one entry."""
    got: list = []
    for path, records in groups(stream, keep, True):
        if records is BINARY:
            got.append((path, BINARY))
            continue
        if isinstance(records, Long):
            found = [tuple(records)]
        else:
            found = []
            for record in records:
                number, sep, line = record.partition(":")
                if not number.isdigit():
                    number, sep, line = record.partition("-")
                found.append((int(number), sep == ":", line))
        if got and got[-1][0] == path and got[-1][1] is not BINARY:
            got[-1] = (path, got[-1][1] + found)  # one file's records across blocks
        else:
            got.append((path, found))
    return got


@given(st.lists(_FILE, max_size=5).filter(
    lambda files: all(a[0] != b[0] for a, b in zip(files, files[1:]))),
       st.lists(st.integers(0, 10**6), max_size=8), st.sampled_from([b"", b"\xff"]))
def test_records_notes_and_stats_survive_any_cut(files, cuts, odd) -> None:
    """Paths with line breaks and colons, lines with anything but a line break (bytes
    that are not UTF-8 too; a \r before the line break is not shown), binary notes after
    a file's records, the stats at the end: whatever the block boundaries."""
    out, expected = b"", []
    for path, lines, note in files:
        raw = path.encode()
        records = []
        for number, (is_match, line) in enumerate(lines, 1):
            out += raw + b"\0" + str(number).encode() + (b":" if is_match else b"-") \
                + line.encode() + odd + b"\n"
            shown = line + ("\ufffd" if odd else "")
            records.append((number, is_match, shown[:-1] if shown.endswith("\r") else shown))
        expected.append((path, records))
        if note:
            out += raw + (b": WARNING: stopped searching binary file after match"
                          if note == "walked" else b": binary file matches")
            out += b' (found "\\0" byte around offset 77)\n'
            expected.append((path, BINARY))
    stream = _Pieces(out + _STATS, cuts)
    assert _collected(stream) == expected
    assert stream.searched == 7


def test_a_record_too_long_to_hold_is_cut_as_it_streams(monkeypatch) -> None:
    """Past MAX_RECORD bytes a line is never held whole: it is cut as the reply shows
    it, its length counted in characters (bytes that are not UTF-8 as one U+FFFD each)."""
    monkeypatch.setattr(rg_output, "MAX_RECORD", 64)
    line = "é" * 300 + "\udcff" + "z" * 300
    raw = line.encode("utf-8", "surrogateescape")
    data = (b"a.txt\0001:short\n" + b"big\nname\0" + b"7:" + raw + b"\r\n"
            + b"c.txt\0002-after\n" + _STATS)
    stream = _Pieces(data, list(range(0, len(data), 50)))
    shown = line.replace("\udcff", "\ufffd")
    assert _collected(stream) == [("a.txt", [(1, True, "short")]),
                                  ("big\nname", [(7, True, cut_line(shown, 10))]),
                                  ("c.txt", [(2, False, "after")])]
    assert stream.searched == 7


def test_counts_and_names_across_cuts() -> None:
    data = b"a\nb\x003\nc:d\x0012\n" + _STATS
    for cut in range(len(data)):
        stream = _Pieces(data, [cut])
        assert [r for block in counts(stream) for r in block] == [("a\nb", "3"), ("c:d", "12")]
        assert stream.searched == 7
    data = b"x\x00y\nz\x00" + _STATS
    for cut in range(len(data)):
        stream = _Pieces(data, [cut])
        assert [n for block in names(stream) for n in block] == ["x", "y\nz"]
        assert stream.searched == 7


@pytest.mark.skipif(RG_PATH is None, reason="needs ripgrep")
@pytest.mark.parametrize("named", [False, True])
def test_rg_says_which_files_are_binary_after_their_lines(tmp_path: Path,
                                                          named: bool) -> None:
    """A NUL far past a match (past rg's first buffer): rg has printed the match when it
    finds the NUL, and the note after it drops the file, walked or named."""
    (tmp_path / "late.txt").write_bytes(b"needle\n" + b"x" * 300_000 + b"\n\0needle\n")
    (tmp_path / "early.txt").write_bytes(b"\0needle\n")
    (tmp_path / "text.txt").write_bytes(b"needle here\n")
    query = Query("needle", False, False, True, False, [], (), False, False)
    argv = search_args(str(RG_PATH), query, pcre2=False, kind="lines", context=(0, 0),
                       sort=False)
    argv += ["--", "late.txt", "early.txt", "text.txt"] if named else ["."]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, timeout=60)
    stream = _Pieces(done.stdout, [])
    kept = {}
    for path, records in _collected(stream, 100):
        if records is BINARY:
            kept.pop(path, None)
        else:
            kept[path] = records
    assert {p.removeprefix("./"): r for p, r in kept.items()} == {
        "text.txt": [(1, True, "needle here")]}
    assert stream.searched == 3


def _errors(*lines: str) -> io.BytesIO:
    return io.BytesIO("".join(f"{ln}\n" for ln in lines).encode())


def _name(printed: str) -> str | None:
    return printed[2:] if printed.startswith("./") and len(printed) > 2 else None


def test_stderr_lines_name_their_paths_even_with_colons_in_names() -> None:
    existing = {"a: b.txt", "c.txt"}
    found = list(path_errors(_errors(
        "rg: ./a: b.txt: PCRE2: error matching: match limit exceeded",
        "rg: ./c.txt: No such file or directory (os error 2)",
        "rg: ./gone: x.txt: No such file or directory (os error 2)"),
        _name, existing.__contains__))
    assert found == [
        PathError("a: b.txt", "PCRE2: error matching: match limit exceeded"),
        PathError("c.txt", "No such file or directory (os error 2)"),
        PathError("gone", "x.txt: No such file or directory (os error 2)")]


@pytest.mark.parametrize("line", [
    "rg: .: No such file or directory (os error 2)",  # the search's own directory
    "rg: something went wrong",
])
def test_a_stderr_line_naming_no_file_of_the_search_fails_the_call(line: str) -> None:
    with pytest.raises(ToolError) as caught:
        list(path_errors(_errors(line), _name, lambda _: True))
    assert caught.value.code == "internal_error"
    assert caught.value.details["reason"] == line.removeprefix("rg: ")
