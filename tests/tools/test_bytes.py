"""tools/bytes: byte ranges, write_bytes and uploads in parts, called directly on a
workspace (docs/protocol.md, Bytes in and out). Every refusal leaves the file as it was and
no spool behind."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import os
import time
from pathlib import Path

import pytest

from chorus_tools.tools.bytes.ranges import read_bytes
from chorus_tools.tools.bytes.spool import SPOOL_PREFIX, expire
from chorus_tools.tools.bytes.uploads import (upload_abort, upload_begin, upload_commit,
                                              upload_part)
from chorus_tools.tools.bytes.write import write_bytes
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError

BLOB = bytes(range(256)) * 40 + b"\x00\xff" * 7  # binary, 10,254 bytes


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fails(code: str, func, *args, **kwargs) -> ToolError:  # type: ignore[no-untyped-def]
    with pytest.raises(ToolError) as info:
        func(*args, **kwargs)
    assert info.value.code == code, info.value.message
    return info.value


def spools(root: Path) -> list[str]:
    return [p.name for p in root.iterdir() if p.name.startswith(SPOOL_PREFIX)]


def test_read_bytes_ranges_of_a_binary_file(ctx: ToolContext, root: Path) -> None:
    (root / "b.bin").write_bytes(BLOB)
    whole = read_bytes(ctx, "b.bin")
    assert base64.b64decode(whole["data"]) == BLOB and whole["eof"] is True
    assert whole["size"] == whole["length"] == len(BLOB)
    part = read_bytes(ctx, "b.bin", offset=250, length=10)
    assert base64.b64decode(part["data"]) == BLOB[250:260] and part["eof"] is False
    assert part["version"] == whole["version"]
    past = read_bytes(ctx, "b.bin", offset=len(BLOB) + 5)
    assert past["data"] == "" and past["length"] == 0 and past["eof"] is True


@pytest.mark.parametrize("offset", [2**63, 2**64, 2**70])
def test_read_bytes_past_63_bits_is_the_end_not_internal_error(ctx: ToolContext, root: Path,
                                                                offset: int) -> None:
    """pread takes no offset past 63 bits: `offset` 2**63 was an OverflowError answered as
    internal_error. It is past the end of any file, so it reads as past the end does."""
    (root / "b.bin").write_bytes(BLOB)
    past = read_bytes(ctx, "b.bin", offset=offset)
    assert past["data"] == "" and past["length"] == 0 and past["eof"] is True
    assert past["offset"] == offset


def test_read_bytes_length_over_the_chunk_limit_is_invalid_params(ctx: ToolContext,
                                                                 root: Path) -> None:
    (root / "b.bin").write_bytes(BLOB)
    small = dataclasses.replace(ctx, limits=dataclasses.replace(ctx.limits,
                                                                max_chunk_bytes=100))
    assert fails("invalid_params", read_bytes, small, "b.bin", length=101).details[
        "param"] == "length"
    assert read_bytes(small, "b.bin", length=100)["length"] == 100


def test_read_bytes_is_confined_and_never_opens_a_fifo(ctx: ToolContext, root: Path,
                                                       outside: Path) -> None:
    (root / "out").symlink_to(outside / "canary.txt")
    os.mkfifo(root / "pipe")
    fails("path_outside_workspace", read_bytes, ctx, "out")
    fails("path_outside_workspace", read_bytes, ctx, "../outside/canary.txt")
    fails("not_a_regular_file", read_bytes, ctx, "pipe")
    fails("file_not_found", read_bytes, ctx, "missing")


def test_write_bytes_lands_exact_bytes_and_keeps_the_old_on_refusal(ctx: ToolContext,
                                                                   root: Path) -> None:
    out = write_bytes(ctx, "d/b.bin", b64(BLOB), sha256=sha(BLOB))
    assert out["created"] and out["bytes_written"] == len(BLOB)
    assert (root / "d/b.bin").read_bytes() == BLOB
    fails("verification_failed", write_bytes, ctx, "d/b.bin", b64(b"other"), sha256=sha(BLOB))
    fails("invalid_params", write_bytes, ctx, "d/b.bin", "not base64!")
    fails("invalid_params", write_bytes, ctx, "d/b.bin", "QUJ")  # padding missing
    assert (root / "d/b.bin").read_bytes() == BLOB
    write_bytes(ctx, "d/b.bin", "QUJD")
    fails("already_exists", write_bytes, ctx, "d/b.bin", b64(b"x"), overwrite=False)
    fails("conflict", write_bytes, ctx, "d/b.bin", b64(b"x"), expected_version="nope")
    assert (root / "d/b.bin").read_bytes() == b"ABC"


def test_write_bytes_refuses_escapes_and_reserved_names(ctx: ToolContext, root: Path,
                                                        outside: Path) -> None:
    (root / "link").symlink_to(outside)
    fails("path_outside_workspace", write_bytes, ctx, "link/x.bin", b64(b"x"))
    fails("invalid_params", write_bytes, ctx, ".chorus-tmp-upload-x", b64(b"x"))
    assert sorted(p.name for p in outside.iterdir()) == ["canary.txt"]


def test_upload_parts_in_any_order_resent_then_committed_whole(ctx: ToolContext,
                                                               root: Path) -> None:
    (root / "big.bin").write_bytes(b"old")
    began = upload_begin(ctx, "big.bin", size=len(BLOB), sha256=sha(BLOB))
    uid = began["upload_id"]
    cuts = [(4000, 8000), (0, 4000), (8000, len(BLOB))]
    for start, end in cuts:
        upload_part(ctx, uid, start, b64(BLOB[start:end]))
        assert (root / "big.bin").read_bytes() == b"old"  # nothing lands before the commit
    assert upload_part(ctx, uid, 100, b64(BLOB[100:5000]))["received"] == len(BLOB)
    out = upload_commit(ctx, uid)
    assert out == {"success": True, "bytes_written": len(BLOB), "created": False,
                   "version": out["version"]}
    assert (root / "big.bin").read_bytes() == BLOB
    assert spools(root) == []
    fails("upload_not_found", upload_commit, ctx, uid)


def test_upload_refusals_change_nothing(ctx: ToolContext, root: Path) -> None:
    (root / "keep.bin").write_bytes(b"keep")
    uid = upload_begin(ctx, "keep.bin", size=10)["upload_id"]
    fails("invalid_params", upload_part, ctx, uid, 8, b64(b"abc"))  # past the size
    upload_part(ctx, uid, 0, b64(b"abcdef"))
    err = fails("invalid_params", upload_part, ctx, uid, 4, b64(b"XY"))  # differs
    assert err.details["overlap"] == [4, 6]
    upload_part(ctx, uid, 4, b64(b"ef"))  # the same bytes again: fine
    fails("invalid_params", upload_part, ctx, uid, 6, "@@@")
    missing = fails("verification_failed", upload_commit, ctx, uid)
    assert missing.details["missing"] == [[6, 10]]
    upload_part(ctx, uid, 6, b64(b"ghij"))
    assert upload_commit(ctx, uid)["bytes_written"] == 10
    assert (root / "keep.bin").read_bytes() == b"abcdefghij"


def test_upload_digest_mismatch_writes_nothing(ctx: ToolContext, root: Path) -> None:
    (root / "f.bin").write_bytes(b"before")
    uid = upload_begin(ctx, "f.bin", sha256=sha(b"the real bytes"))["upload_id"]
    upload_part(ctx, uid, 0, b64(b"the fake bytes"))
    err = fails("verification_failed", upload_commit, ctx, uid)
    assert err.details["expected"] == {"sha256": sha(b"the real bytes")}
    assert (root / "f.bin").read_bytes() == b"before"
    upload_abort(ctx, uid)
    assert spools(root) == []
    fails("upload_not_found", upload_part, ctx, uid, 0, b64(b"x"))


def test_unknown_foreign_and_malformed_ids_are_upload_not_found(ctx: ToolContext,
                                                                root: Path) -> None:
    for uid in ("0" * 32, "../../etc", "", "ABC" * 11, "a" * 31):
        fails("upload_not_found", upload_part, ctx, uid, 0, b64(b"x"))
        fails("upload_not_found", upload_commit, ctx, uid)
        fails("upload_not_found", upload_abort, ctx, uid)


def test_begin_says_at_once_what_the_commit_would_refuse(ctx: ToolContext, root: Path) -> None:
    (root / "d").mkdir()
    (root / "f.bin").write_bytes(b"x")
    os.mkfifo(root / "pipe")
    fails("is_directory", upload_begin, ctx, "d")
    fails("not_a_regular_file", upload_begin, ctx, "pipe")
    fails("already_exists", upload_begin, ctx, "f.bin", overwrite=False)
    fails("conflict", upload_begin, ctx, "f.bin", expected_version="stale")
    fails("invalid_params", upload_begin, ctx, "f.bin", sha256="xyz")
    assert spools(root) == []


def test_a_file_changed_between_begin_and_commit_is_a_conflict(ctx: ToolContext,
                                                               root: Path) -> None:
    from chorus_tools.tools.read.info import info
    (root / "f.bin").write_bytes(b"v1")
    version = info(ctx, "f.bin")["version"]
    uid = upload_begin(ctx, "f.bin", expected_version=version)["upload_id"]
    upload_part(ctx, uid, 0, b64(b"mine"))
    time.sleep(0.01)
    (root / "f.bin").write_bytes(b"someone else's v2")
    fails("conflict", upload_commit, ctx, uid)
    assert (root / "f.bin").read_bytes() == b"someone else's v2"


def test_an_upload_untouched_past_the_timeout_is_removed(ctx: ToolContext, root: Path) -> None:
    uid = upload_begin(ctx, "late.bin")["upload_id"]
    upload_part(ctx, uid, 0, b64(b"part"))
    assert spools(root) == [SPOOL_PREFIX + uid]
    quick = dataclasses.replace(ctx, limits=dataclasses.replace(ctx.limits,
                                                                upload_timeout=60.0))
    assert expire(quick, now=time.time() + 30) == 0  # still fresh
    assert expire(quick, now=time.time() + 61) == 1
    assert spools(root) == []
    fails("upload_not_found", upload_commit, quick, uid)


def test_spools_are_never_listed_or_searched(ctx: ToolContext, root: Path) -> None:
    from chorus_tools.tools.walk.listing import file_list
    uid = upload_begin(ctx, "x.txt")["upload_id"]
    upload_part(ctx, uid, 0, b64(b"needle\n"))
    listed = file_list(ctx, pattern="**", include_hidden=True)
    assert not [f for f in listed["files"] if "chorus-tmp" in f["path"]]


def test_regression_a_write_into_a_live_spool_tampered_with_a_foreign_upload(
        ctx: ToolContext, root: Path) -> None:
    """The write path refused a reserved name only as the file's own name (or a directory
    it would create), so file.write_bytes could replace another upload's parts or its
    meta.json (redirecting its commit) inside the existing spool directory."""
    uid = upload_begin(ctx, "victim.bin", size=4, sha256=sha(b"good"))["upload_id"]
    upload_part(ctx, uid, 0, b64(b"good"))
    (spool,) = spools(root)
    for name in ("data", "meta.json"):
        fails("invalid_params", write_bytes, ctx, f"{spool}/{name}", b64(b"evil"))
        fails("invalid_params", write_bytes, ctx, f"sub/../{spool}/{name}", b64(b"evil"))
    assert upload_commit(ctx, uid)["bytes_written"] == 4
    assert (root / "victim.bin").read_bytes() == b"good"
    assert sorted(p.name for p in root.iterdir()) == ["victim.bin"]
