"""A rewind across a path that changed between file and directory, every change made by
this server (docs/protocol.md, History: every path changed since the checkpoint returns
to what it held then).

Bug: a directory deleted and a file written at its name, both by this server, rewound
only the new file away and listed the directory's files as `conflicts`: they stayed
lost, since the file in their parent's place made each look changed by someone else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rpc_client import RpcServer, snapshot


def _dry_run_and_rewind(tmp_path: Path, changes: list[tuple[str, dict[str, Any]]]
                        ) -> list[dict[str, Any]]:
    """A checkpoint of the workspace `tmp_path/ws`, `changes` made by the server, then a
    dry run of the rewind to it and the rewind: both replies, which must agree."""
    with RpcServer(tmp_path / "ws", "--history", str(tmp_path / "hist")) as server:
        cp = server.result("workspace.checkpoint", {})["checkpoint"]
        for method, params in changes:
            server.result(method, params)
        return [server.result("workspace.rewind", {"checkpoint": cp, "dry_run": True}),
                server.result("workspace.rewind", {"checkpoint": cp})]


def test_a_directory_deleted_then_replaced_by_a_file_comes_back_whole(tmp_path: Path
                                                                       ) -> None:
    ws = tmp_path / "ws"
    (ws / "d" / "e").mkdir(parents=True)
    (ws / "d" / "f.txt").write_bytes(b"F\n")
    (ws / "d" / "e" / "g.txt").write_bytes(b"G\n")
    before = {k: v[0] for k, v in snapshot(ws).items()}
    for reply in _dry_run_and_rewind(tmp_path, [
            ("dir.delete", {"path": "d", "recursive": True}),
            ("file.write", {"path": "d", "content": "a file now"})]):
        assert reply["conflicts"] == [], reply
        assert reply["deleted"] == ["d"], reply
        assert reply["restored"] == ["d/e/g.txt", "d/f.txt"], reply
    assert {k: v[0] for k, v in snapshot(ws).items()} == before


def test_a_file_replaced_by_a_directory_of_new_files_comes_back(tmp_path: Path) -> None:
    """The other way round: a file deleted, then files written beneath its name (the
    write made the directory). Once the rewind removes those files the directory holds
    nothing, and the file is put back in its place."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_bytes(b"A\n")
    for reply in _dry_run_and_rewind(tmp_path, [
            ("file.delete", {"path": "a.txt"}),
            ("file.write", {"path": "a.txt/sub/inner.txt", "content": "i"})]):
        assert reply["conflicts"] == [], reply
        assert reply["deleted"] == ["a.txt/sub/inner.txt"], reply
        assert reply["restored"] == ["a.txt"], reply
    assert (ws / "a.txt").read_bytes() == b"A\n"


def test_a_directory_someone_else_filled_stays_a_conflict(tmp_path: Path) -> None:
    """A file this server deleted whose name now holds a directory with a file the server
    did not make: the directory is someone else's, the path a conflict, nothing changes."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_bytes(b"A\n")
    with RpcServer(ws, "--history", str(tmp_path / "hist")) as server:
        cp = server.result("workspace.checkpoint", {})["checkpoint"]
        server.result("file.delete", {"path": "a.txt"})
        (ws / "a.txt").mkdir()
        (ws / "a.txt" / "theirs.txt").write_bytes(b"T\n")
        done = server.result("workspace.rewind", {"checkpoint": cp})
    assert done == {"restored": [], "deleted": [], "diff": "", "conflicts": ["a.txt"]}
    assert (ws / "a.txt" / "theirs.txt").read_bytes() == b"T\n"


def test_a_file_someone_else_put_at_a_deleted_directorys_name_is_a_conflict(
        tmp_path: Path) -> None:
    """The directory deleted by this server, its name taken by someone else's file: the
    rewind cannot put the directory's file back without removing theirs, so that file is
    a conflict and nothing changes."""
    ws = tmp_path / "ws"
    (ws / "d").mkdir(parents=True)
    (ws / "d" / "f.txt").write_bytes(b"F\n")
    with RpcServer(ws, "--history", str(tmp_path / "hist")) as server:
        cp = server.result("workspace.checkpoint", {})["checkpoint"]
        server.result("dir.delete", {"path": "d", "recursive": True})
        (ws / "d").write_bytes(b"theirs")
        done = server.result("workspace.rewind", {"checkpoint": cp})
    assert done == {"restored": [], "deleted": [], "diff": "", "conflicts": ["d/f.txt"]}
    assert (ws / "d").read_bytes() == b"theirs"
