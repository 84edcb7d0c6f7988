"""Big upload parts written past the page cache (tools/bytes/spool.py `_write_hashed`,
tools/bytes/direct.py `Staging`): a part of DIRECT_MIN bytes or more at an aligned offset
goes direct from an aligned buffer while a thread hashes it, its unaligned tail and any
part at an unaligned offset through the cache. Whatever the mix and the order, the bytes
and the SHA-256 checked at the commit are exact; a resent part is compared with the bytes
written direct; a file system that refuses O_DIRECT (ramfs, mounted for real) gets the
same bytes through the cache."""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
from pathlib import Path
from typing import Iterator

import pybase64
import pytest

from chorus_tools.tools.bytes.direct import ALIGN, Staging, set_direct
from chorus_tools.tools.bytes.spool import DIRECT_MIN
from chorus_tools.tools.bytes.uploads import upload_begin, upload_commit, upload_part
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError

# aligned and whole; aligned with a tail (4 MiB + 1000); then at an unaligned offset
CUTS = [(0, DIRECT_MIN), (DIRECT_MIN, 2 * DIRECT_MIN + 1000),
        (2 * DIRECT_MIN + 1000, 3 * DIRECT_MIN + 1777)]
SIZE = CUTS[-1][1]
BLOB = random.Random(45).randbytes(SIZE)


def _part(ctx: ToolContext, uid: str, start: int, end: int, blob: bytes = BLOB) -> int:
    return upload_part(ctx, uid, start, pybase64.b64encode(blob[start:end]).decode())[
        "received"]


def _upload(ctx: ToolContext, cuts: list[tuple[int, int]]) -> dict[str, object]:
    uid = upload_begin(ctx, "big.bin", size=SIZE,
                       sha256=hashlib.sha256(BLOB).hexdigest())["upload_id"]
    for start, end in cuts:
        _part(ctx, uid, start, end)
    return upload_commit(ctx, uid)


@pytest.mark.parametrize("order", ["in order", "reversed"])
def test_direct_parts_land_exact_in_any_order(ctx: ToolContext, root: Path,
                                               order: str) -> None:
    cuts = CUTS if order == "in order" else CUTS[::-1]
    assert _upload(ctx, cuts)["bytes_written"] == SIZE
    assert (root / "big.bin").read_bytes() == BLOB


def test_a_resent_part_is_compared_with_the_bytes_written_direct(ctx: ToolContext,
                                                                 root: Path) -> None:
    uid = upload_begin(ctx, "big.bin", size=SIZE,
                       sha256=hashlib.sha256(BLOB).hexdigest())["upload_id"]
    start, end = CUTS[1]
    _part(ctx, uid, start, end)
    assert _part(ctx, uid, start, end) == end - start  # the same bytes: taken again
    changed = bytearray(BLOB)
    changed[end - 1] ^= 1  # the last byte of its tail, written through the cache
    changed[start + ALIGN] ^= 1  # and one in its head, written direct
    with pytest.raises(ToolError) as err:
        _part(ctx, uid, start, end, bytes(changed))
    assert err.value.code == "invalid_params"
    for rest in (CUTS[0], CUTS[2]):
        _part(ctx, uid, *rest)
    assert upload_commit(ctx, uid)["bytes_written"] == SIZE
    assert (root / "big.bin").read_bytes() == BLOB  # the refused part changed nothing


def test_a_part_whose_bytes_differ_from_the_digest_lands_nothing(ctx: ToolContext,
                                                                root: Path) -> None:
    uid = upload_begin(ctx, "big.bin", size=SIZE,
                       sha256=hashlib.sha256(BLOB).hexdigest())["upload_id"]
    other = bytearray(BLOB)
    other[DIRECT_MIN + 5] ^= 0xFF  # inside the direct head of the second part
    for start, end in CUTS:
        _part(ctx, uid, start, end, bytes(other))
    with pytest.raises(ToolError) as err:
        upload_commit(ctx, uid)
    assert err.value.code == "verification_failed"
    assert not (root / "big.bin").exists()


@pytest.fixture
def ramfs(tmp_path: Path) -> Iterator[Path]:
    """A ramfs, which refuses O_DIRECT (mounting it needs root, as the image runs tests)."""
    mount = tmp_path / "ramfs"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "ramfs", "none", str(mount)], capture_output=True)
    if done.returncode:
        pytest.skip(f"cannot mount a ramfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_a_file_system_refusing_o_direct_gets_the_parts_through_the_cache(
        ramfs: Path) -> None:
    fd = os.open(ramfs / "probe", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        assert not set_direct(fd, True)  # refused for real
        Staging().write(fd, BLOB[:DIRECT_MIN], 0)
    finally:
        os.close(fd)
    assert (ramfs / "probe").read_bytes() == BLOB[:DIRECT_MIN]
    ws = Workspace(str(ramfs))
    try:
        assert _upload(ToolContext(ws=ws), CUTS)["bytes_written"] == SIZE
    finally:
        os.close(ws.root_fd)
    assert (ramfs / "big.bin").read_bytes() == BLOB
