"""The benchmark harness works: `python -m benchmarks --quick` prints the table and writes
the JSON with every scenario's row. No figure is asserted: timings here are noise."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import generate
from benchmarks.env import QUICK
from benchmarks.loadclient import ProtocolError, StdioServer
from benchmarks.report import Measure, Row, Target
from benchmarks.rss import PeakRss
from benchmarks.scale import PLANS, Series
from benchmarks.__main__ import SCENARIOS  # the table and the context rows

REPO = Path(__file__).resolve().parents[2]


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


@pytest.mark.long
def test_quick_run_prints_every_row_and_writes_json(tmp_path: Path) -> None:
    """Its inputs go to the cache it is given (outside the checkout), removed after."""
    out, cache = tmp_path / "bench.json", tmp_path / "cache"
    in_checkout = REPO / "benchmarks" / ".cache"
    before = in_checkout.exists()
    try:
        done = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--plot",
                               "--json", str(out), "--cache", str(cache)],
                              cwd=REPO, capture_output=True, text=True, timeout=900)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    assert done.returncode == 0, done.stderr
    assert in_checkout.exists() == before
    header = next(line for line in done.stdout.splitlines() if line.startswith("| scenario"))
    assert [c.strip() for c in header.strip("|").split("|")] == [
        "scenario", "ours", "baseline", "ratio", "target"]
    table_rows = [line for line in done.stdout.splitlines()
                  if line.startswith("| ") and not line.startswith("| scenario")]
    regular = [s for s in SCENARIOS if not s.long_run]  # the soak runs only when named
    assert len(table_rows) == len(regular)
    for scenario, line in zip(regular, table_rows):
        assert line.startswith(f"| {scenario.title.format(**QUICK.labels())}")
    assert "2k-file tree" in done.stdout and "20k-file" not in done.stdout

    document = json.loads(out.read_text())
    assert document["quick"] is True
    assert document["versions"]["reference"].startswith("@modelcontextprotocol/")
    assert [row["key"] for row in document["rows"]] == [s.key for s in regular]
    for row in document["rows"]:
        # every side has a figure or says why not; the baselines that are part of this
        # machine's toolbox (rg, grep, the Python floor) always measure
        assert (row["ours"] is None) == (row["ours_problem"] is not None), row
        if row["baseline_name"] != "—":
            assert (row["baseline"] is None) == (row["baseline_problem"] is not None), row
        if row["baseline_name"] in ("rg -n", "grep -rn", "rg --files -g '*.md'",
                                    "single-process Python floor"):
            assert row["baseline"] is not None, row
            assert row["baseline"]["value"] > 0
        if row["ours_problem"]:
            assert row["ours_problem"].startswith(("skipped: ", "failed: "))
        if row["baseline_problem"]:
            assert row["baseline_problem"].startswith(("skipped: ", "failed: "))

    # the scale series: every size measured (or why not), rg's always, and a slope line
    assert [one["key"] for one in document["series"]] == [p.key for p in PLANS]
    for one in document["series"]:
        assert len(one["rows"]) == len(one["sizes"]) >= 2
        assert one["sizes"] == sorted(one["sizes"])
        for row in one["rows"]:
            assert (row["ours"] is None) == (row["ours_problem"] is not None), row
            if row["baseline_name"].startswith("rg"):
                assert row["baseline"]["value"] > 0 and row["results_agree"], row
        assert f"- {one['title']} vs " in done.stdout
    assert done.stdout.count("; slope ") == len(PLANS)

    # --plot drew both pictures beside the JSON
    for name in ("table.svg", "scale.svg"):
        svg = (tmp_path / name).read_text()
        assert svg.lstrip().startswith("<?xml") and "<svg" in svg
        assert "CPUs" in svg  # the machine is noted on every picture


def test_generated_tree_is_a_function_of_its_seed(tmp_path: Path) -> None:
    first = generate.source_tree(tmp_path / "a", files=60, seed=3, big_file_bytes=100_000)
    again = generate.source_tree(tmp_path / "b", files=60, seed=3, big_file_bytes=100_000)
    other = generate.source_tree(tmp_path / "c", files=60, seed=4, big_file_bytes=100_000)
    assert _digest(first) == _digest(again) != _digest(other)
    assert (first / ".gitignore").read_text().startswith("node_modules/\n")
    assert len(list((first / "src").rglob("*.*"))) == 60
    assert any((first / "node_modules").rglob("*.*"))
    big = (first / "data" / "big_module.py").read_bytes()
    assert 90_000 < len(big) <= 100_000 and big.endswith(b"\n")


def test_rare_identifier_is_in_few_files_and_its_trigrams_nowhere_else(tmp_path: Path) -> None:
    """The selective search of the warm series needs a pattern in at most 1 % of the files
    whose trigrams the rest of the tree lacks (else no index could narrow it)."""
    root = generate.source_tree(tmp_path, files=1000, seed=5, big_file_bytes=0)
    texts = [p.read_text().lower() for p in (root / "src").rglob("*.*")]
    others = [t for t in texts if generate.RARE_IDENT not in t]
    assert 1 <= len(texts) - len(others) <= len(texts) // 100
    for gram in ("quo", "okk", "kka"):
        assert all(gram not in t for t in others), gram


def test_huge_file_is_real_text_not_sparse(tmp_path: Path) -> None:
    path = generate.huge_file(tmp_path, 3 * generate.MIB) / "huge.txt"
    data = path.read_bytes()
    assert len(data) > 2 * generate.MIB and b"\0" not in data and data.endswith(b"\n")
    assert path.stat().st_blocks * 512 >= len(data)


def test_floor_answers_every_pipelined_id_once(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\nb\n")
    argv = [sys.executable, "-m", "benchmarks.floor", "--workspace", str(tmp_path)]
    with StdioServer(argv, cwd=REPO) as server:
        result = server.request("file.read", {"path": "f.txt"})["result"]
        assert result["content"] == "     1\ta\n     2\tb"
        calls = lambda i: ("file.read", {"path": "f.txt"})  # noqa: E731
        assert server.throughput(calls, 200, in_flight=64).requests == 200
        with pytest.raises(ProtocolError, match="error response"):
            server.request("file.read", {"path": "missing.txt"})


def test_peak_rss_sums_the_process_tree() -> None:
    code = ("import subprocess,sys; "
            "subprocess.run([sys.executable,'-c','import time; time.sleep(1.5)'])")
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        with PeakRss(proc.pid) as peak:
            proc.wait()
    finally:
        proc.kill()
    assert peak.processes == 2
    assert peak.peak > 2_000_000


def test_ratio_and_target_status() -> None:
    row = Row("k", "s", "b", Target("≥", 2), Measure("throughput", 300.0),
              Measure("throughput", 100.0))
    assert row.ratio == 3.0 and row.status == "ok"
    slow = Row("k", "s", "b", Target("≤", 0.5), Measure("time", 0.2), Measure("time", 0.3))
    assert slow.status == "missed" and "✗ missed" in slow.cells()[-1]
    memory = Row("k", "s", "—", Target("≤", 100e6, absolute=True), Measure("memory", 60e6))
    assert memory.status == "ok" and memory.cells()[2] == "—"
    skipped = Row("k", "s", "b", Target("≥", 2), Measure("throughput", 1.0),
                  baseline_problem="skipped: node not found on PATH")
    assert skipped.ratio is None and skipped.status == "unknown"
    assert skipped.cells()[2] == "b: skipped: node not found on PATH"


def test_disagreeing_result_counts_are_flagged() -> None:
    row = Row("k", "s", "rg -n", Target("≤", 1.3), Measure("time", 0.2, {"results": 10}),
              Measure("time", 0.1, {"results": 12}))
    assert row.results_agree is False
    assert "results differ: 10 vs 12" in row.cells()[3]
    assert row.as_json()["results_agree"] is False


def _row(ratio: float) -> Row:
    return Row("k", "s", "rg", None, Measure("time", ratio), Measure("time", 1.0))


def test_series_slope_is_the_growth_of_the_ratio_with_size() -> None:
    flat = Series("k", "t", "files", [10, 100, 1000], [_row(1.2), _row(1.2), _row(1.2)])
    assert abs(flat.slope) < 1e-9
    doubling = Series("k", "t", "files", [10, 100, 1000], [_row(1), _row(2), _row(4)])
    assert abs(doubling.slope - 0.30103) < 1e-4  # log 2 / log 10
    one_point = Series("k", "t", "bytes", [1 << 20], [_row(2)])
    assert one_point.slope is None
    assert one_point.label(1 << 20) == "1 MB" and flat.label(20000) == "20k files"
