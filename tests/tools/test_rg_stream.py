"""rg's output read with bounded memory (tools/search/rg_messages.py) and its stderr read
so that no failure passes for an empty result (tools/search/rg_errors.py), issue 22."""

from __future__ import annotations

import io
import os
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.search import rg_messages
from chorus_tools.tools.search.results import cut_line, lines_without_endings
from chorus_tools.tools.search.rg_errors import PathError, path_errors
from chorus_tools.tools.search.rg_messages import Long, messages, read_lines

_TEXT = st.lists(st.sampled_from(['a', '"', "\\", "}", ",", "\n", "é", '},"line_number":1,']),
                 max_size=60).map("".join)


def _message(kind: str, path: str, text: str, line: int, offset: int,
             ends: list[int]) -> bytes:
    subs = [{"match": {"text": "m"}, "start": 0, "end": e} for e in ends]
    return orjson.dumps({"type": kind, "data": {
        "path": {"text": path}, "lines": {"text": text}, "line_number": line,
        "absolute_offset": offset, "submatches": subs}}) + b"\n"


@given(_TEXT, _TEXT, st.integers(1, 10**9), st.integers(0, 10**12),
       st.lists(st.integers(0, 10**6), max_size=3), st.integers(0, 64))
def test_a_long_message_keeps_what_the_reader_needs(path, text, line, offset, ends, more):
    """Whatever the text holds (quotes, escapes, the marker itself), cut anywhere past
    the path (a path is at most some kB, the cut 1 MiB)."""
    raw = _message("match", path, text, line, offset, sorted(ends))
    cap = raw.index(b'},"lines":') + len(b'},"lines":') + more
    stream = io.BufferedReader(io.BytesIO(raw + b'{"type":"summary"}\n'), 16)
    old, rg_messages.MAX_MESSAGE = rg_messages.MAX_MESSAGE, cap
    try:
        out = list(messages(stream))
    finally:
        rg_messages.MAX_MESSAGE = old
    assert out[-1] == b'{"type":"summary"}\n'
    if len(raw) <= cap:
        assert out[:-1] == [raw]
        return
    assert out[:-1] == [Long("match", {"text": path}, line, offset,
                             max(ends) if ends else 0)]


@pytest.mark.parametrize("prefix,encode", [
    (b"", lambda s: s.encode()), (b"\xef\xbb\xbf", lambda s: s.encode()),
    (b"", lambda s: s.encode("utf-16"))])
def test_read_lines_agrees_with_the_text_rg_sends(tmp_path: Path, prefix: bytes,
                                                  encode) -> None:
    """As rg shows the lines from an offset in its view of the file (a BOM dropped,
    UTF-16 transcoded), each cut as the reply cuts it."""
    text = "short\r\n" + "é" * 50 + "\nmid\n\n" + "x" * 30 + "\r\nend"
    path = tmp_path / "f.txt"
    path.write_bytes(prefix + encode(text))
    every = lines_without_endings(text)
    starts = [0]  # each line's byte offset in rg's view: the UTF-8 text, no BOM
    for raw in text.encode().split(b"\n")[:-1]:
        starts.append(starts[-1] + len(raw) + 1)
    fd = os.open(path, os.O_RDONLY)
    try:
        for first in range(len(every)):
            for last in range(first, len(every)):
                got = read_lines(fd, starts[first], starts[last], 10)
                assert got == [cut_line(ln, 10) for ln in every[first:last + 1]]
    finally:
        os.close(fd)


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
