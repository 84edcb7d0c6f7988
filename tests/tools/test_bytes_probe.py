"""Regressions found probing docs/protocol.md's Bytes in and out as a client would: each
test is named after the bug it pins down, and failed before its fix."""

from __future__ import annotations

import dataclasses
import io
import tarfile
from pathlib import Path

from chorus_tools.tools.bytes.archive_in import import_begin, import_commit
from chorus_tools.tools.bytes.spool import Spool
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.mutate.quota import Room


def _tar(*files: tuple[str, bytes]) -> bytes:
    """A plain tar as tarfile (and GNU tar) write it: padded to a whole 10 KiB record."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _sent(ctx: ToolContext, into: str, archive: bytes) -> str:
    upload = import_begin(ctx, into)["upload_id"]
    with Spool.open(ctx, upload) as spool:
        spool.write_part(0, archive)
    return upload


def test_tar_record_padding_is_not_counted_against_max_archive_bytes(
        ctx: ToolContext, root: Path) -> None:
    """A 13-byte archive under --max-archive-bytes 1000 was refused as file_too_large:
    the zeros tar pads its last record with (10 KiB) were counted as expanded bytes."""
    small = dataclasses.replace(ctx.limits, max_archive_bytes=1000)
    limited = dataclasses.replace(ctx, limits=small)
    archive = _tar(("a.txt", b"hello"), ("b.txt", b"x" * 8))
    assert len(archive) == 10240
    got = import_commit(limited, _sent(limited, "dest", archive))
    assert got == {"created": 2, "replaced": 0, "bytes": 13}
    assert (root / "dest" / "a.txt").read_bytes() == b"hello"


def test_archive_import_is_charged_what_it_lands_not_also_the_archive(
        ctx: ToolContext, root: Path) -> None:
    """An import whose files fit the quota was refused: the archive's own bytes, charged
    while its parts waited, were still counted while its files landed."""
    archive = _tar(*((f"f{i}", b"y" * 2000) for i in range(10)))
    upload = _sent(ctx, "dest", archive)
    # the account as the invoker sees it at the commit: the parts already booked
    ctx.room, ctx.grown = Room(len(archive), len(archive) + 10_000, 0, None), (0, 0, 0)
    got = import_commit(ctx, upload)
    assert got == {"created": 10, "replaced": 0, "bytes": 20_000}
    assert ctx.grown[0] == 20_000 - len(archive)  # the archive freed, its files added
    assert sorted(p.name for p in root.iterdir()) == ["dest"]
