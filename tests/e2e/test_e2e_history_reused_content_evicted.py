"""The byte budget drops the oldest content first, judged by when a content was last
kept (docs/protocol.md, History: `--history-bytes`, oldest dropped first;
content-addressed, so an unchanged file costs nothing twice).

Bug: a content kept again (a file put back to an earlier state, then changed) stayed only
in the old pack that first held it, so the budget dropped it with that pack: the second
newest version of the file was evicted while an older one, of other content, was kept.
"""

from __future__ import annotations

from pathlib import Path

from rpc_client import RpcServer


def test_a_content_kept_again_outlives_older_content(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    x, y, z, w = ("x" * 3000, "y" * 3000, "z" * 3000, "w" * 3000)
    (ws / "a.txt").write_text(x)
    with RpcServer(ws, "--history", str(tmp_path / "hist"), "--history-bytes", "7K") as srv:
        for content in (y, x, z, w):  # keeps x, y, x again, then z
            srv.result("file.write", {"path": "a.txt", "content": content})
        versions = srv.result("file.history", {"path": "a.txt"})["versions"]
        assert [v["evicted"] for v in versions] == [False, False, True, False], versions
        second = versions[1]["version"]
        srv.result("file.restore", {"path": "a.txt", "version": second})
    assert (ws / "a.txt").read_text() == x
