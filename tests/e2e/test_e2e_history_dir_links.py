"""A directory's symlinks to directories, and to outside the workspace, are kept like its
other entries when dir.delete removes the tree or file.move moves it (docs/protocol.md,
History: every mutation keeps what it replaced; a symlink is kept as its target's text).

Bug: the tree's snapshot took only the walk's non-directory names, and the walk counts a
symlink to a directory (a sibling folder, `/etc`) as a directory it never enters: those
links were neither kept nor listed, so `file.history` knew nothing of them, a rewind of
the delete lost them and a rewind of the move left them at the destination.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from rpc_client import RpcServer, snapshot

CHANGES = {
    "dir.delete": [("dir.delete", {"path": "d", "recursive": True})],
    "file.move": [("file.move", {"source": "d", "destination": "e"})],
}


def _tree(ws: Path) -> None:
    (ws / "d" / "sub").mkdir(parents=True)
    (ws / "d" / "sub" / "f.txt").write_bytes(b"f\n")
    os.symlink("sub", ws / "d" / "to_dir")
    os.symlink("/etc", ws / "d" / "to_outside")
    os.symlink("sub/f.txt", ws / "d" / "to_file")


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_trees_links_to_directories_are_kept_and_rewound(tmp_path: Path,
                                                           change: str) -> None:
    ws = tmp_path / "ws"
    _tree(ws)
    before = {k: v[0] for k, v in snapshot(ws).items()}
    with RpcServer(ws, "--history", str(tmp_path / "hist")) as server:
        cp = server.result("workspace.checkpoint", {})["checkpoint"]
        for method, params in CHANGES[change]:
            server.result(method, params)
        for link in ("d/to_dir", "d/to_outside"):
            [kept] = server.result("file.history", {"path": link})["versions"]
            assert (kept["method"], kept["exists"]) == (change, True), kept
        done = server.result("workspace.rewind", {"checkpoint": cp})
        assert done["conflicts"] == [], done
        assert {"d/to_dir", "d/to_outside"} <= set(done["restored"]), done
    after = {k: v[0] for k, v in snapshot(ws).items() if not k.startswith("e")}
    assert after == before
    left = {k: v[0] for k, v in snapshot(ws).items() if k.startswith("e/")}
    assert all(kind == ("dir", None) for kind in left.values()), left  # empty dirs stay
