"""tools/mutate/keep.py: what a mutation hands back for the history, in process."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.mutate import keep
from chorus_tools.tools.mutate.write import write


def _kept(ctx: ToolContext) -> list[dict[str, Any]]:
    assert ctx.record is not None
    return ctx.record.get("kept", [])


@pytest.fixture
def spooled(ctx: ToolContext, tmp_path: Path):
    fds = tuple(os.open(tmp_path / f"spool{n}", os.O_RDWR | os.O_CREAT, 0o600)
                for n in range(2))
    ctx.history_spools = fds
    ctx.record = {}
    keep._spool = None
    yield ctx
    keep._spool = None
    for fd in fds:
        os.close(fd)


def test_small_content_goes_back_inline_with_its_hash_and_mode(spooled: ToolContext,
                                                               root: Path) -> None:
    (root / "a.txt").write_bytes(b"old\r\n")
    (root / "a.txt").chmod(0o640)
    write(spooled, "a.txt", "new")
    (entry,) = _kept(spooled)
    assert entry["data"] == b"old\r\n" and entry["spool"] is None
    assert entry["sha256"] == hashlib.sha256(b"old\r\n").hexdigest()
    assert entry["mode"] == 0o640 and entry["path"] == "a.txt"
    assert entry["after"] is not None


def test_big_content_is_streamed_into_the_spool_not_held(spooled: ToolContext,
                                                         root: Path) -> None:
    data = os.urandom(3 * keep.INLINE_MAX)
    (root / "big.bin").write_bytes(data)
    write(spooled, "big.bin", "small")
    (entry,) = _kept(spooled)
    index, offset = entry["spool"]
    assert entry["data"] is None and entry["bytes"] == len(data)
    assert spooled.history_spools is not None
    assert os.pread(spooled.history_spools[index], len(data), offset) == data
    assert entry["sha256"] == hashlib.sha256(data).hexdigest()


def test_what_one_call_hands_back_inline_is_bounded(spooled: ToolContext,
                                                    root: Path) -> None:
    """A tree deleted at once: past INLINE_TOTAL the rest goes through the spool."""
    from chorus_tools.tools.mutate.dirs import delete as dir_delete
    (root / "d").mkdir()
    chunk = os.urandom(keep.INLINE_MAX)
    count = keep.INLINE_TOTAL // keep.INLINE_MAX + 3
    for n in range(count):
        (root / "d" / f"{n}.bin").write_bytes(chunk)
    dir_delete(spooled, "d", recursive=True)
    kept = _kept(spooled)
    assert len(kept) == count
    assert sum(len(e["data"]) for e in kept if e["data"] is not None) <= keep.INLINE_TOTAL
    assert sum(1 for e in kept if e["spool"] is not None) >= 3


def test_a_failed_call_hands_back_nothing(spooled: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("x")
    with pytest.raises(ToolError):
        write(spooled, "a.txt", "y", overwrite=False)
    assert _kept(spooled) == []


def test_each_process_claims_its_own_spool(spooled: ToolContext) -> None:
    first = keep._claim(spooled)
    read, written = os.pipe()
    pid = os.fork()
    if pid == 0:  # a second worker: the first one's lock keeps it off that spool
        keep._spool = None
        os.write(written, bytes([keep._claim(spooled)[0]]))
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 1) == bytes([1 - first[0]])


def test_history_off_hands_back_nothing(ctx: ToolContext, root: Path) -> None:
    ctx.record = {}
    (root / "a.txt").write_text("x")
    write(ctx, "a.txt", "y")
    assert _kept(ctx) == []
