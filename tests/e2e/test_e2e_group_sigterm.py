"""Regression: a SIGTERM sent to the server's whole process group (systemd's control
group, `timeout`, a shell's `kill %job`) killed its workers with it, so the request in
flight was cut (a read retried elsewhere, a change answered worker_crashed) instead of
finished by the drain (docs/protocol.md, Shutdown). The workers ignore SIGTERM: only the
server drains on it, and no child outlives it."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from e2e_support import E2EServer, slow_workspace
from rpc_client import alive, wait_gone


def test_a_sigterm_to_the_process_group_drains_with_the_workers_alive(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    slow_workspace(ws)
    with E2EServer(ws, "--workers", "2", "--log-level", "info",
                   preexec_fn=os.setsid) as server:
        workers = server.workers(2)
        server.request("file.read", {"path": "slow.txt", "limit": 1}, rid="slow")
        busy = server.running(ws / "slow.txt")
        os.killpg(server.proc.pid, signal.SIGTERM)
        reply = server.recv(timeout=60)
        assert reply["id"] == "slow" and reply["result"]["total_lines"] == 501
        with pytest.raises(EOFError):
            server.recv()
        assert server.proc.wait(15) == 0
    assert b"died" not in server.stderr, server.stderr  # the worker ran it to its end
    assert busy in workers
    wait_gone(workers)
    assert not [pid for pid in workers if alive(pid)]
