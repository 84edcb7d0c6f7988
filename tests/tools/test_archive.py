"""Archives in and out through tools/bytes/ (archive.export, archive.import_*): round trips,
and REAL hostile archives built here with tarfile, each refused whole with nothing left in
the workspace (no file, no directory, no spool)."""

from __future__ import annotations

import base64
import dataclasses
import gzip
import io
import os
import stat
import tarfile
from pathlib import Path
from typing import Callable

import pytest

from chorus_tools.tools.bytes.archive_in import import_begin, import_commit
from chorus_tools.tools.bytes.archive_out import export
from chorus_tools.tools.bytes.spool import Spool
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError

Add = Callable[[tarfile.TarFile], None]


def build(*adds: Add, gz: bool = False) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if gz else "w") as tar:
        for add in adds:
            add(tar)
    return buf.getvalue()


def member(name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, link: str = "",
           size: int | None = None) -> Add:
    def add(tar: tarfile.TarFile) -> None:
        info = tarfile.TarInfo(name)
        info.type, info.linkname = kind, link
        info.size = len(data) if size is None else size
        tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
    return add


def put(ctx: ToolContext, into: str, archive: bytes) -> dict:
    upload = import_begin(ctx, into)["upload_id"]
    with Spool.open(ctx, upload) as spool:
        for at in range(0, len(archive), 8 << 20):
            spool.write_part(at, archive[at:at + (8 << 20)])
    return import_commit(ctx, upload)


def take(ctx: ToolContext, path: str, fmt: str = "tar", **kw: object) -> bytes:
    out, cursor = b"", None
    while True:
        part = export(ctx, path, format=fmt, cursor=cursor, **kw)  # type: ignore[arg-type]
        out += base64.b64decode(part["data"])
        cursor = part["cursor"]
        if cursor is None:
            return out


def tree(root: Path) -> dict[str, object]:
    found: dict[str, object] = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            p = Path(dirpath, name)
            rel = str(p.relative_to(root))
            found[rel] = ("link", os.readlink(p)) if p.is_symlink() else (
                "dir" if p.is_dir() else p.read_bytes())
    return found


def refused(ctx: ToolContext, root: Path, archive: bytes, code: str = "invalid_params",
            into: str = "dest") -> ToolError:
    before = tree(root)
    with pytest.raises(ToolError) as info:
        put(ctx, into, archive)
    assert info.value.code == code, info.value.message
    assert tree(root) == before  # nothing landed, and the spool is gone
    return info.value


def test_round_trip_tar_gz_keeps_bytes_modes_and_symlinks(ctx: ToolContext, root: Path) -> None:
    (root / "src" / "deep").mkdir(parents=True)
    (root / "src" / "a.txt").write_bytes(b"alpha\n")
    (root / "src" / ".hidden").write_bytes(b"dot")
    (root / "src" / "deep" / "bin.dat").write_bytes(bytes(range(256)) * 100)
    (root / "src" / "run.sh").write_bytes(b"#!/bin/sh\n")
    os.chmod(root / "src" / "run.sh", 0o755)
    (root / "src" / "empty").mkdir()
    os.symlink("deep/bin.dat", root / "src" / "link")
    os.symlink("/etc/passwd", root / "src" / "outside")  # stored, never followed
    archive = take(ctx, "src", "tar.gz")
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        names = {m.name: m for m in tar.getmembers()}
    assert names["outside"].issym() and names["outside"].linkname == "/etc/passwd"
    (root / "src" / "outside").unlink()  # the import refuses an absolute link: by design
    archive = take(ctx, "src", "tar.gz")
    result = put(ctx, "copy", archive)
    assert result == {"created": 5, "replaced": 0,
                      "bytes": 6 + 3 + 25600 + 10}
    assert tree(root / "copy") == tree(root / "src")
    assert os.stat(root / "copy" / "run.sh").st_mode & 0o777 == 0o755
    again = put(ctx, "copy", take(ctx, "src", "tar"))
    assert again["created"] == 0 and again["replaced"] == 5


