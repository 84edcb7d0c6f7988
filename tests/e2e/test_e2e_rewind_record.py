"""The audit record of a workspace.rewind (docs/protocol.md, Audit records; History).

Bug: a rewind's record named no path yet carried the hashes and size of whichever file it
happened to put back last, so the line claimed a change of some unnamed file and said
nothing of the others. Like apply_patch's, a rewind's one line lists every file it
changed in `files`, each with its true hashes and bytes; the line's own hashes are null,
since the call names no file, and `bytes` is the total.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from rpc_client import RpcServer


def sha(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def test_a_rewinds_record_lists_every_file_it_changed_with_true_hashes(
        tmp_path: Path) -> None:
    ws, records, hist = tmp_path / "ws", tmp_path / "records", tmp_path / "hist"
    ws.mkdir()
    (ws / "a.txt").write_bytes(b"a then\n")
    (ws / "b.txt").write_bytes(b"b then\n")
    with RpcServer(ws, "--workers", "1", "--records", str(records),
                   "--history", str(hist)) as server:
        cp = server.result("workspace.checkpoint", {})["checkpoint"]
        server.result("file.write", {"path": "a.txt", "content": "a now, longer\n"})
        server.result("file.delete", {"path": "b.txt"})
        server.result("file.write", {"path": "new.txt", "content": "made since\n"})
        got = server.result("workspace.rewind", {"checkpoint": cp})
        assert got["restored"] == ["a.txt", "b.txt"] and got["deleted"] == ["new.txt"]
        line = json.loads((records / "records.jsonl").read_text().splitlines()[-1])
    assert line["method"] == "workspace.rewind" and line["outcome"] == "ok"
    assert line["path"] is None
    assert (line["sha256_before"], line["sha256_after"]) == (None, None)
    expected = [
        {"path": "a.txt", "sha256_before": sha(b"a now, longer\n"),
         "sha256_after": sha(b"a then\n"), "bytes": 7},
        {"path": "b.txt", "sha256_before": None, "sha256_after": sha(b"b then\n"),
         "bytes": 7},
        {"path": "new.txt", "sha256_before": sha(b"made since\n"), "sha256_after": None,
         "bytes": 11},
    ]
    assert sorted(line["files"], key=lambda f: f["path"]) == expected
    assert line["bytes"] == 25
