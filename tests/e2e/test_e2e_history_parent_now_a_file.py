"""file.history of a file whose directory was deleted and whose directory's name now
holds a file (docs/protocol.md, History: a deleted file's last content is listed; a file
inside a deleted directory has entries of its own).

Bug: the history's path check opened each parent as a directory and only climbed past a
missing one: a file at the parent's name made `file.history` answer `not_a_directory`,
so the deleted file's content could not even be listed, let alone restored once the way
was clear.
"""

from __future__ import annotations

from pathlib import Path

from rpc_client import RpcServer, error_code


def test_a_deleted_file_under_a_name_now_a_file_keeps_its_history(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "d").mkdir(parents=True)
    (ws / "d" / "f.txt").write_bytes(b"F\n")
    with RpcServer(ws, "--history", str(tmp_path / "hist")) as server:
        server.result("dir.delete", {"path": "d", "recursive": True})
        server.result("file.write", {"path": "d", "content": "a file now"})
        listed = server.result("file.history", {"path": "d/f.txt"})
        assert [(v["method"], v["exists"], v["bytes"]) for v in listed["versions"]] == [
            ("dir.delete", True, 2)], listed
        version = listed["versions"][0]["version"]
        blocked = server.call("file.restore", {"path": "d/f.txt", "version": version})
        assert error_code(blocked) == "not_a_directory", blocked
        assert (ws / "d").read_bytes() == b"a file now"
        server.result("file.delete", {"path": "d"})
        server.result("file.restore", {"path": "d/f.txt", "version": version})
    assert (ws / "d" / "f.txt").read_bytes() == b"F\n"
