"""The running digest of an upload's parts (tools/bytes/running.py, tools/bytes/spool.py):
the commit's SHA-256 check stays exact whatever order the parts came in, resent or
overlapping, carried on by another process, and without libcrypto; and parts sent in
order leave the commit nothing to read again."""

from __future__ import annotations

import hashlib
import json
import os
import random
from pathlib import Path

import pybase64
import pytest

from chorus_tools.tools.bytes import running, spool as spool_mod
from chorus_tools.tools.bytes.spool import META, SPOOL_PREFIX
from chorus_tools.tools.bytes.uploads import upload_begin, upload_commit, upload_part
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError

SIZE = 300_001
PART = 16_384
BLOB = random.Random(41).randbytes(SIZE)


def _cuts(order: str) -> list[tuple[int, int]]:
    cuts = [(at, min(at + PART, SIZE)) for at in range(0, SIZE, PART)]
    if order == "reversed":
        cuts.reverse()
    elif order == "shuffled":
        random.Random(7).shuffle(cuts)
    elif order == "overlapping":  # odd sizes, each part starting inside the last one
        cuts = [(at, min(at + 3001, SIZE)) for at in range(0, SIZE, 2500)]
    return cuts


def _meta(root: Path, uid: str) -> dict[str, object]:
    return json.loads((root / f"{SPOOL_PREFIX}{uid}" / META).read_text())


def _send(ctx: ToolContext, uid: str, cuts: list[tuple[int, int]]) -> None:
    for start, end in cuts:
        upload_part(ctx, uid, start, pybase64.b64encode(BLOB[start:end]).decode())


@pytest.mark.parametrize("order", ["in order", "reversed", "shuffled", "overlapping"])
def test_the_digest_is_exact_in_any_order(ctx: ToolContext, root: Path, order: str) -> None:
    uid = upload_begin(ctx, "f.bin", size=SIZE,
                       sha256=hashlib.sha256(BLOB).hexdigest())["upload_id"]
    cuts = _cuts(order)
    _send(ctx, uid, cuts)
    _send(ctx, uid, cuts[:3])  # resent with the same bytes
    meta = _meta(root, uid)
    assert meta["hashed"] == (SIZE if running.AVAILABLE else 0)
    assert upload_commit(ctx, uid)["bytes_written"] == SIZE
    assert (root / "f.bin").read_bytes() == BLOB


def test_parts_in_order_leave_the_commit_nothing_to_read(
        ctx: ToolContext, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not running.AVAILABLE:
        pytest.fail("libcrypto's SHA256_* are not available here")
    uid = upload_begin(ctx, "f.bin", size=SIZE,
                       sha256=hashlib.sha256(BLOB).hexdigest())["upload_id"]
    _send(ctx, uid, _cuts("in order"))
    read: list[bytes] = []
    real = os.pread
    monkeypatch.setattr(spool_mod.os, "pread",
                        lambda fd, n, at: read.append(real(fd, n, at)) or read[-1])
    upload_commit(ctx, uid)
    assert b"".join(read) == b""  # one pread, at the end of the file, finds nothing
    assert (root / "f.bin").read_bytes() == BLOB


def test_a_hole_is_hashed_once_it_fills(ctx: ToolContext, root: Path) -> None:
    uid = upload_begin(ctx, "f.bin", size=SIZE)["upload_id"]
    cuts = _cuts("in order")
    _send(ctx, uid, cuts[:2] + cuts[3:])
    assert _meta(root, uid)["hashed"] == (2 * PART if running.AVAILABLE else 0)
    _send(ctx, uid, cuts[2:3])
    assert _meta(root, uid)["hashed"] == (SIZE if running.AVAILABLE else 0)
    upload_commit(ctx, uid)
    assert (root / "f.bin").read_bytes() == BLOB


def test_another_process_carries_the_digest_on(ctx: ToolContext, root: Path) -> None:
    """Half the parts sent by a forked process that then exits (a worker replaced between
    two parts), the rest here: the saved state is all the next one needs."""
    uid = upload_begin(ctx, "f.bin", size=SIZE,
                       sha256=hashlib.sha256(BLOB).hexdigest())["upload_id"]
    cuts = _cuts("shuffled")
    pid = os.fork()
    if pid == 0:
        try:
            _send(ctx, uid, cuts[:len(cuts) // 2])
        finally:
            os._exit(0)
    assert os.waitpid(pid, 0)[1] == 0
    _send(ctx, uid, cuts[len(cuts) // 2:])
    upload_commit(ctx, uid)
    assert (root / "f.bin").read_bytes() == BLOB


def test_a_wrong_digest_is_still_refused(ctx: ToolContext, root: Path) -> None:
    uid = upload_begin(ctx, "f.bin", size=SIZE, sha256="0" * 64)["upload_id"]
    _send(ctx, uid, _cuts("in order"))
    with pytest.raises(ToolError) as info:
        upload_commit(ctx, uid)
    assert info.value.code == "verification_failed"
    assert info.value.details["actual"] == {"sha256": hashlib.sha256(BLOB).hexdigest()}
    assert not (root / "f.bin").exists()


def test_without_libcrypto_the_commit_hashes_the_spool(
        ctx: ToolContext, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(running, "AVAILABLE", False)
    uid = upload_begin(ctx, "f.bin", size=SIZE,
                       sha256=hashlib.sha256(BLOB).hexdigest())["upload_id"]
    _send(ctx, uid, _cuts("shuffled"))
    assert _meta(root, uid)["hash_state"] is None
    upload_commit(ctx, uid)
    assert (root / "f.bin").read_bytes() == BLOB


def test_the_saved_state_resumes_like_hashlib() -> None:
    if not running.AVAILABLE:
        pytest.fail("libcrypto's SHA256_* are not available here")
    state = running.fresh()
    for at in range(0, SIZE, 7777):
        state = running.update(bytes(state), BLOB[at:at + 7777])
    assert running.hexdigest(state) == hashlib.sha256(BLOB).hexdigest()
    assert running.hexdigest(running.fresh()) == hashlib.sha256(b"").hexdigest()
