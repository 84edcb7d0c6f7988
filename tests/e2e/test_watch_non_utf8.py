"""A change to a file whose name is not UTF-8 ended every watch: watchfiles fails on an
event path it cannot decode, and its error stopped the watcher process (exit 1, "its
watches ended"), so the change was never reported and no later one either. The watch
goes on, and the change is reported under the name's `\\udcXX` escape (docs/protocol.md,
Paths), as file.list shows it."""

from __future__ import annotations

import os
from pathlib import Path

from test_watch import Watching, has


def test_a_non_utf8_name_changed_ended_every_watch(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "old.txt").write_text("old\n")
    with Watching(ws, "--workers", "1") as server:
        everything = server.watch()
        texts = server.watch(pattern="*.txt")
        (ws / os.fsdecode(b"bad\xff.txt")).write_text("x\n")
        server.changes_until(lambda seen: {(everything, "added", "bad\udcff.txt"),
                                           (texts, "added", "bad\udcff.txt")} <= set(seen))
        server.notes.clear()
        (ws / os.fsdecode(b"bad\xff.txt")).unlink()
        (ws / "after.txt").write_text("y\n")
        server.changes_until(has(("deleted", "bad\udcff.txt"), ("added", "after.txt")))
        assert "result" in server.rpc("workspace.watch", {})  # the watcher is still there
    assert b"watches ended" not in server.stderr and b"Traceback" not in server.stderr
