"""tools/bytes/tar_read.py against tarfile, the model: archives built by tarfile in every
format it writes (ustar, GNU, pax) and by GNU tar read back to the same entries, and the
streams tarfile would end quietly or misread refused as Corrupt."""

from __future__ import annotations

import gzip
import io
import os
import shutil
import subprocess
import tarfile
import zlib
from pathlib import Path
from typing import Iterator

import pytest

from chorus_tools.tools.bytes import tar_read


def _chunks(data: bytes, size: int = 777) -> Iterator[bytes]:
    """Tar bytes cut at awkward places: headers and files straddle the chunks."""
    for at in range(0, len(data), size):
        yield data[at:at + size]


def read(data: bytes, size: int = 777) -> list[tuple[str, bytes, int, int, str, bytes]]:
    """Every entry: (name, type, size, mode, link name, its bytes)."""
    reader = tar_read.Reader(_chunks(data, size))
    found = []
    for h in reader.headers():
        body = b"".join(bytes(p) for p in reader.data(h.size)) if h.isreg() else b""
        found.append((h.name, h.type, h.size, h.mode, h.linkname, body))
    return found


def by_tarfile(data: bytes) -> list[tuple[str, bytes, int, int, str, bytes]]:
    found = []
    with tarfile.open(fileobj=io.BytesIO(data), mode="r|") as tar:
        for m in tar:
            f = tar.extractfile(m) if m.isreg() else None
            found.append((m.name, m.type, m.size, m.mode, m.linkname,
                          f.read() if f is not None else b""))
    return found


def build(fmt: int, gz: bool = False) -> bytes:
    buf = io.BytesIO()
    long_dir = "/".join(["d" * 60] * (2 if fmt == tarfile.USTAR_FORMAT else 4))  # prefix
    with tarfile.open(fileobj=buf, mode="w:gz" if gz else "w", format=fmt) as tar:
        def add(name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"",
                link: str = "", mode: int = 0o644, mtime: float = 1.5) -> None:
            info = tarfile.TarInfo(name)
            info.type, info.linkname, info.mode, info.mtime = kind, link, mode, mtime
            info.size = len(data) if kind == tarfile.REGTYPE else 0
            tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
        add("dir", tarfile.DIRTYPE, mode=0o755)
        add("dir/empty")
        add("dir/block", data=b"b" * 512)
        add("dir/odd", data=os.urandom(1000), mode=0o755)
        add("big", data=os.urandom(70_000))
        add(f"{long_dir}/file.txt", data=b"long")
        add("link", tarfile.SYMTYPE, link="dir/odd")
        add("hard", tarfile.LNKTYPE, link="dir/odd")
        if fmt != tarfile.USTAR_FORMAT:
            add("é/ünïcode", data=b"u")
            add("l" * 150, tarfile.SYMTYPE, link="t" * 150)
    return buf.getvalue()


@pytest.mark.parametrize("fmt", [tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT,
                                 tarfile.PAX_FORMAT])
@pytest.mark.parametrize("size", [1, 512, 777, 1 << 20])
def test_reads_what_tarfile_reads(fmt: int, size: int) -> None:
    data = build(fmt)
    assert read(data, size) == by_tarfile(data)


def test_gzip_in_many_members_with_zero_padding(tmp_path: Path) -> None:
    plain = build(tarfile.PAX_FORMAT)
    members = b"".join(gzip.compress(plain[at:at + 3000]) for at in range(0, len(plain), 3000))
    path = tmp_path / "a.tar.gz"
    path.write_bytes(members + bytes(1000))
    fd = os.open(path, os.O_RDONLY)
    try:
        assert b"".join(tar_read.chunks(fd)) == plain
    finally:
        os.close(fd)


@pytest.mark.parametrize("tail", [b"garbage", gzip.compress(b"x", mtime=0)[:10]],
                         ids=["garbage", "truncated-member"])
def test_gzip_truncated_or_followed_by_garbage(tmp_path: Path, tail: bytes) -> None:
    path = tmp_path / "a.tar.gz"
    path.write_bytes(gzip.compress(build(tarfile.PAX_FORMAT)) + tail)
    fd = os.open(path, os.O_RDONLY)
    try:
        with pytest.raises(tar_read.Corrupt):
            b"".join(tar_read.chunks(fd))
    finally:
        os.close(fd)


