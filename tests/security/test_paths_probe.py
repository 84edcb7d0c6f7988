"""Findings of a second attacker's probe of docs/protocol.md's paths rules and the methods
that move, make and delete, each over the real server and named after the fault."""

from __future__ import annotations

from pathlib import Path

from rpc_client import RpcServer, error_code, snapshot

PATH_MAX = 4096  # the kernel's limit on one path, its final NUL included


def _deep(total: int) -> str:
    """A workspace-relative path of 200-byte names `total` bytes long, or just over."""
    return "/".join(["y" * 200] * (total // 201 + 1))


def test_write_made_a_file_past_path_max_that_no_method_could_name_again(root: Path) -> None:
    """file.write (and write_bytes, a move's destination) made the parents one name at a
    time and the file beside them, so a 4,220-byte path was written, where file.read,
    file.info, file.list and file.delete of the same path are invalid_params: the agent
    made a file it could never read or delete. Every method now refuses such a path
    before touching the disk; one just under the limit works both ways."""
    (root / "src.txt").write_text("s\n")
    long = _deep(PATH_MAX)
    assert len(long.encode()) >= PATH_MAX
    before = snapshot(root)
    with RpcServer(root, "--workers", "1") as server:
        refused = server.call_many([
            ("file.write", {"path": long, "content": "x\n"}),
            ("file.write_bytes", {"path": long, "data": "eA=="}),
            ("file.move", {"source": "src.txt", "destination": long}),
            ("file.move", {"source": long, "destination": "dst.txt"}),
            ("dir.create", {"path": long}),
            ("file.read", {"path": long}),
        ])
        assert snapshot(root) == before  # not one parent made
        fits = _deep(PATH_MAX - 300)
        made = server.call_many([("file.write", {"path": fits, "content": "x\n"}),
                                 ("file.read", {"path": fits}),
                                 ("file.delete", {"path": fits})])
    assert [error_code(r) for r in refused] == ["invalid_params"] * 6, refused
    assert [r["error"]["data"]["param"] for r in refused] == [
        "path", "path", "destination", "source", "path", "path"]
    assert all("too long" in r["error"]["message"] for r in refused)
    assert [error_code(r) for r in made] == [None] * 3, made
    assert made[1]["result"]["content"] == "     1\tx"
