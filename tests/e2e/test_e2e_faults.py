"""Faults from outside, seen from the wire (issue 11): input nested deeper than any parser
goes, a bounded queue that counts every waiting request, a client that closes stdout
mid-answer, and a worker frozen in the kernel."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from e2e_support import (LINE, LSP, E2EServer, error_of, request, slow_workspace,
                         wait_for)
from rpc_client import REPO, alive, wait_gone

LSP_CANCEL = "$/cancelRequest"
DEPTH = 100_000


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return slow_workspace(tmp_path)


def _frame(body: bytes, framing: str) -> bytes:
    if framing == LSP:
        return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    return body + b"\n"


@pytest.mark.parametrize("framing", [LINE, LSP])
@pytest.mark.parametrize("nest", [b"[" * DEPTH, b'{"a":' * DEPTH,
                                  b"[" * DEPTH + b"]" * DEPTH],
                         ids=["open-arrays", "open-objects", "closed-arrays"])
def test_regression_deep_nesting_stopped_the_server(ws: Path, framing: str,
                                                    nest: bytes) -> None:
    """Regression: 100,000 `[` made orjson refuse and json.loads raise RecursionError in
    the read callback, and nothing after it was answered."""
    with E2EServer(ws, "--workers", "1") as server:
        after = json.dumps(request("file.read", {"path": "a.txt", "raw": True}, 7)).encode()
        server.send_raw(_frame(nest, framing) + _frame(after, framing))
        reply, got = server.recv_framed()
        assert got == framing and reply["id"] is None
        assert error_of(reply) == (-32700, "parse_error")
        reply, got = server.recv_framed()
        assert got == framing and reply["id"] == 7
        assert reply["result"]["content"] == "alpha\nbeta\n"
        assert server.proc.poll() is None


def test_regression_max_pending_ignored_jobs_in_a_busy_workers_batch(ws: Path) -> None:
    """Regression: with --max-pending 2 --workers 1, reads handed to the busy worker in one
    batch with the long one were not counted, so 3 were accepted instead of 2."""
    with E2EServer(ws, "--workers", "1", "--max-pending", "2") as server:
        server.request("file.read", {"path": "slow.txt", "limit": 1}, rid="first")
        server.running(ws / "slow.txt")
        server.request("file.read", {"path": "endless.txt"}, rid="long")
        server.request("file.read", {"path": "a.txt"}, rid="w1")
        assert server.recv(timeout=60)["id"] == "first"  # long and w1 go out as one batch
        server.running(ws / "endless.txt")
        server.request("file.read", {"path": "a.txt"}, rid="w2")
        server.request("file.info", {"path": "a.txt"}, rid="refused")
        reply = server.recv()
        assert reply["id"] == "refused" and error_of(reply) == (-32017, "server_busy")
        assert reply["error"]["data"]["pending"] == 2
        server.notify(LSP_CANCEL, {"id": "long"})
        replies = server.recv_by_id(3)
        assert error_of(replies["long"][0]) == (-32800, "cancelled")
        assert all(replies[rid][0]["result"]["total_lines"] == 2 for rid in ("w1", "w2"))


def test_stdout_closed_mid_answer_ends_the_server_cleanly(ws: Path) -> None:
    """The client closes its end of our stdout while answers are streaming (EPIPE): the
    server stops, its workers go with it, and stderr holds no traceback."""
    (ws / "big.txt").write_text(("x" * 60_000 + "\n") * 4)
    reads = b"".join(json.dumps(request("file.read", {"path": "big.txt", "raw": True}, i))
                     .encode() + b"\n" for i in range(100))
    proc = subprocess.Popen([sys.executable, "-m", "chorus_tools", "--workspace", str(ws),
                             "--workers", "2"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    try:
        proc.stdin.write(reads)  # stdin stays open: only the broken stdout ends it
        proc.stdin.flush()
        assert proc.stdout.read(1 << 16)  # answers are flowing
        workers = [int(p) for p in Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
                   .read_text().split()]
        proc.stdout.close()
        code = proc.wait(timeout=30)
        stderr = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    wait_gone(workers)
    assert code == 0
    assert b"Traceback" not in stderr and stderr.count(b"\n") <= 2, stderr


def test_a_worker_frozen_in_the_kernel_times_out_and_is_replaced(ws: Path) -> None:
    """A SIGSTOPped worker cannot answer: the request it got answers `timeout` after
    --request-timeout, the worker is killed and replaced, every other request is served."""
    with E2EServer(ws, "--workers", "2", "--request-timeout", "1") as server:
        server.result("file.info", {"path": "a.txt"})  # start-up is over
        frozen, other = server.workers(2)
        os.kill(frozen, signal.SIGSTOP)
        wait_for(lambda: Path(f"/proc/{frozen}/stat").read_text().rpartition(")")[2]
                 .split()[0] == "T")
        ids = [server.request("file.read", {"path": "a.txt"}, rid=f"r{i}")
               for i in range(20)]
        replies = server.recv_by_id(len(ids), timeout=60)
        assert sorted(replies) == sorted(ids)
        timed_out = [rid for rid, [r] in replies.items() if "error" in r]
        assert len(timed_out) == 1  # the one the frozen worker was given, and no other
        assert error_of(replies[timed_out[0]][0]) == (-32015, "timeout")
        assert all(r["result"]["total_lines"] == 2 for rid, [r] in replies.items()
                   if rid not in timed_out)
        after = server.workers(2)
        assert frozen not in after and other in after and not alive(frozen)
        assert server.result("file.read", {"path": "a.txt"})["total_lines"] == 2
