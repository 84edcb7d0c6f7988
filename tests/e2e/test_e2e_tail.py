"""file.read with a negative offset over the wire (docs/protocol.md, `file.read`): the last
lines of a 2 GB file of real lines, found from the end. What the workers read is counted in
/proc/<pid>/io (rchar: bytes their read syscalls returned), not timed: the first tail reads
the file once (the line count) and not twice; a repeat on the unchanged file, by whichever
worker, reads only its window, because the count is remembered per version and shared."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks import generate
from e2e_support import E2EServer

REPO = Path(__file__).resolve().parents[2]
WINDOW_READS = 4 << 20  # a tail's window and its search from the end read far less


@pytest.fixture(scope="module")
def huge() -> Path:
    """The benchmark's cached 2 GB file: written once per checkout, in seconds."""
    return generate.huge_file(REPO / "benchmarks/.cache", 2048 * generate.MIB)


def _rchar(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        for line in Path(f"/proc/{pid}/io").read_text().splitlines():
            if line.startswith("rchar:"):
                total += int(line.split()[1])
    return total


def _last_lines(path: Path, count: int) -> list[bytes]:
    with open(path, "rb") as f:
        f.seek(-64 * count - 4096, os.SEEK_END)
        return f.read().split(b"\n")[-count - 1:-1]


@pytest.mark.long  # it reads 2 GB once: seconds of the default suite's five minutes
def test_tail_of_2gb_reads_it_once_and_a_repeat_reads_only_the_window(huge: Path) -> None:
    path = huge / "huge.txt"
    size = path.stat().st_size
    expected = [line.decode() for line in _last_lines(path, 20)]
    with E2EServer(huge, "--workers", "2") as server:
        workers = server.workers(2)
        before = _rchar(workers)
        first = server.result("file.read", {"path": "huge.txt", "offset": -20})
        counted = _rchar(workers) - before
        total = first["total_lines"]
        assert (first["start_line"], first["end_line"], first["truncated"]) == \
            (total - 19, total, False)
        assert first["content"] == "\n".join(
            f"{n:>6}\t{line}" for n, line in enumerate(expected, total - 19))
        assert size <= counted < 2 * size

        for _ in range(4):  # the pool may give any of these to either worker
            before = _rchar(workers)
            again = server.result("file.read", {"path": "huge.txt", "offset": -20})
            assert again == first
            assert _rchar(workers) - before < WINDOW_READS

        before = _rchar(workers)
        head = server.result("file.read", {"path": "huge.txt", "limit": 3})
        assert (head["total_lines"], head["end_line"]) == (total, 3)
        assert _rchar(workers) - before < WINDOW_READS


def test_zero_offset_is_refused_by_the_schema(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    with E2EServer(tmp_path, "--workers", "1") as server:
        error = server.error("file.read", {"path": "a.txt", "offset": 0})
        assert error["data"]["error"] == "invalid_params"
        assert error["data"]["param"] == "offset"
        assert "negative counts from the end" in error["message"]
        document = server.result("rpc.discover")
        read = next(m for m in document["methods"] if m["name"] == "file.read")
        offset = next(p for p in read["params"] if p["name"] == "offset")
        assert offset["schema"]["not"] == {"const": 0} and offset["schema"]["default"] == 1
