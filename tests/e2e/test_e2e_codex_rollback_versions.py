"""An apply_patch that fails part way puts back what it had changed as the very files
they were (docs/protocol.md: all or nothing across files; a rewind takes a file not at
the version this server left for someone else's change).

Bug: the way back wrote each file anew (codex_commit's undo): the same bytes, but a new
inode and mtime, so a new version, and the next workspace.rewind listed every file the
failed patch had touched as a conflict and left it alone.
"""

from __future__ import annotations

import os
from pathlib import Path

from rpc_client import RpcServer, error_code


def _patch(*body: str) -> str:
    return "\n".join(["*** Begin Patch", *body, "*** End Patch"])


def _failing(*body: str) -> dict:
    """A patch whose changes come first and whose new file, last under a quota (removals
    and shrinking files go first), is too big for it: the files changed are put back."""
    return {"input": _patch(*body, "*** Add File: big.txt", *["+" + "b" * 99] * 50)}


def _same_entries(ws: Path, before: dict[str, os.stat_result]) -> None:
    for name, st in before.items():  # the very entries they were, versions and all
        now = os.lstat(ws / name)
        assert (now.st_ino, now.st_mtime_ns, now.st_size, now.st_mode) == (
            st.st_ino, st.st_mtime_ns, st.st_size, st.st_mode), name
    assert not (ws / "big.txt").exists()


def test_after_a_failed_apply_patch_a_rewind_still_owns_its_files(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_bytes(b"alpha\nbeta\n")
    (ws / "gone.txt").write_bytes(b"to delete\n")
    os.symlink("a.txt", ws / "old-link")
    with RpcServer(ws, "--tools", "native,codex", "--history", str(tmp_path / "hist"),
                   "--quota-bytes", "4K") as server:
        server.result("file.write", {"path": "a.txt", "content": "alpha\nbeta\ngamma\n"})
        cp = server.result("workspace.checkpoint", {})["checkpoint"]
        server.result("file.write", {"path": "a.txt", "content": "alpha\nbeta\n"})
        server.result("file.write", {"path": "gone.txt", "content": "to delete\n!"})
        before = {p: os.lstat(ws / p) for p in ("a.txt", "gone.txt", "old-link")}
        failed = server.call("apply_patch", _failing(
            "*** Delete File: gone.txt", "*** Delete File: old-link",
            "*** Update File: a.txt", "@@", "-beta"))
        assert error_code(failed) == "quota_exceeded", failed
        data = failed["error"]["data"]
        assert sorted(data["restored"]) == ["a.txt", "gone.txt", "old-link"], failed
        assert "not_restored" not in data, failed
        _same_entries(ws, before)
        assert sorted(os.listdir(ws)) == ["a.txt", "gone.txt", "old-link"]
        done = server.result("workspace.rewind", {"checkpoint": cp})
    assert done["conflicts"] == [], done
    assert sorted(done["restored"]) == ["a.txt", "gone.txt"], done
    assert (ws / "a.txt").read_bytes() == b"alpha\nbeta\ngamma\n"
    assert (ws / "gone.txt").read_bytes() == b"to delete\n"


def test_a_failed_apply_patch_puts_back_files_it_reached_through_links(
        tmp_path: Path) -> None:
    """Bug: a file patched through a symlink at its name had its mode put back with a
    chmod of the link itself, which Linux cannot do: internal_error, and the files
    before it in the undo left changed. A name through a symlinked directory is kept by
    where the entry really is."""
    ws = tmp_path / "ws"
    (ws / "real").mkdir(parents=True)
    (ws / "real" / "t.txt").write_bytes(b"target\n")
    (ws / "real" / "d.txt").write_bytes(b"through a linked directory\n")
    os.chmod(ws / "real" / "t.txt", 0o640)
    os.symlink("real", ws / "dl")
    os.symlink("real/t.txt", ws / "ln")
    with RpcServer(ws, "--tools", "codex", "--quota-bytes", "4K") as server:
        names = ("real/t.txt", "real/d.txt", "ln", "dl")
        before = {p: os.lstat(ws / p) for p in names}
        failed = server.call("apply_patch", _failing(
            "*** Update File: ln", "@@", "-target", "+t",
            "*** Update File: dl/d.txt", "@@", "-through a linked directory", "+x",
            # the same file by its real name: changed by then (conflict), and both names
            # kept by one entry, put back as it was before the first
            "*** Update File: real/d.txt", "@@", "-through a linked directory", "+y"))
    assert error_code(failed) == "conflict", failed
    assert sorted(failed["error"]["data"]["restored"]) == ["dl/d.txt", "ln"], failed
    assert "not_restored" not in failed["error"]["data"], failed
    _same_entries(ws, before)
    assert (ws / "real" / "d.txt").read_bytes() == b"through a linked directory\n"
    assert sorted(os.listdir(ws)) == ["dl", "ln", "real"]
    assert sorted(os.listdir(ws / "real")) == ["d.txt", "t.txt"]


def test_a_move_onto_a_dangling_symlink_keeps_the_mode_without_crashing(
        tmp_path: Path) -> None:
    """Bug: the moved file's permission bits were set by a chmod of its new name after
    the write; a symlink there (the write lands where it leads) made that chmod raise:
    internal_error, with the source already deleted and nothing put back."""
    (tmp_path / "a.txt").write_bytes(b"a\n")
    os.chmod(tmp_path / "a.txt", 0o600)
    os.symlink("nowhere.txt", tmp_path / "q")
    with RpcServer(tmp_path, "--tools", "codex") as server:
        done = server.result("apply_patch", {"input": _patch(
            "*** Update File: a.txt", "*** Move to: q", "@@", "-a", "+b")})
    assert [(f["path"], f["from"]) for f in done["files"]] == [("q", "a.txt")], done
    assert sorted(os.listdir(tmp_path)) == ["nowhere.txt", "q"]
    assert (tmp_path / "nowhere.txt").read_bytes() == b"b\n"
    assert os.stat(tmp_path / "nowhere.txt").st_mode & 0o777 == 0o600
