"""file.info: the entry itself, what it points to inside the workspace, and nulls when a
link leads outside or nowhere; plus the ISO time helper its `modified` uses."""

from __future__ import annotations

import codecs
import functools
import os
import re
from pathlib import Path
from typing import Any

import pytest

from chorus_tools.tools.read import text
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.read.info import info
from chorus_tools.tools.confine.sandbox import version_of
from chorus_tools.tools.timefmt import iso_utc

TARGET_FIELDS = ("size", "modified", "mode", "mime_type", "is_binary", "encoding", "lines",
                 "version")
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 20


def error_of(call: Any) -> ToolError:
    with pytest.raises(ToolError) as caught:
        call()
    return caught.value


def test_text_file(ctx: ToolContext, root: Path) -> None:
    path = root / "src" / "app.py"
    path.parent.mkdir()
    path.write_text("import os\r\nprint(1)\n")
    path.chmod(0o640)
    st = os.stat(path)
    assert info(ctx, "src/app.py") == {
        "path": "src/app.py", "type": "file", "size": st.st_size,
        "modified": iso_utc(st.st_mtime_ns), "mode": "0640", "is_symlink": False,
        "symlink_target": None, "mime_type": "text/x-python", "is_binary": False,
        "encoding": "utf-8", "lines": 2, "version": version_of(st),
    }


@pytest.mark.parametrize("name, mime", [("notes.txt", "text/plain"),
                                        ("data.json", "application/json"),
                                        ("page.html", "text/html"),
                                        ("no_extension", "text/plain"),
                                        ("looks.png", "text/plain")])  # content decides
def test_text_mime_from_the_name(ctx: ToolContext, root: Path, name: str, mime: str) -> None:
    (root / name).write_text("{}\n")
    assert info(ctx, name)["mime_type"] == mime


@pytest.mark.parametrize("data, encoding, lines", [
    (b"", "utf-8", 0),
    (b"one line, no newline", "utf-8", 1),
    (codecs.BOM_UTF8 + b"a\nb\n", "utf-8-sig", 2),
    (codecs.BOM_UTF16_LE + "a\nb\nc".encode("utf-16-le"), "utf-16-le", 3),
    (codecs.BOM_UTF16_BE + "a\n".encode("utf-16-be"), "utf-16-be", 1),
    (b"caf\xe9\n\xff\n", "latin-1", 2),
    ("a\u2028b\x0cc\x85d\r\n".encode(), "utf-8", 1),
])
def test_encoding_and_lines(ctx: ToolContext, root: Path, data: bytes, encoding: str,
                            lines: int) -> None:
    (root / "t").write_bytes(data)
    result = info(ctx, "t")
    assert (result["encoding"], result["lines"], result["is_binary"]) == \
        (encoding, lines, False)


def test_lines_of_a_large_file_are_counted_by_streaming(ctx: ToolContext, root: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text, "CHUNK", 4096)
    (root / "big.log").write_bytes(b"entry \xc3\xa9\n" * 50_000 + b"tail")
    result = info(ctx, "big.log")
    assert (result["lines"], result["encoding"]) == (50_001, "utf-8")


@pytest.mark.parametrize("data, mime", [(PNG, "image/png"),
                                        (b"%PDF-1.5\n", "application/pdf"),
                                        (b"MZ\x90\x00\x03", "application/octet-stream")])
def test_binary_files(ctx: ToolContext, root: Path, data: bytes, mime: str) -> None:
    (root / "b").write_bytes(data)
    result = info(ctx, "b")
    assert (result["type"], result["is_binary"], result["mime_type"], result["size"]) == \
        ("file", True, mime, len(data))
    assert (result["encoding"], result["lines"]) == (None, None)


def test_directory(ctx: ToolContext, root: Path) -> None:
    (root / "pkg").mkdir(mode=0o750)
    os.chmod(root / "pkg", 0o750)
    st = os.stat(root / "pkg")
    result = info(ctx, "pkg/")
    assert result == {
        "path": "pkg", "type": "dir", "size": st.st_size, "modified": iso_utc(st.st_mtime_ns),
        "mode": "0750", "is_symlink": False, "symlink_target": None, "mime_type": None,
        "is_binary": None, "encoding": None, "lines": None, "version": version_of(st),
    }


def test_workspace_root(ctx: ToolContext, root: Path) -> None:
    for path in (".", str(root)):
        result = info(ctx, path)
        assert (result["path"], result["type"]) == (".", "dir")


