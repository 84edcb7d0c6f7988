"""The worker pool seen from the wire (docs/protocol.md, Messages and Errors): server_busy
past --max-pending, timeout past --request-timeout, worker_crashed for the request whose
worker died, and a pool that replaces what it lost while every other request goes on."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from e2e_support import E2EServer, error_of, slow_workspace, wait_for
from rpc_client import alive

LSP_CANCEL = "$/cancelRequest"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return slow_workspace(tmp_path)


def test_server_busy_past_max_pending(ws: Path) -> None:
    with E2EServer(ws, "--workers", "1", "--max-pending", "1") as server:
        server.request("file.read", {"path": "endless.txt"}, rid="running")
        server.running(ws / "endless.txt")
        server.request("file.read", {"path": "a.txt"}, rid="waiting")
        server.request("file.info", {"path": "a.txt"}, rid="refused")
        reply = server.recv()
        assert reply["id"] == "refused" and error_of(reply) == (-32017, "server_busy")
        assert reply["error"]["data"]["limit"] == 1
        server.notify(LSP_CANCEL, {"id": "running"})
        replies = server.recv_by_id(2)
        assert error_of(replies["running"][0]) == (-32800, "cancelled")
        assert replies["waiting"][0]["result"]["total_lines"] == 2


def test_timeout_stops_the_request_and_the_server_goes_on(ws: Path) -> None:
    with E2EServer(ws, "--workers", "2", "--request-timeout", "0.5") as server:
        server.request("file.read", {"path": "endless.txt"}, rid="long")
        reply = server.recv()
        assert reply["id"] == "long" and error_of(reply) == (-32015, "timeout")
        assert "0.5" in reply["error"]["message"]
        assert server.result("file.read", {"path": "a.txt"})["total_lines"] == 2
        server.workers(2)  # the overrunning worker was replaced
        assert server.result("file.info", {"path": "a.txt"})["size"] == 11


@pytest.mark.parametrize("workers", [1, 2])
def test_killed_worker_fails_only_its_own_request(ws: Path, workers: int) -> None:
    with E2EServer(ws, "--workers", str(workers)) as server:
        before = server.workers(workers)
        server.request("file.read", {"path": "endless.txt"}, rid="victim")
        victim = server.running(ws / "endless.txt")
        if workers == 2:  # the other worker is busy too, and must finish its read
            server.request("file.read", {"path": "slow.txt", "limit": 1}, rid="slow")
            assert server.running(ws / "slow.txt") != victim
        queued = [server.request("file.read", {"path": "a.txt"}) for _ in range(3)]
        os.kill(victim, signal.SIGKILL)
        retry = running_elsewhere(server, ws / "endless.txt", victim)  # a read: tried again
        os.kill(retry, signal.SIGKILL)
        replies = server.recv_by_id(len(queued) + workers, timeout=120)
        [crashed] = replies.pop("victim")
        assert error_of(crashed) == (-32016, "worker_crashed")
        assert crashed["error"]["data"]["started"] is True
        if workers == 2:
            assert replies.pop("slow")[0]["result"]["total_lines"] == 501
        assert sorted(replies) == sorted(queued)
        assert all(r["result"]["total_lines"] == 2 for [r] in replies.values())
        after = server.workers(workers)
        assert {victim, retry}.isdisjoint(after) and set(after) - set(before)
        assert server.result("file.read", {"path": "a.txt", "raw": True})["content"] == \
            "alpha\nbeta\n"


def running_elsewhere(server: E2EServer, path: Path, dead: int) -> int:
    """The pid of a worker other than `dead` that has `path` open (the retry of a read
    whose worker died)."""
    found: list[int] = []

    def other() -> bool:
        found[:] = [server.running(path)]
        return found[0] != dead and alive(found[0])
    wait_for(other)
    return found[0]


def test_pool_size_follows_workers_and_defaults_to_the_cpus(ws: Path) -> None:
    with E2EServer(ws, "--workers", "3") as server:
        assert len(server.workers(3)) == 3
    with E2EServer(ws) as server:
        assert len(server.workers(os.cpu_count())) == os.cpu_count()
