"""`/files` against the floor under it (docs/benchmarks.md, Bytes in and out): the same
1 GiB PUT and GET as benchmarks/bytes_rows.py, and the same client, against a bare
loopback server that does only what any server must (benchmarks/bytes_floor.py: sendfile
out; recv_into, SHA-256, fsync and rename in). `cp` and `cat` move no byte through a
socket; these rows say how much of the gap to them is ours and how much is loopback TCP
and hashing, which every HTTP server on the machine pays."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from benchmarks.bytes_rows import _get, _put, _source, _timed, _workspace, get_ours, put_ours
from benchmarks.env import REPO, Env
from benchmarks.report import Measure, Target
from benchmarks.scenarios import Scenario


class _Floor:
    """benchmarks/bytes_floor.py serving `root`: its `address`, for _put and _get."""

    def __init__(self, root: Path) -> None:
        self._proc = subprocess.Popen([sys.executable, "-m", "benchmarks.bytes_floor",
                                       str(root)], cwd=REPO, stdout=subprocess.PIPE)
        assert self._proc.stdout is not None
        self.address = ("127.0.0.1", int(self._proc.stdout.readline()))

    def __enter__(self) -> _Floor:
        return self

    def __exit__(self, *_: object) -> None:
        self._proc.kill()
        self._proc.wait()


def put_floor(env: Env) -> Measure:
    source, workspace = _source(env), _workspace(env)
    try:
        with _Floor(workspace) as floor:
            return _timed(env, lambda: _put(floor, "put.bin", source))  # type: ignore[arg-type]
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


def get_floor(env: Env) -> Measure:
    source, workspace = _source(env), _workspace(env)
    os.link(source, workspace / "get.bin")
    try:
        with _Floor(workspace) as floor:
            return _timed(env, lambda: _get(floor, "get.bin"))  # type: ignore[arg-type]
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


SCENARIOS: list[Scenario] = [
    Scenario("put_files_floor", "PUT /files of a 1 GiB file (16 MiB --quick)",
             "a bare loopback server: recv_into, SHA-256, fsync, rename", Target("≤", 1.5),
             put_ours, put_floor),
    Scenario("get_files_floor", "GET /files of a 1 GiB file (16 MiB --quick)",
             "a bare loopback server: sendfile", Target("≤", 1.25), get_ours, get_floor),
]
