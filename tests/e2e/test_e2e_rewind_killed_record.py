"""The audit record of a rewind that completes one a killed server left (docs/protocol.md,
History; Audit records: all of it is recorded).

Bug: a server killed mid-rewind answers nothing and records nothing; the next rewind
first completes the journal's plan, but those changes reached no record: the line of the
rewind that completed them listed only what its own run changed (nothing, usually). The
files the completion put back are now in that line's `files`, with their hashes.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from rewind_support import changed_since_checkpoint, kill_mid_rewind
from rpc_client import RpcServer

COUNT, SIZE = 120, 100_000


def test_the_files_a_completed_rewind_put_back_are_in_the_next_rewinds_record(
        tmp_path: Path) -> None:
    root, hist, records = tmp_path / "ws", tmp_path / "hist", tmp_path / "records"
    root.mkdir()
    before = {f"f{i:03}.bin": os.urandom(SIZE) for i in range(COUNT)}
    cp = changed_since_checkpoint(root, hist, before, lambda name: f"after {name}\n" * 5000,
                                  "--workers", "1")
    after = {name: (root / name).read_bytes() for name in before}
    kill_mid_rewind(root, hist, cp, before, "--workers", "1")
    left = sorted(n for n in before if (root / n).read_bytes() == after[n])
    assert left, "killed too late: nothing was left for the next rewind"
    with RpcServer(root, "--workers", "1", "--history", str(hist),
                   "--records", str(records)) as srv:
        srv.result("workspace.rewind", {"checkpoint": cp})
    assert {n: (root / n).read_bytes() for n in before} == before
    line = json.loads((records / "records.jsonl").read_text().splitlines()[-1])
    assert line["method"] == "workspace.rewind" and line["outcome"] == "ok"
    assert sorted(f["path"] for f in line["files"]) == left
    for f in line["files"]:
        assert f["sha256_before"] == hashlib.sha256(after[f["path"]]).hexdigest()
        assert f["sha256_after"] == hashlib.sha256(before[f["path"]]).hexdigest()
        assert f["bytes"] == SIZE
    assert line["bytes"] == SIZE * len(left)