def test_read_ahead_hands_the_thread_error_to_the_reader(tmp_path: Path) -> None:
    path = tmp_path / "a.tar.gz"
    whole = gzip.compress(os.urandom(3 << 20), compresslevel=1)
    path.write_bytes(whole[:len(whole) // 2])
    fd = os.open(path, os.O_RDONLY)
    try:
        with pytest.raises(tar_read.Corrupt), tar_read.read_ahead(tar_read.chunks(fd)) as got:
            for _ in got:
                pass
        with tar_read.read_ahead(tar_read.chunks(fd), depth=1) as got:
            next(got, None)  # left early: the thread stops, the block waits for it
    finally:
        os.close(fd)


def _corrupt(data: bytes) -> None:
    with pytest.raises(tar_read.Corrupt):
        read(data)


def test_stricter_than_tarfile() -> None:
    data = bytearray(build(tarfile.USTAR_FORMAT))
    third = 512 * 2  # "dir/block", after the headers of "dir" and "dir/empty"
    bad = bytes(data)
    bad = bad[:third + 100] + b"0000777\0" + bad[third + 108:]  # a mode, checksum kept
    _corrupt(bad)  # tarfile ends the archive there, dropping the rest
    assert len(by_tarfile(bad)) == 2
    _corrupt(bytes(data[:512 * 4]))  # ends inside an entry's bytes
    end = len(data) - data[::-1].index(next(b for b in data[::-1] if b)) + 511
    _corrupt(bytes(data[:end // 512 * 512]))  # no end-of-archive block


def _with_pax(records: bytes) -> bytes:
    info = tarfile.TarInfo("././@PaxHeader")
    info.type, info.size = tarfile.XHDTYPE, len(records)
    pad = b"\0" * (-len(records) % 512)
    entry = tarfile.TarInfo("f")
    entry.size = 2
    return (info.tobuf(tarfile.USTAR_FORMAT) + records + pad +
            entry.tobuf(tarfile.USTAR_FORMAT) + b"hi" + b"\0" * 510 + bytes(1024))


def _record(key: bytes, value: bytes) -> bytes:
    body = b" %s=%s\n" % (key, value)
    length = len(body) + len(str(len(body)))
    length += len(str(length)) - len(str(len(body)))
    return b"%d%s" % (length, body)


def test_pax_records() -> None:
    assert _record(b"path", b"a/b") == b"12 path=a/b\n"
    assert read(_with_pax(_record(b"path", b"a/b")))[0][0] == "a/b"
    _corrupt(_with_pax(b"99 path=a/b\n"))  # the length runs past the header
    _corrupt(_with_pax(b"12 path=a/bX"))  # the record does not end with its newline
    _corrupt(_with_pax(b"11 size=x1\n"))
    sparse = read(_with_pax(_record(b"GNU.sparse.major", b"1") + _record(b"uid", b"0")))
    assert sparse[0][1] == tar_read.SPARSE and len(sparse) == 1  # its bytes skipped


def test_global_pax_applies_to_every_later_entry() -> None:
    globals_ = _record(b"path", b"global")
    info = tarfile.TarInfo("g")
    info.type, info.size = tarfile.XGLTYPE, len(globals_)
    head = info.tobuf(tarfile.USTAR_FORMAT) + globals_ + b"\0" * (512 - len(globals_))
    plain = tarfile.TarInfo("plain").tobuf(tarfile.USTAR_FORMAT)
    local = _with_pax(_record(b"uid", b"0"))
    data = head + plain + local
    assert [e[0] for e in read(data)] == [e[0] for e in by_tarfile(data)] == ["global",
                                                                               "global"]


def test_gnu_sparse_type_and_base256_numbers() -> None:
    info = tarfile.TarInfo("s")
    info.type = tarfile.GNUTYPE_SPARSE
    assert read(info.tobuf(tarfile.GNU_FORMAT) + bytes(1024))[0][1] == tar_read.SPARSE
    block = bytearray(tarfile.TarInfo("n").tobuf(tarfile.GNU_FORMAT))
    block[124:136] = b"\x80" + (5).to_bytes(11, "big")  # size 5 in base-256
    block[148:156] = b" " * 8
    block[148:155] = b"%06o\0" % sum(block)
    assert read(bytes(block) + b"hello" + bytes(507) + bytes(1024))[0][2:] == (
        5, 0o644, "", b"hello")


@pytest.mark.skipif(shutil.which("tar") is None, reason="GNU tar is not installed")
def test_reads_what_gnu_tar_writes(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / ("x" * 120)).mkdir(parents=True)
    (src / ("x" * 120) / "deep.txt").write_bytes(b"deep")
    (src / "a.bin").write_bytes(os.urandom(5000))
    os.symlink("a.bin", src / "ln")
    data = subprocess.run(["tar", "-cf", "-", "-C", str(src), "."], check=True,
                          capture_output=True).stdout
    assert read(data) == by_tarfile(data)
    zipped = zlib.compress(data)  # not gzip: read as plain bytes, and refused as no tar
    _corrupt(zipped)