def test_absolute_path_inside_gives_a_relative_result(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("x\n")
    assert info(ctx, str(root / "a.txt"))["path"] == "a.txt"


def test_symlink_inside_describes_link_and_target(ctx: ToolContext, root: Path) -> None:
    (root / "docs").mkdir()
    (root / "docs" / "real.md").write_text("# title\n\nbody\n")
    (root / "link").symlink_to("docs/real.md")
    st = os.stat(root / "docs" / "real.md")
    result = info(ctx, "link")
    assert (result["type"], result["is_symlink"], result["symlink_target"]) == \
        ("symlink", True, "docs/real.md")
    assert (result["size"], result["lines"], result["version"], result["modified"]) == \
        (st.st_size, 3, version_of(st), iso_utc(st.st_mtime_ns))
    assert result["path"] == "link"


def test_symlink_to_a_directory_inside(ctx: ToolContext, root: Path) -> None:
    (root / "d").mkdir()
    (root / "ld").symlink_to("d")
    result = info(ctx, "ld")
    assert (result["type"], result["symlink_target"], result["size"], result["lines"]) == \
        ("symlink", "d", os.stat(root / "d").st_size, None)


@pytest.mark.parametrize("target", ["../outside/canary.txt", "missing.txt", "loop"])
def test_symlink_outside_or_dangling_gives_nulls(ctx: ToolContext, root: Path, outside: Path,
                                                 target: str) -> None:
    if target == "loop":
        (root / "loop").symlink_to("loop")
    (root / "l").symlink_to(target)
    result = info(ctx, "l")
    assert (result["type"], result["is_symlink"], result["symlink_target"]) == \
        ("symlink", True, target)
    assert {field: result[field] for field in TARGET_FIELDS} == dict.fromkeys(TARGET_FIELDS)


def test_absolute_symlink_is_never_followed(ctx: ToolContext, root: Path,
                                            outside: Path) -> None:
    (root / "in.txt").write_text("x\n")
    for name, target in (("out", outside / "canary.txt"), ("abs_in", root / "in.txt")):
        (root / name).symlink_to(target)
        result = info(ctx, name)
        assert result["symlink_target"] == str(target)
        assert result["size"] is None and result["lines"] is None


@pytest.mark.usefixtures("no_hang")
def test_fifo_is_described_without_being_opened(ctx: ToolContext, root: Path) -> None:
    os.mkfifo(root / "pipe", 0o600)
    result = info(ctx, "pipe")
    assert (result["type"], result["mode"], result["size"]) == ("other", "0600", 0)
    assert (result["mime_type"], result["is_binary"], result["lines"]) == (None, None, None)


def test_errors(ctx: ToolContext, root: Path, outside: Path) -> None:
    (root / "file").write_text("x")
    assert error_of(lambda: info(ctx, "nope")).details == {"path": "nope"}
    assert error_of(lambda: info(ctx, "nope")).code == "file_not_found"
    assert error_of(lambda: info(ctx, "../outside")).code == "path_outside_workspace"
    assert error_of(lambda: info(ctx, str(outside))).code == "path_outside_workspace"
    assert error_of(lambda: info(ctx, "file/child")).code == "not_a_directory"
    for bad in ("", "a\0b"):
        err = error_of(functools.partial(info, ctx, bad))
        assert (err.code, err.details["param"]) == ("invalid_params", "path")


def test_a_symlinked_parent_leading_outside_is_refused(ctx: ToolContext, root: Path,
                                                       outside: Path) -> None:
    (root / "escape").symlink_to("../outside")
    assert error_of(lambda: info(ctx, "escape/canary.txt")).code == "path_outside_workspace"


@pytest.mark.parametrize("ns, expected", [
    (0, "1970-01-01T00:00:00.000000Z"),
    (1_769_860_800_123_456_789, "2026-01-31T12:00:00.123456Z"),
    (1_769_860_800_999_999_999, "2026-01-31T12:00:00.999999Z"),
])
def test_iso_utc(ns: int, expected: str) -> None:
    assert iso_utc(ns) == expected
    assert ISO.match(expected)


def test_a_file_path_ending_in_slash_is_not_a_directory(ctx, root):
    (root / "f.txt").write_text("x\n")
    (root / "d").mkdir()
    with pytest.raises(ToolError) as err:
        info(ctx, "f.txt/")
    assert err.value.code == "not_a_directory"
    assert info(ctx, "d/")["type"] == "dir"
