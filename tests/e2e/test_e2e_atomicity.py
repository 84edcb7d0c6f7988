"""Crash atomicity over the real server: SIGKILL (of the server, or of the worker running
the write) in the middle of 8 MiB writes, many times.

What tools/mutate/atomic.py promises, and what is checked here after every kill:
- the target is always exactly one of the complete contents, never a mix or a prefix;
- a temporary file left behind has the recognisable hidden name (TEMP_PREFIX + 16 hex)
  and is never listed or searched;
- the next write into that directory removes it (under the directory lock), and the
  server's start-up sweep removes it without any write at all.
"""

from __future__ import annotations

import os
import random
import re
import signal
import time
from pathlib import Path

import pytest

from fuzzing import first_then_long
from rpc_client import RpcServer, error_code, wait_gone
from chorus_tools.tools.confine.reserved import TEMP_PREFIX

SIZE = 8 << 20
CONTENTS = ["A" * (SIZE - 2) + "A\n", "".join(f"{i:07d}\n" for i in range(SIZE // 8))]
TEMP_NAME = re.compile(re.escape(TEMP_PREFIX) + r"[0-9a-f]{16}")
ROUNDS = first_then_long([10, 30])  # kills per test: the default suite's, the long run's


def temps(directory: Path) -> list[str]:
    return sorted(n for n in os.listdir(directory) if n.startswith(TEMP_PREFIX))


def wait_for(predicate, limit: float = 20.0) -> bool:
    """Poll until `predicate()` (a hang guard, not a timing check)."""
    end = time.monotonic() + limit
    while not predicate():
        if time.monotonic() > end:
            return False
        time.sleep(0.001)
    return True


def assert_whole(target: Path) -> None:
    data = target.read_text()
    assert data in CONTENTS, f"torn file: {len(data)} bytes, starts {data[:20]!r}"


@pytest.mark.parametrize("rounds", ROUNDS)
def test_sigkill_server_mid_write_leaves_old_or_new(tmp_path: Path, rounds: int) -> None:
    ws = tmp_path / "ws"
    (ws / "d").mkdir(parents=True)
    target = ws / "d" / "big.txt"
    target.write_text(CONTENTS[0])
    rng = random.Random(1234)
    left_behind = 0
    for i in range(rounds):
        server = RpcServer(ws, "--workers", "1")
        try:
            server.result("file.info", {"path": "d/big.txt"})  # the pool is up
            workers = server.live_children()
            server.request("file.write", {"path": "d/big.txt", "content": CONTENTS[i % 2]})
            if i % 3:  # kill once the temp file exists (mid-write), unless already done
                wait_for(lambda: temps(ws / "d") or server.has_reply())  # noqa: B023 (now)
            else:
                time.sleep(rng.uniform(0, 0.05))
            server.proc.send_signal(signal.SIGKILL)
            server.proc.wait()
            wait_gone(workers)  # no worker may rename after we look
        finally:
            server.__exit__(None, None, None)
        assert_whole(target)
        stale = temps(ws / "d")
        assert all(TEMP_NAME.fullmatch(n) for n in stale), stale
        left_behind += bool(stale)
    assert left_behind > 0  # the kills did land mid-write
    with RpcServer(ws, "--workers", "1") as server:
        listed = server.result("file.list", {"path": "d", "include_hidden": True})
        assert [f["path"] for f in listed["files"]] == ["d/big.txt"]
        server.result("file.write", {"path": "d/other.txt", "content": "x"})
        assert temps(ws / "d") == []
        assert_whole(target)


def test_next_write_into_the_directory_removes_temp_files(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "d").mkdir(parents=True)
    with RpcServer(ws, "--workers", "1") as server:
        server.result("file.info", {"path": "d"})
        assert wait_for(lambda: len(server.live_children()) == 1)  # the sweep is done
        (ws / "d" / f"{TEMP_PREFIX}0123456789abcdef").write_text("left by a killed writer")
        (ws / "d" / f"{TEMP_PREFIX}not-ours").write_text("reserved, not ours: kept")
        found = server.result("file.search", {"pattern": "killed", "include_hidden": True})
        assert found["matches"] == []
        listed = server.result("file.list", {"path": "d", "include_hidden": True})
        assert listed["files"] == []  # every reserved name is hidden
        server.result("file.write", {"path": "d/new.txt", "content": "new"})
        assert temps(ws / "d") == [f"{TEMP_PREFIX}not-ours"]


def test_start_up_sweep_removes_temp_files_everywhere(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    deep = ws / "a" / "b" / "c"
    deep.mkdir(parents=True)
    stale = [ws / f"{TEMP_PREFIX}{'1' * 16}", deep / f"{TEMP_PREFIX}{'2' * 16}"]
    for path in stale:
        path.write_text("stale")
    outside = tmp_path / "outside"
    outside.mkdir()
    kept = outside / f"{TEMP_PREFIX}{'3' * 16}"
    kept.write_text("not in the workspace")
    os.symlink(outside, ws / "link")
    with RpcServer(ws, "--workers", "1"):
        assert wait_for(lambda: not any(p.exists() for p in stale))
    assert kept.exists()


@pytest.mark.parametrize("rounds", ROUNDS)
def test_sigkill_worker_mid_write_leaves_old_or_new(tmp_path: Path, rounds: int) -> None:
    ws = tmp_path / "ws"
    (ws / "d").mkdir(parents=True)
    target = ws / "d" / "big.txt"
    target.write_text(CONTENTS[0])
    with RpcServer(ws, "--workers", "1") as server:
        server.result("file.info", {"path": "d/big.txt"})
        crashed = 0
        for i in range(rounds):
            assert wait_for(lambda: len(server.live_children()) == 1)  # the sweep is done
            worker = server.live_children()[0]
            rid = server.request("file.write", {"path": "d/big.txt",
                                                "content": CONTENTS[(i + 1) % 2]})
            if i % 3:
                wait_for(lambda: temps(ws / "d") or server.has_reply())
            os.kill(worker, signal.SIGKILL)
            reply = server.recv(30)
            assert reply["id"] == rid
            assert error_code(reply) in (None, "worker_crashed"), reply
            crashed += error_code(reply) == "worker_crashed"
            wait_gone([worker])
            assert_whole(target)
            if error_code(reply) is None:
                assert target.read_text() == CONTENTS[(i + 1) % 2]
            server.result("file.write", {"path": "d/small.txt", "content": str(i)})
            assert temps(ws / "d") == []
        assert crashed > 0
