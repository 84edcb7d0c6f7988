"""The drain end to end (docs/protocol.md, Running many: Drain), with a real SIGTERM: the
request in flight finishes, a request read after the signal is answered shutting_down,
one still running at --shutdown-timeout is answered timeout, the server exits 0 and no
worker, warm or ripgrep process outlives it (checked in /proc)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from e2e_support import ENDLESS_SIZE, SLOW_SIZE, E2EServer, error_of, sparse_text
from rpc_client import alive, wait_gone


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("alpha\nbeta\n")
    sparse_text(tmp_path / "slow.txt", SLOW_SIZE)
    sparse_text(tmp_path / "endless.txt", ENDLESS_SIZE)
    return tmp_path


def test_sigterm_finishes_in_flight_refuses_new_and_leaves_no_process(ws: Path) -> None:
    with E2EServer(ws, "--workers", "2", "--log-level", "info") as server:
        server.workers(2)
        server.request("file.read", {"path": "slow.txt", "limit": 1}, rid="slow")
        server.running(ws / "slow.txt")
        children = server.child_pids()
        server.proc.send_signal(signal.SIGTERM)
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


def draining(server: E2EServer, guard: float = 15.0) -> None:
    """Wait for the server's "draining" line: the signal has been handled."""
    end = time.monotonic() + guard
    while b"draining" not in server.stderr:
        assert time.monotonic() < end, server.stderr
        time.sleep(0.01)


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
