"""Regression (issue 22, fault 6): a python-engine search's own parts counted against
--max-pending. With --workers 1 --max-pending 2 and such a search running, 0 of 30 reads
were accepted (docs/protocol.md, "Messages", back-pressure: 2 are; the parts of a running
split call never count), and a lone search over 3,000 files was itself answered
server_busy at --max-pending 2 even with 2 workers, so no retry could ever succeed."""

from __future__ import annotations

from pathlib import Path

from e2e_support import MIB, E2EServer, error_of, wait_for
from rpc_client import RpcServer

BIG_FILES = 48  # python engine, one worker: 3 parts of 16 files
BIG = 16 * MIB  # hard links of one file: seconds of searching, 16 MiB of disk


def _tree_open_in_a_worker(server: E2EServer, tree: Path) -> bool:
    """Whether a worker has a file of `tree` open: a part of the search is running."""
    prefix = f"{tree}/"
    for pid in server.worker_pids():
        try:
            fds = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                if str(fd.readlink()).startswith(prefix):
                    return True
            except OSError:
                pass
    return False


def test_regression_split_search_parts_counted_against_max_pending(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    first = tree / "f00.txt"
    first.write_bytes(b"the quick brown fox jumps over the lazy dog\n" * (BIG // 44))
    for i in range(1, BIG_FILES):
        (tree / f"f{i:02}.txt").hardlink_to(first)
    (tmp_path / "a.txt").write_text("alpha\n")
    with E2EServer(tmp_path, "--workers", "1", "--max-pending", "2",
                   "--search-engine", "python", "--search-file-timeout", "60") as server:
        search = server.request("file.search", {"pattern": "zebra", "path": "tree"})
        wait_for(lambda: _tree_open_in_a_worker(server, tree), guard=60)
        reads = [server.request("file.read", {"path": "a.txt"}) for _ in range(30)]
        replies = server.recv_by_id(31, timeout=120)
        answers = [replies[rid][0] for rid in reads]
        accepted = [r for r in answers if "result" in r]
        busy = [r for r in answers if "error" in r]
        assert len(accepted) == 2, [error_of(r) for r in busy][:3]
        assert all(error_of(r) == (-32017, "server_busy") for r in busy)
        assert all(r["error"]["data"]["pending"] == 2 for r in busy)
        found = replies[search][0]
        assert found["result"]["matches"] == [], found
        assert found["result"]["files_searched"] == BIG_FILES


def test_regression_lone_split_search_answered_server_busy(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    for i in range(3000):
        (tree / f"f{i:04}.txt").write_text(f"line {i}\n")
    with RpcServer(tmp_path, "--workers", "2", "--max-pending", "2",
                   "--search-engine", "python") as server:
        found = server.call("file.search", {"pattern": "line 2999$"}, timeout=120)
        assert "result" in found, found
        assert found["result"]["matches"] == [
            {"path": "tree/f2999.txt", "line": 1, "content": "line 2999"}]
        assert found["result"]["files_searched"] == 3000
