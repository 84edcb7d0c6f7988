"""A worker's death fails only the request it was running (issue 14, docs/protocol.md, Errors
worker_crashed), over the real server: workers SIGKILLed at random points under pipelined
reads, and a mutation whose worker is killed half-way."""

from __future__ import annotations

import json
import os
import random
import signal
from pathlib import Path

import pytest

from e2e_support import E2EServer, error_of, request, wait_for
from rpc_client import alive

LOOPS = 50
READS = 400


def _kill_one_worker(server: E2EServer, rng: random.Random) -> int:
    victim = rng.choice(server.workers(2))
    os.kill(victim, signal.SIGKILL)
    return victim


@pytest.mark.long  # seconds of the default suite; CI runs it under -m long
def test_random_kills_fail_nothing_sent_after_them(tmp_path: Path) -> None:
    """50 times: 400 pipelined reads on 2 workers, one worker SIGKILLed after a random
    one of them was sent (often right after its batch went out). Every id is answered
    exactly once, at most one request fails per kill, and none sent after the kill.
    Regression: a read written to a worker already dead was failed as if it had run."""
    (tmp_path / "a.txt").write_text("alpha\nbeta\n")
    rng = random.Random(14)
    read = {"path": "a.txt", "raw": True}
    with E2EServer(tmp_path, "--workers", "2") as server:
        for loop in range(LOOPS):
            kill_after = rng.randrange(READS)
            idle_first = loop % 2  # half the kills find the workers idle, waiting for jobs
            ids = [f"{loop}-{i}" for i in range(READS)]
            replies: dict = {}
            for i, rid in enumerate(ids):
                server.send(request("file.read", read, rid))
                if i == kill_after:
                    if idle_first:
                        replies.update(server.recv_by_id(i + 1, timeout=60))
                    killed = _kill_one_worker(server, rng)
            replies.update(server.recv_by_id(READS - len(replies), timeout=60))
            assert sorted(replies) == sorted(ids) and all(len(r) == 1 for r in
                                                          replies.values())
            failed = [rid for rid, [r] in replies.items() if "result" not in r]
            assert len(failed) <= 1, (loop, failed)
            for rid in failed:
                assert int(rid.split("-")[1]) <= kill_after
                assert error_of(replies[rid][0]) == (-32016, "worker_crashed")
            assert all(r["result"]["content"] == "alpha\nbeta\n"
                       for rid, [r] in replies.items() if rid not in failed)
            assert killed not in server.workers(2)
        assert server.no_more(0.1)


def _cpu_seconds(pid: int) -> float:
    """User CPU time `pid` has used, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return int(fields[11]) / os.sysconf("SC_CLK_TCK")


def test_a_killed_mutation_is_never_applied_twice(tmp_path: Path) -> None:
    """A patch whose worker is SIGKILLed while it computes answers worker_crashed with
    started: true, is not run again (the file holds its change once at most, and keeps
    it), and its audit record says so."""
    ws, records = tmp_path / "ws", tmp_path / "records"
    ws.mkdir()
    target = ws / "big.txt"
    original = "".join(f"line {i}\n" for i in range(400_000)) + "END\n"
    target.write_text(original)
    patches = [{"find": "END", "replace": "+END"}] * 400  # each pass scans the whole file
    with E2EServer(ws, "--workers", "1", "--records", str(records)) as server:
        server.result("file.info", {"path": "big.txt"})  # warmed up: now it waits for jobs
        [worker] = server.workers(1)  # (asked after start-up, whose probes are children)
        idle = _cpu_seconds(worker)
        server.request("file.patch", {"path": "big.txt", "patches": patches}, rid="patch")
        wait_for(lambda: _cpu_seconds(worker) > idle + 0.2)  # deep in the patch by now
        os.kill(worker, signal.SIGKILL)
        reply = server.recv(timeout=60)
        assert reply["id"] == "patch", reply
        assert error_of(reply) == (-32016, "worker_crashed")
        assert reply["error"]["data"]["started"] is True
        [fresh] = server.workers(1)
        assert fresh != worker and not alive(worker)
        content = server.result("file.read", {"path": "big.txt", "raw": True,
                                              "offset": 400_001})["content"]
        assert content in ("END\n", "+" * 400 + "END\n")  # as it was, or patched once
        lines = [json.loads(line) for line in (records / "records.jsonl").read_text()
                 .splitlines()]
    assert [(r["id"], r["method"], r["outcome"]) for r in lines] == \
        [("patch", "file.patch", "worker_crashed")]
    assert target.read_text().endswith(content)
