"""A rewind that fails half way puts back what it changed as the very files they were
(docs/protocol.md, History: all or nothing; a file not at the version this server left
is someone else's change).

Bug: the way back wrote each file anew: same bytes, but a new inode and mtime, so a new
version. The history still named the old one, so the next rewind took every file the
failed one had touched for someone else's change and left it alone as a conflict.
"""

from __future__ import annotations

import os
from pathlib import Path

from rpc_client import RpcServer, error_code


def test_after_a_failed_rewind_the_next_one_still_owns_its_files(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "d").mkdir(parents=True)
    (ws / "a.txt").write_bytes(b"A\n")
    (ws / "d" / "f.txt").write_bytes(b"F\n")
    (ws / "c.txt").write_bytes(b"C\n")
    os.symlink("a.txt", ws / "link")
    with RpcServer(ws, "--history", str(tmp_path / "hist")) as server:
        cp = server.result("workspace.checkpoint", {})["checkpoint"]
        server.result("file.write", {"path": "a.txt", "content": "AAAA"})
        server.result("file.write", {"path": "b.txt", "content": "B"})
        server.result("file.delete", {"path": "link"})
        server.result("file.write", {"path": "link", "content": "a file"})
        # c.txt a directory now: the rewind removes it, and makes it again on its way back
        server.result("file.delete", {"path": "c.txt"})
        server.result("file.write", {"path": "c.txt/sub/in.txt", "content": "i"})
        server.result("dir.delete", {"path": "d", "recursive": True})
        (ws / "d").write_bytes(b"theirs")  # in the way of d/f.txt: forcing it fails
        before = {p: os.lstat(ws / p) for p in ("a.txt", "b.txt", "link", "c.txt/sub/in.txt")}
        failed = server.call("workspace.rewind", {"checkpoint": cp, "force": True})
        assert error_code(failed) == "not_a_directory", failed
        for name, st in before.items():  # put back as they were, versions and all
            now = os.lstat(ws / name)
            assert (now.st_ino, now.st_mtime_ns) == (st.st_ino, st.st_mtime_ns), name
        assert (ws / "a.txt").read_bytes() == b"AAAA"
        assert not any(p.name.startswith(".chorus-tmp-") for p in ws.iterdir())
        (ws / "d").unlink()
        done = server.result("workspace.rewind", {"checkpoint": cp})
    assert done["conflicts"] == [], done
    assert sorted(done["restored"]) == ["a.txt", "c.txt", "d/f.txt", "link"], done
    assert done["deleted"] == ["b.txt", "c.txt/sub/in.txt"], done
    assert (ws / "a.txt").read_bytes() == b"A\n" and os.readlink(ws / "link") == "a.txt"
