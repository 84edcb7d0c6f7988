"""The drain end to end (docs/protocol.md, Running many: Drain), with a real SIGTERM: the
request in flight finishes, a request read after the signal is answered shutting_down,
one still running at --shutdown-timeout is answered timeout, the server exits 0 and no
worker, warm or ripgrep process outlives it (checked in /proc)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from e2e_support import E2EServer, draining, error_of, slow_workspace
from rpc_client import alive, wait_gone


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return slow_workspace(tmp_path)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_finishes_in_flight_refuses_new_and_leaves_no_process(ws: Path,
                                                                     signum: int) -> None:
    """SIGINT (Ctrl-C in the terminal that started the server) drains as SIGTERM does.
    Regression: without --http it raised KeyboardInterrupt out of the event loop: a
    traceback, the request in flight never answered, and a process that never exited,
    its workers left running."""
    with E2EServer(ws, "--workers", "2", "--log-level", "info") as server:
        server.workers(2)
        server.request("file.read", {"path": "slow.txt", "limit": 1}, rid="slow")
        server.running(ws / "slow.txt")
        children = server.child_pids()
        server.proc.send_signal(signum)
        draining(server)
        # stdin is still read during the drain: each new request is refused at once
        server.request("file.read", {"path": "a.txt"}, rid="late")
        server.request("rpc.metrics", {}, rid="late-metrics")
        answers = {}
        for _ in range(3):
            reply = server.recv(timeout=60)
            answers[reply["id"]] = reply
        assert error_of(answers["late"]) == (-32027, "shutting_down")
        assert error_of(answers["late-metrics"]) == (-32027, "shutting_down")
        assert answers["slow"]["result"]["total_lines"] == 501
        with pytest.raises(EOFError):
            server.recv()
        assert server.proc.wait(15) == 0
    wait_gone(children)
    assert not [pid for pid in children if alive(pid)]
    assert b"Traceback" not in server.stderr


def test_a_request_still_running_at_the_shutdown_timeout_is_answered_timeout(
        ws: Path) -> None:
    with E2EServer(ws, "--workers", "1", "--shutdown-timeout", "0.5") as server:
        server.workers(1)
        server.request("file.read", {"path": "endless.txt", "limit": 1}, rid="endless")
        server.running(ws / "endless.txt")
        children = server.child_pids()
        server.proc.send_signal(signal.SIGTERM)
        reply = server.recv(timeout=30)
        assert reply["id"] == "endless" and error_of(reply)[1] == "timeout"
        assert server.proc.wait(15) == 0
    wait_gone(children)


def test_a_running_search_is_stopped_with_its_ripgrep_at_the_timeout(ws: Path) -> None:
    with E2EServer(ws, "--workers", "1", "--shutdown-timeout", "0.5",
                   "--search-engine", "ripgrep") as server:
        server.workers(1)
        server.request("file.search", {"pattern": "zzz-never", "path": "endless.txt"},
                       rid="search")
        searchers = server.searchers()
        children = server.child_pids()
        server.proc.send_signal(signal.SIGTERM)
        reply = server.recv(timeout=30)
        assert reply["id"] == "search" and error_of(reply)[1] == "timeout"
        assert server.proc.wait(15) == 0
    wait_gone([*children, *searchers])


def test_end_of_stdin_drains_too(ws: Path) -> None:
    with E2EServer(ws, "--workers", "2") as server:
        server.workers(2)
        server.request("file.read", {"path": "slow.txt", "limit": 1}, rid="slow")
        server.running(ws / "slow.txt")
        children = server.child_pids()
        assert server.proc.stdin is not None
        server.proc.stdin.close()
        reply = server.recv(timeout=60)
        assert reply["id"] == "slow" and reply["result"]["total_lines"] == 501
        assert server.proc.wait(15) == 0
    wait_gone(children)


@pytest.mark.long  # 2,000 writes and their rewind: ~20 s on 2 CPUs
def test_sigterm_during_a_2000_file_rewind_lets_it_complete(tmp_path: Path) -> None:
    """The rewind is one worker job: the drain waits for it past --shutdown-timeout (0.2 s
    here) rather than kill it, it is answered with its result, and the next start sees a
    consistent history (no journal left, the tree as at the checkpoint)."""
    root, hist = tmp_path / "ws", tmp_path / "history"
    root.mkdir()
    before = {f"d{i % 20}/f{i:04}.txt": f"before {i}\n" * 400 for i in range(2000)}
    for name, text in before.items():
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text(text)
    options = ("--history", str(hist), "--workers", "2", "--log-level", "info")
    with E2EServer(root, *options) as server:
        checkpoint = server.result("workspace.checkpoint", {})["checkpoint"]
        names = list(before)
        for at in range(0, len(names), 50):  # under --max-pending
            replies = server.call_many([("file.write", {"path": n, "content": f"after {n}\n"})
                                        for n in names[at:at + 50]])
            assert all("result" in r for r in replies), replies
        assert server.close() == 0
    with E2EServer(root, *options, "--shutdown-timeout", "0.2") as server:
        server.result("file.info", {"path": "d0/f0000.txt"})  # the workers are up
        server.request("workspace.rewind", {"checkpoint": checkpoint}, rid="rewind")
        end = time.monotonic() + 60
        while not any((root / n).read_text() == before[n] for n in list(before)[::50]):
            assert time.monotonic() < end, "the rewind never started"
        server.proc.send_signal(signal.SIGTERM)
        assert any((root / n).read_text() != before[n] for n in before), "SIGTERM too late"
        reply = server.recv(timeout=120)
        assert reply["id"] == "rewind" and "result" in reply, reply
        assert len(reply["result"]["restored"]) == 2000
        assert server.proc.wait(30) == 0
    assert {n: (root / n).read_text() for n in before} == before
    assert not (hist / "rewind.json").exists()
    with E2EServer(root, *options) as server:  # the next start: the history is whole
        versions = server.result("file.history", {"path": "d0/f0000.txt"})["versions"]
        assert [v["method"] for v in versions[:2]] == ["workspace.rewind", "file.write"]


def test_a_watch_asked_for_as_stdin_ends_leaves_no_watcher_keeping_the_server(
        tmp_path: Path) -> None:
    """The watch was still being made when the drain closed the watches: its watcher was
    forked after, and the server's exit waited on it for ever."""
    (tmp_path / "a.txt").write_text("a\n")
    with E2EServer(tmp_path) as server:
        server.request("workspace.watch", {}, rid="watch")
        assert server.proc.stdin is not None
        server.proc.stdin.close()
        reply = server.recv(timeout=30)
        assert reply["id"] == "watch"
        assert "watch_id" in reply.get("result", {}) or \
            error_of(reply) == (-32027, "shutting_down")
        children = server.child_pids()
        assert server.proc.wait(15) == 0
    wait_gone(children)
    assert not [pid for pid in children if alive(pid)]
