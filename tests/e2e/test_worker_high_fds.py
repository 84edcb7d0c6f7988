"""A server holding over a thousand descriptors when it forks its workers (many HTTP
connections, or a launcher that leaked its own): each worker's pipes are numbered past
1023, where select() refuses to go, and the workers must still serve."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

from rpc_client import REPO

PAST_SELECT = 1100  # FD_SETSIZE is 1024


def _hold_many_descriptors() -> None:
    """In the server's process before exec: inheritable descriptors up to PAST_SELECT."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 4 * PAST_SELECT:
        resource.setrlimit(resource.RLIMIT_NOFILE, (4 * PAST_SELECT, max(hard, 4 * PAST_SELECT)))
    while True:
        fd = os.open(os.devnull, os.O_RDONLY)
        os.set_inheritable(fd, True)
        if fd >= PAST_SELECT:
            return


def test_regression_workers_died_at_start_with_descriptors_past_1023(tmp_path: Path) -> None:
    """Regression: the worker's warm-up waited on its jobs pipe with select.select, which
    raises for a descriptor of 1024 or more: every worker died at start, and each request
    was answered worker_crashed ('No worker could start')."""
    (tmp_path / "a.txt").write_text("alpha\n")
    calls = [("file.read", {"path": "a.txt", "raw": True}),
             ("file.write", {"path": "b.txt", "content": "beta\n"}),
             ("file.search", {"pattern": "alpha"})]
    sent = b"".join(json.dumps({"jsonrpc": "2.0", "id": i, "method": m, "params": p}).encode()
                    + b"\n" for i, (m, p) in enumerate(calls))
    done = subprocess.run([sys.executable, "-m", "chorus_tools", "--workspace", str(tmp_path),
                           "--workers", "1", "--allow-root"], input=sent, capture_output=True,
                          cwd=REPO, preexec_fn=_hold_many_descriptors, close_fds=False,
                          timeout=120)
    replies = {r["id"]: r for r in map(json.loads, done.stdout.splitlines())}
    assert all("result" in replies[i] for i in range(len(calls))), done.stderr.decode()[-2000:]
    assert replies[0]["result"]["content"] == "alpha\n"
    assert (tmp_path / "b.txt").read_text() == "beta\n"
    assert replies[2]["result"]["matches"][0]["path"] == "a.txt"
    assert b"out of range in select" not in done.stderr
