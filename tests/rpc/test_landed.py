"""rpc/dispatch/landed.py: what a commit landed is learnt from its audit (and taken out
of it, so the records never write it), handed to an upload begun at that path only, and
kept for the last KEEP paths."""

from __future__ import annotations

from chorus_tools.rpc.dispatch.landed import Landed
from chorus_tools.tools.bytes.table import METHODS

BY_NAME = {m.name: m for m in METHODS}
BEGIN, WRITE = BY_NAME["file.upload_begin"], BY_NAME["file.write_bytes"]


def test_a_commit_teaches_the_next_upload_at_its_path() -> None:
    landed = Landed()
    audit = {"sha256_before": None, "landed": ["dir/m.bin", "v1", "ab" * 32]}
    landed.note(audit)
    assert audit == {"sha256_before": None}
    params = {"path": "./dir/m.bin", "size": 3}
    assert landed.prepare(BEGIN, params, {"./dir/m.bin": "dir/m.bin"}) == {
        **params, "replaced_version": "v1", "replaced_sha256": "ab" * 32}
    assert params == {"path": "./dir/m.bin", "size": 3}
    assert landed.prepare(BEGIN, {"path": "other"}, {"other": "other"}) == {"path": "other"}
    write = {"path": "dir/m.bin", "data": ""}
    assert landed.prepare(WRITE, write, {"dir/m.bin": "dir/m.bin"}) is write
    landed.note(None)
    landed.note({"sha256_before": None})


def test_only_the_last_keep_paths_are_kept() -> None:
    landed = Landed()
    for i in range(Landed.KEEP + 1):
        landed.note({"landed": [f"f{i}", f"v{i}", "cd" * 32]})
    landed.note({"landed": ["f1", "v1b", "ef" * 32]})  # landed again: the newest
    assert "replaced_version" not in landed.prepare(BEGIN, {"path": "f0"}, {"f0": "f0"})
    assert landed.prepare(BEGIN, {"path": "f1"}, {"f1": "f1"})["replaced_version"] == "v1b"
    assert landed.prepare(BEGIN, {"path": "f2"}, {"f2": "f2"})["replaced_sha256"] == "cd" * 32