def test_export_resumes_inside_a_large_file_and_leaves_out_ignored(
        ctx: ToolContext, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from chorus_tools.tools.bytes import archive_out
    monkeypatch.setattr(archive_out, "CHUNK", 4096)
    (root / ".gitignore").write_text("*.log\n")
    (root / "big.bin").write_bytes(os.urandom(20000))
    (root / "x.log").write_text("noise")
    for i in range(30):
        (root / f"f{i:02}.txt").write_text(str(i))
    (root / ".chorus-tmp-0123456789abcdef").write_text("reserved")
    plain = tarfile.open(fileobj=io.BytesIO(take(ctx, ".", "tar.gz")))
    names = sorted(m.name for m in plain.getmembers())
    assert "x.log" not in names and ".gitignore" in names
    assert not any(n.startswith(".chorus-tmp-") for n in names)
    assert plain.extractfile("big.bin").read() == (root / "big.bin").read_bytes()  # type: ignore[union-attr]
    with_ignored = tarfile.open(fileobj=io.BytesIO(take(ctx, ".", include_ignored=True)))
    assert "x.log" in with_ignored.getnames()


def test_export_stops_on_a_file_changed_between_chunks(
        ctx: ToolContext, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from chorus_tools.tools.bytes import archive_out
    monkeypatch.setattr(archive_out, "CHUNK", 4096)
    (root / "big.bin").write_bytes(b"x" * 20000)
    first = export(ctx, ".", format="tar")
    (root / "big.bin").write_bytes(b"y" * 30000)
    with pytest.raises(ToolError) as info:
        export(ctx, ".", format="tar", cursor=first["cursor"])
    assert info.value.code == "conflict"


@pytest.mark.parametrize("name", ["../x", "a/../../x", "/etc/x", "a/../x/../../y",
                                  ".chorus-tmp-0123456789abcdef", "a/.chorus-tmp-x"])
def test_names_that_leave_or_are_reserved(ctx: ToolContext, root: Path, name: str) -> None:
    refused(ctx, root, build(member("ok.txt", b"fine"), member(name, b"evil")))


@pytest.mark.parametrize("target", ["../outside", "/etc", "a/../../x", "sub/../.."])
def test_symlinks_out_of_the_directory(ctx: ToolContext, root: Path, target: str) -> None:
    refused(ctx, root, build(member("l", kind=tarfile.SYMTYPE, link=target)))


def test_symlink_then_a_file_through_it(ctx: ToolContext, root: Path) -> None:
    (root / "elsewhere").mkdir()
    refused(ctx, root, build(member("l", kind=tarfile.SYMTYPE, link="."),
                             member("l/x", b"through the link")))
    # a chain: each link inside, the second reached through the first
    refused(ctx, root, build(member("a", kind=tarfile.SYMTYPE, link="b"),
                             member("b", kind=tarfile.DIRTYPE),
                             member("a/c", kind=tarfile.SYMTYPE, link="..")))


def test_a_file_through_a_symlink_already_in_the_workspace(ctx: ToolContext,
                                                           root: Path) -> None:
    (root / "dest").mkdir()
    (root / "other").mkdir()
    os.symlink("../other", root / "dest" / "sub")
    refused(ctx, root, build(member("sub/x", b"lands in other/"), ), code="not_a_directory")
    os.symlink("../other/f", root / "dest" / "f")
    refused(ctx, root, build(member("f", b"written where the link leads")))


def test_hard_links(ctx: ToolContext, root: Path) -> None:
    refused(ctx, root, build(member("h", kind=tarfile.LNKTYPE, link="/etc/passwd")))
    refused(ctx, root, build(member("h", kind=tarfile.LNKTYPE, link="../x")))
    refused(ctx, root, build(member("h", kind=tarfile.LNKTYPE, link="later"),
                             member("later", b"x")))
    put(ctx, "dest", build(member("a", b"shared"), member("b", kind=tarfile.LNKTYPE, link="a")))
    (root / "dest" / "a").write_bytes(b"changed")
    assert (root / "dest" / "b").read_bytes() == b"shared"  # a copy, not the same inode


@pytest.mark.parametrize("kind", [tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE])
def test_devices_and_fifos(ctx: ToolContext, root: Path, kind: bytes) -> None:
    refused(ctx, root, build(member("ok", b"fine"), member("dev", kind=kind)))


def test_truncated_and_corrupt(ctx: ToolContext, root: Path) -> None:
    whole = build(member("a", b"a" * 5000), member("b", b"b" * 5000))
    refused(ctx, root, whole[:3000])
    zipped = build(member("a", os.urandom(5000)), gz=True)
    refused(ctx, root, zipped[:len(zipped) // 2])
    broken = bytearray(zipped)
    broken[len(broken) // 2] ^= 0xFF
    refused(ctx, root, bytes(broken))
    refused(ctx, root, b"\x1f\x8bnot gzip at all")
    refused(ctx, root, b"not a tar" * 100)


def test_a_bad_header_after_good_entries_refuses_the_whole(ctx: ToolContext,
                                                           root: Path) -> None:
    """tarfile ends an archive quietly at a header whose checksum is wrong, so the entries
    before it would land and those after it vanish; the import refuses it whole."""
    archive = bytearray(build(member("a", b"a" * 600), member("b", b"b"), member("c", b"c")))
    archive[1536 + 100:1536 + 108] = b"0000777\0"  # b's mode changed, its checksum not
    err = refused(ctx, root, bytes(archive))
    assert "checksum" in err.message
    ok, sparse = tarfile.TarInfo("ok"), tarfile.TarInfo("s")
    ok.size, sparse.type = 1, tarfile.GNUTYPE_SPARSE
    err = refused(ctx, root, ok.tobuf() + b"x" + bytes(511) + sparse.tobuf(tarfile.GNU_FORMAT)
                  + bytes(1024))
    assert "sparse" in err.message


def test_tar_bomb_refused_at_its_header(ctx: ToolContext, root: Path) -> None:
    """10 GB of zeros compressed to ~10 MB: refused by --max-archive-bytes (4 GiB) as its
    header is read, long before 10 GB could be inflated."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9) as gz:
        info = tarfile.TarInfo("zeros")
        info.size = 10 * 10**9
        gz.write(info.tobuf())
        block = bytes(1 << 20)
        for _ in range(10):  # the first 10 MB of the body is enough to make the point
            gz.write(block)
    err = refused(ctx, root, buf.getvalue(), code="file_too_large")
    assert err.details["limit"] == 4 << 30


def test_too_many_entries(ctx: ToolContext, root: Path) -> None:
    small = dataclasses.replace(ctx.limits, max_archive_entries=1000)
    limited = dataclasses.replace(ctx, limits=small)
    archive = build(*(member(f"e{i}") for i in range(1001)))
    refused(limited, root, archive, code="file_too_large")
    assert put(limited, "dest", build(*(member(f"e{i}") for i in range(1000))))["created"] \
        == 1000


def test_expanded_bytes_counted_across_entries(ctx: ToolContext, root: Path) -> None:
    small = dataclasses.replace(ctx.limits, max_archive_bytes=10_000)
    limited = dataclasses.replace(ctx, limits=small)
    refused(limited, root, build(*(member(f"e{i}", b"x" * 3000) for i in range(4))),
            code="file_too_large")


def test_workspace_disagreeing_with_the_archive(ctx: ToolContext, root: Path) -> None:
    (root / "dest").mkdir()
    (root / "dest" / "d").mkdir()
    (root / "dest" / "f").write_text("file")
    refused(ctx, root, build(member("new", b"n"), member("d", b"file over a dir")),
            code="is_directory")
    refused(ctx, root, build(member("new", b"n"), member("f/x", b"below a file")),
            code="not_a_directory")
    refused(ctx, root, build(member("f", kind=tarfile.SYMTYPE, link="d")))
    refused(ctx, root, build(member("x", b"x")), into="dest/f", code="not_a_directory")


def test_a_failing_write_puts_back_what_landed(ctx: ToolContext, root: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from chorus_tools.tools.bytes import archive_in
    (root / "dest").mkdir()
    (root / "dest" / "old").write_text("old content")
    real = archive_in._land_link

    def fail(ctx: ToolContext, dir_fd: int, landing: archive_in.Landing) -> None:
        raise ToolError("write_failed", "disk full (simulated)", errno="ENOSPC")

    monkeypatch.setattr(archive_in, "_land_link", fail)
    before = tree(root)
    with pytest.raises(ToolError) as info:
        put(ctx, "dest", build(member("old", b"new content"), member("sub/new", b"n"),
                               member("zlink", kind=tarfile.SYMTYPE, link="old")))
    assert info.value.code == "write_failed" and info.value.details["restored"] == 2
    assert tree(root) == before
    monkeypatch.setattr(archive_in, "_land_link", real)


def test_long_names_and_pax(ctx: ToolContext, root: Path) -> None:
    name = "/".join(["d" * 60] * 5) + "/é.txt"
    put(ctx, "dest", build(member(name, b"long")))
    assert (root / "dest" / name).read_bytes() == b"long"
    assert tarfile.open(fileobj=io.BytesIO(take(ctx, "dest"))).extractfile(
        name).read() == b"long"  # type: ignore[union-attr]


@pytest.mark.long
def test_two_million_empty_entries(ctx: ToolContext, root: Path) -> None:
    refused(ctx, root, build(*(member(f"e{i}") for i in range(2_000_000))),
            code="file_too_large")


def test_deny_never_exported_and_never_imported_into(root: Path) -> None:
    from chorus_tools.tools.confine.deny import DenyRules
    from chorus_tools.tools.confine.sandbox import Workspace
    (root / "secrets").mkdir()
    (root / "secrets" / "key.pem").write_text("k")
    (root / "app.py").write_text("x")
    ws = Workspace(str(root), deny=DenyRules(["secrets"]))
    try:
        denied = ToolContext(ws=ws)
        names = tarfile.open(fileobj=io.BytesIO(take(denied, "."))).getnames()
        assert names == ["app.py"]
        err = refused(denied, root, build(member("ok", b"x"), member("secrets/new", b"x")),
                      code="permission_denied", into=".")
        assert err.details["entry"] == "secrets/new"
    finally:
        os.close(ws.root_fd)


def test_a_chunk_gzipped_in_many_members_reads_back_whole(
        ctx: ToolContext, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each PIECE of tar bytes is a gzip member deflated in a thread (tools/bytes/
    deflate.py): with pieces of 1000 bytes a chunk is a member or more per file, that
    gzip and tarfile read as one stream with every byte where it was."""
    from chorus_tools.tools.bytes import deflate
    monkeypatch.setattr(deflate, "PIECE", 1000)
    (root / "src").mkdir()
    files = {f"src/f{i:02}.bin": os.urandom(700 * i) for i in range(12)}
    for name, data in files.items():
        (root / name).write_bytes(data)
    reply = export(ctx, "src", "tar.gz")
    assert reply["cursor"] is None
    raw = base64.b64decode(reply["data"])
    assert raw.count(b"\x1f\x8b\x08") >= 12  # many members, not one
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(raw))) as tar:
        got = {f"src/{m.name}": tar.extractfile(m).read()  # type: ignore[union-attr]
               for m in tar.getmembers() if m.isfile()}
    assert got == files


def test_a_symlink_over_a_regular_file_is_refused_naming_the_file(ctx: ToolContext,
                                                                  root: Path) -> None:
    """Bug: a symlink entry where the workspace has a regular file was refused as if the
    file were "a special file"; the words name what is there and why it stays."""
    (root / "dest").mkdir()
    (root / "dest" / "f").write_bytes(b"a regular file")
    err = refused(ctx, root, build(member("f", kind=tarfile.SYMTYPE, link="g")))
    assert "a symlink where the workspace has a regular file" in err.message, err.message
    assert "special" not in err.message and "Delete the file first" in err.message
    assert err.details["entry"] == "f" and err.details["path"] == "dest/f"
    os.symlink("f", root / "dest" / "l")
    err = refused(ctx, root, build(member("l", b"through it")))
    assert "a file where the workspace has a symlink: the file would be written where " \
        "the link leads" in err.message, err.message
    os.mkfifo(root / "dest" / "p")  # never read: tree() would block on it
    for entry in (member("p", kind=tarfile.SYMTYPE, link="g"), member("p", b"x")):
        with pytest.raises(ToolError) as info:
            put(ctx, "dest", build(entry))
        assert info.value.code == "invalid_params"
        assert "where the workspace has a FIFO, a special file" in info.value.message
        assert stat.S_ISFIFO(os.lstat(root / "dest" / "p").st_mode)
