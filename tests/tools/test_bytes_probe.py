"""Regressions found probing docs/protocol.md's Bytes in and out as a client would: each
test is named after the bug it pins down, and failed before its fix."""

from __future__ import annotations

import base64
import dataclasses
from pathlib import Path

import pytest

from chorus_tools.tools.bytes.archive_in import import_begin, import_commit
from chorus_tools.tools.bytes.spool import SPOOL_PREFIX, Spool
from chorus_tools.tools.bytes.uploads import upload_begin, upload_commit, upload_part
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.mutate import dirs, move
from chorus_tools.tools.mutate.delete import delete
from chorus_tools.tools.mutate.quota import Room

from tar_support import tar_of


def _tar(*files: tuple[str, bytes]) -> bytes:
    """A plain tar as tarfile (and GNU tar) write it: padded to a whole 10 KiB record."""
    return tar_of(files)


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


def test_an_agent_could_delete_or_move_an_uploads_parts_beneath_the_reserved_prefix(
        ctx: ToolContext, root: Path) -> None:
    """file.delete, dir.delete and file.move checked only a path's last name for the
    reserved prefix: `.chorus-tmp-upload-<id>/data` (an upload's parts) could be deleted,
    its directory removed, its bytes moved out or another file moved in."""
    (root / "other.bin").write_bytes(b"x")
    upload = upload_begin(ctx, "big.bin")["upload_id"]
    upload_part(ctx, upload, 0, base64.b64encode(b"parts").decode())
    spool = f"{SPOOL_PREFIX}{upload}"
    before = sorted(p.name for p in (root / spool).iterdir())
    for call in (lambda: delete(ctx, f"{spool}/data"),
                 lambda: dirs.delete(ctx, spool, recursive=True),
                 lambda: move.move(ctx, f"{spool}/data", "stolen.bin"),
                 lambda: move.move(ctx, "other.bin", f"{spool}/data")):
        with pytest.raises(ToolError) as err:
            call()
        assert err.value.code == "invalid_params", err.value.message
    assert sorted(p.name for p in (root / spool).iterdir()) == before
    assert upload_commit(ctx, upload)["bytes_written"] == 5
    assert (root / "big.bin").read_bytes() == b"parts"


def test_an_archive_past_its_limits_was_file_too_large_without_the_size_in_its_data(
        ctx: ToolContext, root: Path) -> None:
    """file_too_large carries `size` and `limit` (docs/protocol.md, Errors); an archive
    past --max-archive-entries or --max-archive-bytes said only its limit."""
    small = dataclasses.replace(ctx.limits, max_archive_entries=3, max_archive_bytes=1000)
    limited = dataclasses.replace(ctx, limits=small)
    for archive, size, limit in (
            (_tar(*((f"e{i}", b"") for i in range(5))), 4, 3),
            (_tar(("a", b"x" * 600), ("b", b"y" * 600)), 1200, 1000)):
        with pytest.raises(ToolError) as err:
            import_commit(limited, _sent(limited, "dest", archive))
        assert err.value.code == "file_too_large"
        assert (err.value.details["size"], err.value.details["limit"]) == (size, limit)
    assert sorted(p.name for p in root.iterdir()) == []
