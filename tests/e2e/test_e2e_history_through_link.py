"""Changes made through a symlinked directory inside the workspace are kept under the
files' real paths (docs/protocol.md, History: a history method names a file by its real
path, never through a link).

Bug: a write, patch, delete or move through `dl/` (a symlink to `real/`) was logged under
`dl/...`: `file.history` of `real/r.txt` listed nothing, `file.history` of `dl/r.txt` is
refused (a path through a symlink), and a rewind called every one of those changes
someone else's (a conflict) and undid none of them unless forced.
"""

from __future__ import annotations

import os
from pathlib import Path

from rpc_client import RpcServer


def tree(root: Path) -> dict[str, bytes]:
    return {os.path.relpath(os.path.join(d, f), root): Path(d, f).read_bytes()
            for d, _, files in os.walk(root) for f in files}


def test_changes_through_a_linked_directory_are_kept_under_the_real_paths(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "real" / "sub").mkdir(parents=True)
    (ws / "real" / "r.txt").write_bytes(b"r then\n")
    (ws / "real" / "w.txt").write_bytes(b"w then\n")
    (ws / "real" / "sub" / "s.txt").write_bytes(b"s then\n")
    (ws / "dl").symlink_to("real")
    before = tree(ws)
    with RpcServer(ws, "--workers", "1", "--history", str(tmp_path / "hist")) as server:
        cp = server.result("workspace.checkpoint", {})["checkpoint"]
        server.result("file.write", {"path": "dl/r.txt", "content": "r now\n"})
        server.result("file.patch", {"path": "dl/r.txt",
                                     "patches": [{"find": "now", "replace": "later"}]})
        server.result("file.delete", {"path": "dl/w.txt"})
        server.result("file.move", {"source": "dl/sub", "destination": "moved"})
        server.result("file.write", {"path": "dl/new.txt", "content": "made since\n"})
        r = server.result("file.history", {"path": "real/r.txt"})["versions"]
        assert [v["method"] for v in r] == ["file.patch", "file.write"]
        w = server.result("file.history", {"path": "real/w.txt"})["versions"]
        assert [(v["method"], v["exists"]) for v in w] == [("file.delete", True)]
        s = server.result("file.history", {"path": "real/sub/s.txt"})["versions"]
        assert s[0]["moved_to"] == "moved/s.txt"
        done = server.result("workspace.rewind", {"checkpoint": cp})
        assert done["conflicts"] == [], done
        assert sorted(done["restored"]) == ["real/r.txt", "real/sub/s.txt", "real/w.txt"]
        assert sorted(done["deleted"]) == ["moved/s.txt", "real/new.txt"]
    after = tree(ws)
    assert {k: v for k, v in after.items() if not k.startswith("dl/")} == \
        {k: v for k, v in before.items() if not k.startswith("dl/")}
