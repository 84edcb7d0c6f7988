"""A symlink replaced or removed is kept in the history as the link it was (its target),
so a rewind to a checkpoint taken before puts that link back (docs/protocol.md, History):
an archive import over stdio putting a link over a link, a link the import replaced that
someone else changed since (a conflict, left alone), file.delete and file.move of a link, and
file.restore of a link's version. Real symlinks, a real server over stdio (the HTTP
import: tests/e2e/test_e2e_archive.py)."""

from __future__ import annotations

import base64
import os
from pathlib import Path

from rpc_client import RpcServer
from tar_support import tar_of


def _import(server: RpcServer, path: str, body: bytes) -> dict[str, int]:
    uid = server.result("archive.import_begin", {"path": path})["upload_id"]
    server.result("file.upload_part", {"upload_id": uid, "offset": 0,
                                       "data": base64.b64encode(body).decode()})
    return server.result("archive.import_commit", {"upload_id": uid})


def test_a_link_an_import_put_over_a_link_is_put_back_by_a_rewind(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "d").mkdir(parents=True)
    (ws / "d" / "old.txt").write_text("old")
    (ws / "d" / "ln").symlink_to("old.txt")
    (ws / "d" / "other").symlink_to("old.txt")
    with RpcServer(ws) as server:
        mark = server.result("workspace.checkpoint", {})["checkpoint"]
        done = _import(server, "d", tar_of(links=[("ln", "new.txt"), ("other", "new.txt")]))
        assert done == {"created": 0, "replaced": 2, "bytes": 0}
        assert os.readlink(ws / "d" / "ln") == "new.txt"
        (ws / "d" / "other").unlink()  # someone else's link since: theirs to keep
        (ws / "d" / "other").symlink_to("theirs.txt")
        dry = server.result("workspace.rewind", {"checkpoint": mark, "dry_run": True})
        assert dry["restored"] == ["d/ln"] and dry["conflicts"] == ["d/other"]
        assert "-new.txt" in dry["diff"] and "+old.txt" in dry["diff"]
        assert os.readlink(ws / "d" / "ln") == "new.txt"  # a dry run changes nothing
        rewound = server.result("workspace.rewind", {"checkpoint": mark})
        assert rewound["restored"] == ["d/ln"] and rewound["conflicts"] == ["d/other"]
        assert os.readlink(ws / "d" / "ln") == "old.txt"
        assert (ws / "d" / "ln").read_text() == "old"
        assert os.readlink(ws / "d" / "other") == "theirs.txt"
        again = server.result("workspace.rewind", {"checkpoint": mark})
        assert again["restored"] == [] and os.readlink(ws / "d" / "ln") == "old.txt"


def _linked(tmp_path: Path, target: str, text: str) -> Path:
    """A workspace holding `target` and `ln`, a symlink to it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / target).write_text(text)
    (ws / "ln").symlink_to(target)
    return ws


def test_a_deleted_link_comes_back_by_rewind_and_by_restore(tmp_path: Path) -> None:
    ws = _linked(tmp_path, "target.txt", "kept as it is")
    with RpcServer(ws) as server:
        mark = server.result("workspace.checkpoint", {})["checkpoint"]
        server.result("file.delete", {"path": "ln"})
        assert not os.path.lexists(ws / "ln")
        versions = server.result("file.history", {"path": "ln"})["versions"]
        assert versions[0]["method"] == "file.delete" and versions[0]["exists"] is True
        server.result("workspace.rewind", {"checkpoint": mark})
        assert os.readlink(ws / "ln") == "target.txt"
        assert (ws / "target.txt").read_text() == "kept as it is"  # never written through
        (ws / "ln").unlink()
        (ws / "ln").write_text("a file now")
        before_restore = server.result("workspace.checkpoint", {})["checkpoint"]
        restored = server.result("file.restore", {"path": "ln",
                                                  "version": versions[0]["version"]})
        assert restored["success"] is True and os.readlink(ws / "ln") == "target.txt"
        assert (ws / "target.txt").read_text() == "kept as it is"
        # the file the restore replaced was kept in turn: a rewind puts it back over the link
        rewound = server.result("workspace.rewind", {"checkpoint": before_restore})
        assert rewound["restored"] == ["ln"] and rewound["conflicts"] == []
        assert not (ws / "ln").is_symlink() and (ws / "ln").read_text() == "a file now"
        assert (ws / "target.txt").read_text() == "kept as it is"


def test_a_moved_link_goes_back_by_rewind(tmp_path: Path) -> None:
    ws = _linked(tmp_path, "t.txt", "t")
    with RpcServer(ws) as server:
        mark = server.result("workspace.checkpoint", {})["checkpoint"]
        server.result("file.move", {"source": "ln", "destination": "moved"})
        assert os.readlink(ws / "moved") == "t.txt" and not os.path.lexists(ws / "ln")
        rewound = server.result("workspace.rewind", {"checkpoint": mark})
        assert rewound["restored"] == ["ln"] and rewound["deleted"] == ["moved"]
        assert os.readlink(ws / "ln") == "t.txt" and not os.path.lexists(ws / "moved")
