"""Archives in and out (tools/bytes/archive_in.py, archive_out.py) on a real workspace:
a tree goes out as tar and tar.gz pieces and comes back byte for byte; every hostile
archive (zip-slip in each form, links out, devices and FIFOs, a tar bomb, too many entries,
a truncated or corrupt stream, reserved names) is refused whole, with nothing left in the
workspace and no spool behind."""

from __future__ import annotations

import base64
import dataclasses
import gzip
import io
import os
import tarfile
from pathlib import Path
from typing import Any

import pytest

from chorus_tools.tools.bytes import archive_out
from chorus_tools.tools.bytes.archives import archive_import, import_begin
from chorus_tools.tools.bytes.spool import SPOOL_PREFIX
from chorus_tools.tools.bytes.uploads import upload_part
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError


def tar_of(entries: list[tuple[str, Any]], gz: bool = False) -> bytes:
    """entries: (name, bytes) files, (name, "dir"), (name, ("sym"|"lnk", target)),
    (name, "fifo"|"chr"), (name, ("size", n)) a header announcing n bytes."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if gz else "w", format=tarfile.PAX_FORMAT) as t:
        for name, what in entries:
            info = tarfile.TarInfo(name)
            if isinstance(what, bytes):
                info.size = len(what)
                t.addfile(info, io.BytesIO(what))
                continue
            if what == "dir":
                info.type = tarfile.DIRTYPE
            elif what == "fifo":
                info.type = tarfile.FIFOTYPE
            elif what == "chr":
                info.type = tarfile.CHRTYPE
            elif what[0] == "sym":
                info.type, info.linkname = tarfile.SYMTYPE, what[1]
            elif what[0] == "lnk":
                info.type, info.linkname = tarfile.LNKTYPE, what[1]
            t.addfile(info)
    return buf.getvalue()


def imported(ctx: ToolContext, data: bytes, path: str = "dst") -> dict[str, Any]:
    uid = import_begin(ctx, path)["upload_id"]
    for start in range(0, len(data), 1 << 20):
        upload_part(ctx, uid, start, base64.b64encode(data[start:start + (1 << 20)]).decode())
    return archive_import(ctx, uid)


def tree(root: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for p in sorted(root.rglob("*")):
        if p.is_fifo():
            continue
        rel = str(p.relative_to(root))
        out[rel] = ("link", os.readlink(p)) if p.is_symlink() else (
            "dir" if p.is_dir() else p.read_bytes())
    return out


def refused(ctx: ToolContext, root: Path, data: bytes, *words: str) -> None:
    before = tree(root)
    with pytest.raises(ToolError) as info:
        imported(ctx, data)
    assert info.value.code == "invalid_params", info.value.message
    for word in words:
        assert word in info.value.message
    after = tree(root)
    assert after == {**before, "dst": "dir"} or after == before, "something landed"
    assert not [p for p in root.iterdir() if p.name.startswith(SPOOL_PREFIX)]


@pytest.mark.parametrize("gz", [False, True])
def test_a_tree_goes_out_in_pieces_and_comes_back_the_same(ctx: ToolContext, root: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           gz: bool) -> None:
    src = root / "src"
    (src / "sub").mkdir(parents=True)
    (src / "sub/a.txt").write_text("alpha\n")
    (src / "big.bin").write_bytes(os.urandom(700_000))
    (src / ".hidden").write_text("h")
    (src / "empty").mkdir()
    (src / "link").symlink_to("sub/a.txt")
    (src / ".gitignore").write_text("ignored/\n")
    (src / "ignored").mkdir()
    (src / "ignored/x").write_text("x")
    os.mkfifo(src / "pipe")
    monkeypatch.setattr(archive_out, "CHUNK", 100_000)  # many pieces, a file across them
    data, cursor, pieces = b"", None, 0
    while True:
        piece = archive_out.archive_read(ctx, "src", "tar.gz" if gz else "tar",
                                         cursor=cursor)
        data += base64.b64decode(piece["data"])
        pieces += 1
        cursor = piece["cursor"]
        if cursor is None:
            break
    assert pieces > 5
    names = tarfile.open(fileobj=io.BytesIO(gzip.decompress(data) if gz else data)).getnames()
    assert "ignored/x" not in names and "pipe" not in names and ".hidden" in names
    out = imported(ctx, data, "copy")
    assert out["created"] == 5 and out["bytes"] == 700_000 + 6 + 1 + 9  # files and links
    expected = {k: v for k, v in tree(src).items() if not k.startswith("ignored")
                and k != "pipe"}
    assert tree(root / "copy") == expected


def test_zip_slip_in_every_form_is_refused_whole(ctx: ToolContext, root: Path,
                                                 outside: Path) -> None:
    ok = ("fine.txt", b"fine")
    for hostile in (
            [ok, ("../evil.txt", b"x")],
            [ok, ("a/../../evil.txt", b"x")],
            [ok, ("/tmp/evil.txt", b"x")],
            [ok, ("out", ("sym", "../..")), ("out/evil.txt", b"x")],
            [ok, ("abs", ("sym", "/etc/passwd"))],
            [ok, ("up", ("sym", "../outside/canary.txt"))],
            [ok, ("hard", ("lnk", "../outside/canary.txt"))],
            [ok, ("hard", ("lnk", "/etc/passwd"))],
            [ok, ("in", ("sym", "sub")), ("in/x.txt", b"x")],
    ):
        refused(ctx, root, tar_of(hostile), "refused")
    assert sorted(p.name for p in outside.iterdir()) == ["canary.txt"]
    assert not (root.parent / "evil.txt").exists()


def test_devices_fifos_and_reserved_names_are_refused(ctx: ToolContext, root: Path) -> None:
    refused(ctx, root, tar_of([("a", b"a"), ("p", "fifo")]), "FIFO")
    refused(ctx, root, tar_of([("a", b"a"), ("d", "chr")]), "device")
    refused(ctx, root, tar_of([("a", b"a"), (".chorus-tmp-x", b"x")]), "reserved")


def test_a_tar_bomb_is_refused_from_its_headers(ctx: ToolContext, root: Path) -> None:
    """10 GB of zeros in a few MB of gzip: refused by --max-archive-bytes before its
    bytes are read (they would take minutes to inflate)."""
    info = tarfile.TarInfo("zeros.bin")
    info.size = 10 * 10**9
    head = info.tobuf(tarfile.PAX_FORMAT)
    bomb = gzip.compress(head + b"\0" * (8 << 20), compresslevel=1)  # truncated, too
    small = dataclasses.replace(ctx, limits=dataclasses.replace(
        ctx.limits, max_archive_bytes=1 << 30))
    refused(small, root, bomb, "max-archive-bytes")


def test_too_many_entries_is_refused(ctx: ToolContext, root: Path) -> None:
    few = dataclasses.replace(ctx, limits=dataclasses.replace(ctx.limits,
                                                              max_archive_entries=100))
    refused(few, root, tar_of([(f"e{i}", b"") for i in range(101)], gz=True),
            "max-archive-entries")
    assert imported(few, tar_of([(f"e{i}", b"") for i in range(100)]))["created"] == 100


def test_truncated_and_corrupt_streams_are_refused(ctx: ToolContext, root: Path) -> None:
    whole = tar_of([("a.txt", b"a" * 5000), ("b.txt", b"b" * 5000)])
    refused(ctx, root, whole[:3000], "not a whole")
    refused(ctx, root, gzip.compress(whole)[:-40], "not a whole")
    refused(ctx, root, b"\x1f\x8b" + os.urandom(2000), "not a whole")
    refused(ctx, root, os.urandom(4000), "not a whole")


def test_an_import_replaces_files_and_a_failure_puts_everything_back(
        ctx: ToolContext, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (root / "dst").mkdir()
    (root / "dst/a.txt").write_text("old a")
    out = imported(ctx, tar_of([("a.txt", b"new a"), ("b.txt", b"new b")]))
    assert out == {"created": 1, "replaced": 1, "bytes": 10}
    assert (root / "dst/a.txt").read_text() == "new a"
    from chorus_tools.tools.bytes import archive_in
    real = archive_in._place_file
    calls = []

    def failing(*args: Any) -> None:
        calls.append(args[2])
        if len(calls) == 3:
            raise ToolError("write_failed", "disk full (simulated)", errno="ENOSPC")
        real(*args)

    monkeypatch.setattr(archive_in, "_place_file", failing)
    with pytest.raises(ToolError):
        imported(ctx, tar_of([("a.txt", b"third a"), ("c.txt", b"c"), ("d.txt", b"d")]))
    assert tree(root / "dst") == {"a.txt": b"new a", "b.txt": b"new b"}
    assert not [p for p in root.iterdir() if p.name.startswith(SPOOL_PREFIX)]
