"""Where a file's lines start, kept for a warm code.references (tools/warm/line_table.py):
lines and their starts as the text has them, only the text the index parsed (its
checksum), a file rewritten since read whole and checked again, and the kept tables
within their byte bound."""

from __future__ import annotations

import os
import zlib
from pathlib import Path


from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.warm.line_table import GAP, LineTables

TEXT = b"first line\r\nsecond uses\n" + b"filler\n" * (GAP // 4) + b"last, no break"


def _offsets(data: bytes, *words: bytes) -> list[int]:
    return [data.index(word) for word in words]


def test_lines_and_their_starts_come_from_the_text(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_bytes(TEXT)
    tables = LineTables(1 << 20)
    found = tables.span(ctx, "a.txt", zlib.crc32(TEXT), _offsets(TEXT, b"uses", b"no break"), 1)
    assert found is not None
    lines, starts, span = found
    last = TEXT.count(b"\n")
    assert lines == [1, last] and starts == [12, TEXT.rindex(b"\n") + 1]
    assert span.count == last + 1
    assert span.text[0] == b"first line\r" and span.text[1] == b"second uses"
    assert span.text[2] == b"filler" and span.text[last] == b"last, no break"
    assert sorted(span.text) == [0, 1, 2, last - 1, last]  # only the lines asked, and 1 around


def test_only_the_text_parsed_is_read(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_bytes(TEXT)
    tables = LineTables(1 << 20)
    assert tables.span(ctx, "a.txt", zlib.crc32(TEXT) ^ 1, [0], 0) is None
    assert tables.span(ctx, "gone.txt", 0, [0], 0) is None
    assert tables.span(ctx, "a.txt", zlib.crc32(TEXT), [0], 0) is not None
    changed = b"\n" + TEXT[1:]  # the same size: only its times say it was written
    (root / "a.txt").write_bytes(changed)
    os.utime(root / "a.txt", ns=(1, 1))
    assert tables.span(ctx, "a.txt", zlib.crc32(TEXT), [0], 0) is None
    found = tables.span(ctx, "a.txt", zlib.crc32(changed), [0, 1], 0)
    assert found is not None and found[0] == [0, 1]


def test_the_kept_tables_stay_within_their_bound(ctx: ToolContext, root: Path) -> None:
    texts = {f"f{i}.txt": b"x\n" * (100 * (i + 1)) for i in range(6)}
    tables = LineTables(2000)
    for name, text in texts.items():
        (root / name).write_bytes(text)
        assert tables.span(ctx, name, zlib.crc32(text), [len(text) - 2], 0) is not None
        assert tables.bytes <= tables.limit
    assert 0 < tables.bytes
    tables.clear()
    assert tables.bytes == 0
