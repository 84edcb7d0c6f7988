"""Calls pipelined after a checkpoint or a rewind (docs/protocol.md, Ordering; History).

Bug: a checkpoint and a rewind are changes of the whole workspace, and waited for every
earlier call, but later calls did not wait for them: a `file.read` sent right after a
`workspace.rewind` read the file as it was before the rewind, and a write sent right
after a `workspace.checkpoint` could be logged before the checkpoint, so rewinding to it
never undid that write.
"""

from __future__ import annotations

from pathlib import Path

from rpc_client import RpcServer

FILES = 60


def test_a_read_sent_after_a_rewind_reads_the_rewound_file(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("then\n")
    for i in range(FILES):  # a rewind with work to do, so the read would overtake it
        (ws / f"f{i}.txt").write_text("x\n")
    with RpcServer(ws, "--workers", "2", "--history", str(tmp_path / "hist")) as server:
        cp = server.result("workspace.checkpoint", {})["checkpoint"]
        for i in range(FILES):
            server.result("file.write", {"path": f"f{i}.txt", "content": "y" * 200_000})
        server.result("file.write", {"path": "a.txt", "content": "now\n"})
        rewind, read = server.call_many([
            ("workspace.rewind", {"checkpoint": cp}),
            ("file.read", {"path": "a.txt", "raw": True})])
        assert "a.txt" in rewind["result"]["restored"]
        assert read["result"]["content"] == "then\n"


def test_a_write_sent_after_a_checkpoint_is_undone_by_rewinding_to_it(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("v1\n")
    with RpcServer(ws, "--workers", "2", "--history", str(tmp_path / "hist")) as server:
        replies = server.call_many([
            ("file.write", {"path": "big.txt", "content": "y" * 20_000_000}),
            ("file.write", {"path": "a.txt", "content": "v2\n"}),
            ("workspace.checkpoint", {}),
            ("file.write", {"path": "a.txt", "content": "v3\n"}),
            ("file.write", {"path": "b.txt", "content": "made after\n"})])
        assert all("result" in r for r in replies), replies
        cp = replies[2]["result"]["checkpoint"]
        done = server.result("workspace.rewind", {"checkpoint": cp})
        assert done["restored"] == ["a.txt"] and done["deleted"] == ["b.txt"], done
    assert (ws / "a.txt").read_text() == "v2\n" and not (ws / "b.txt").exists()
    assert (ws / "big.txt").stat().st_size == 20_000_000
