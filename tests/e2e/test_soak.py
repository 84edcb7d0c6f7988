"""A short soak (issue 11; the full one is `python -m benchmarks --only soak`): mixed
requests at 64 in flight with a worker SIGKILLed every 500, over the real server."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from benchmarks.soak import SoakClient, prepare
from rpc_client import REPO

REQUESTS = 3_000
KILL_EVERY = 500


@pytest.mark.long  # thousands of requests and kills: ~3 s
def test_short_soak_answers_every_id_once_and_leaks_nothing(tmp_path: Path) -> None:
    prepare(tmp_path)
    argv = [sys.executable, "-m", "chorus_tools", "--workspace", str(tmp_path),
            "--workers", "2"]
    with SoakClient(argv, cwd=REPO) as client:  # raises on a missing, doubled or wrong answer
        result = client.run(REQUESTS, KILL_EVERY, random.Random(7))
    assert result.requests == REQUESTS and result.kills == REQUESTS // KILL_EVERY
    assert result.crashed <= result.kills  # a kill fails at most the mutation it ran
    # no leak: back where it started, and so at most samples (a sample taken while a killed
    # worker is being replaced sees the new worker's pipes open beside the old ones)
    assert result.fds_end == result.fds_start
    fds = sorted(s.server_fds for s in result.samples)
    assert fds[len(fds) // 2] == result.fds_start, fds
    assert result.zombies == 0
