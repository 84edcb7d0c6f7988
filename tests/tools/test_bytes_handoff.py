"""tools/bytes/handoff.py called directly: what /files asks of a worker. The descriptors it
hands are the file or the spool opened under every rule; a spool sized for a streamed
body counts as received, lands whole at commit, and lives while its data is written."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from pathlib import Path

import pytest

from chorus_tools.tools.bytes.handoff import read_stream, upload_stream
from chorus_tools.tools.bytes.spool import SPOOL_PREFIX, expire
from chorus_tools.tools.bytes.uploads import upload_abort, upload_begin, upload_commit
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError

BLOB = os.urandom(100_000)


def test_read_stream_hands_the_file_opened_and_refuses_what_read_bytes_does(
        ctx: ToolContext, root: Path, tmp_path: Path) -> None:
    (root / "f.bin").write_bytes(BLOB)
    handing = read_stream(ctx, "f.bin")
    try:
        (fd,) = handing.fds
        assert os.pread(fd, len(BLOB) + 1, 0) == BLOB
        assert handing.result["size"] == len(BLOB)
        with pytest.raises(OSError):
            os.write(fd, b"x")  # read only
    finally:
        os.close(fd)
    os.mkfifo(root / "pipe")
    (root / "out").symlink_to(tmp_path)
    for path, code in (("pipe", "not_a_regular_file"), ("out/x", "path_outside_workspace"),
                       ("nope", "file_not_found")):
        with pytest.raises(ToolError) as info:
            read_stream(ctx, path)
        assert info.value.code == code


def test_a_streamed_upload_is_written_through_the_handed_spool_and_lands_whole(
        ctx: ToolContext, root: Path) -> None:
    uid = upload_begin(ctx, "up.bin", size=len(BLOB),
                       sha256=hashlib.sha256(BLOB).hexdigest())["upload_id"]
    (fd,) = upload_stream(ctx, uid, len(BLOB)).fds
    try:
        assert os.fstat(fd).st_size == len(BLOB)  # sized (sparse) before a byte came
        os.pwrite(fd, BLOB, 0)
    finally:
        os.close(fd)
    with pytest.raises(ToolError) as info:  # never past the size announced
        upload_stream(ctx, uid, len(BLOB) + 1)
    assert info.value.code == "invalid_params"
    assert upload_commit(ctx, uid)["bytes_written"] == len(BLOB)
    assert (root / "up.bin").read_bytes() == BLOB
    assert not list(root.glob(SPOOL_PREFIX + "*"))


def test_a_body_of_unknown_length_is_cut_to_its_length_and_checked(ctx: ToolContext,
                                                                   root: Path) -> None:
    uid = upload_begin(ctx, "u.bin", sha256=hashlib.sha256(b"abc").hexdigest())["upload_id"]
    (fd,) = upload_stream(ctx, uid, 1 << 20).fds  # room ahead of the body
    os.pwrite(fd, b"abc", 0)
    os.close(fd)
    os.close(upload_stream(ctx, uid, 3).fds[0])  # the body ended: its length
    upload_commit(ctx, uid)
    assert (root / "u.bin").read_bytes() == b"abc"
    short = upload_begin(ctx, "s.bin", sha256=hashlib.sha256(b"abc").hexdigest())
    os.close(upload_stream(ctx, short["upload_id"], 3).fds[0])  # nothing written: zeros
    with pytest.raises(ToolError) as info:
        upload_commit(ctx, short["upload_id"])
    assert info.value.code == "verification_failed" and not (root / "s.bin").exists()
    upload_abort(ctx, short["upload_id"])


def test_a_spool_whose_data_is_being_written_is_not_expired(ctx: ToolContext,
                                                            root: Path) -> None:
    quick = dataclasses.replace(ctx, limits=dataclasses.replace(ctx.limits,
                                                                upload_timeout=60.0))
    uid = upload_begin(quick, "w.bin")["upload_id"]
    (fd,) = upload_stream(quick, uid, 10).fds
    spool = root / (SPOOL_PREFIX + uid)
    past = time.time() - 120
    os.utime(spool / "meta.json", (past, past))  # the meta untouched for long...
    os.pwrite(fd, b"x", 0)  # ...but the server process writes the body now
    os.close(fd)
    assert expire(quick) == 0 and spool.exists()
    os.utime(spool / "data", (past, past))
    assert expire(quick) == 1 and not spool.exists()


def test_the_digest_of_what_the_server_wrote_is_checked_and_a_later_part_forgets_it(
        ctx: ToolContext, root: Path) -> None:
    from chorus_tools.tools.bytes.uploads import upload_part

    good = hashlib.sha256(b"abc").hexdigest()
    uid = upload_begin(ctx, "d.bin", size=3, sha256=good)["upload_id"]
    (fd,) = upload_stream(ctx, uid, 3).fds
    os.pwrite(fd, b"abc", 0)
    os.close(fd)
    os.close(upload_stream(ctx, uid, 3, "0" * 64).fds[0])  # said wrong: the commit refuses
    with pytest.raises(ToolError) as info:
        upload_commit(ctx, uid)
    assert info.value.code == "verification_failed" and not (root / "d.bin").exists()
    upload_part(ctx, uid, 0, "YWJj")  # the same bytes as a part: the digest is read again
    upload_commit(ctx, uid)
    assert (root / "d.bin").read_bytes() == b"abc"
