"""Regressions (issue 22, faults 1 and 2) over the real server, on both engines.

1. A ripgrep search that failed was answered as an empty success: a PCRE2 pattern hitting
   its match limit on one file gave `{"matches": []}` while rg exited 2 and said why. Now
   that file is searched by the python engine and the reply says so in `fallback`; a file
   the python engine cannot finish either is `timeout` naming it. Never an empty success.
2. A ripgrep search of one long line with many matches grew the worker to ~260x the line
   (1 MB -> 249 MB), whatever max_results said: rg's JSON carries every submatch. The
   worker's peak RSS (VmHWM) must stay within 64 MiB + 4x the bytes returned.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rpc_client import RpcServer

PATTERN = "(?:(a+)+c|!)(?<!z)"  # PCRE2's match limit on a run of `a`, not regex's
MIB = 1 << 20


def _searched(root: Path, engine: str, params: dict, *args: str) -> dict:
    with RpcServer(root, "--search-engine", engine, *args) as server:
        return server.call("file.search", params, timeout=120)


@pytest.fixture
def limit_tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "x.txt").write_text("a" * 100 + "\nplain ! line\n")  # rg: match limit
    (root / "y.txt").write_text("another ! here\n")
    return root


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
def test_regression_failed_ripgrep_search_answered_as_empty_success(
        limit_tree: Path, engine: str) -> None:
    with RpcServer(limit_tree, "--search-engine", engine) as server:
        found = server.result("file.search", {"pattern": PATTERN})
        assert found["matches"] == [
            {"path": "x.txt", "line": 2, "content": "plain ! line"},
            {"path": "y.txt", "line": 1, "content": "another ! here"}]
        assert found["files_searched"] == 2
        counted = server.result("file.search", {"pattern": PATTERN, "output_mode": "count"})
        assert counted["counts"] == [{"path": "x.txt", "count": 1},
                                     {"path": "y.txt", "count": 1}]
        files = server.result("file.search", {"pattern": PATTERN,
                                              "output_mode": "files_with_matches"})
        assert files["files"] == ["x.txt", "y.txt"]
        first = server.result("file.search", {"pattern": PATTERN, "max_results": 1})
        assert first["matches"] == found["matches"][:1] and first["truncated"]
        one = server.result("file.search", {"pattern": PATTERN, "path": "x.txt"})
        assert one["matches"] == found["matches"][:1]
        for reply in (found, counted, files, first, one):
            if engine == "python":
                assert "fallback" not in reply
                continue
            assert reply["engine"] == "ripgrep"  # rg searched the rest
            assert reply["fallback"]["engine"] == "python"
            assert reply["fallback"]["files"] == 1
            [said] = reply["fallback"]["paths"]
            assert said["path"] == "x.txt" and "match limit" in said["reason"]


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
def test_regression_failed_ripgrep_search_too_costly_everywhere_is_timeout(
        tmp_path: Path, engine: str) -> None:
    """A run neither engine can finish in its budget is `timeout` naming the file."""
    (tmp_path / "x.txt").write_text("a" * 50_000 + "\nplain ! line\n")
    reply = _searched(tmp_path, engine, {"pattern": PATTERN},
                      "--search-file-timeout", "0.5")
    assert reply["error"]["data"]["error"] == "timeout", reply
    assert reply["error"]["data"]["path"] == "x.txt"


def _peak_mib(server: RpcServer) -> float:
    """The highest VmHWM among the server's children (its workers)."""
    peaks = []
    for pid in server.worker_pids():
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                peaks.append(int(line.split()[1]) / 1024)
    return max(peaks)


LONG_LINE = "a " * (MIB // 2) + "\n"  # 1 MB, half a million matches of `a`


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
@pytest.mark.parametrize("params", [
    {"pattern": "a"}, {"pattern": "a", "max_results": 1},
    {"pattern": "a", "output_mode": "count"},
    {"pattern": "a", "output_mode": "files_with_matches"},
    {"pattern": "a", "context_lines": 2}, {"pattern": "a", "multiline": True},
])
@pytest.mark.long  # seconds of the default suite; CI runs it under -m long
def test_regression_long_line_search_memory_follows_what_is_returned(
        tmp_path: Path, engine: str, params: dict) -> None:
    (tmp_path / "long.txt").write_text("before\n" + LONG_LINE + "after a\n")
    with RpcServer(tmp_path, "--workers", "1", "--search-engine", engine) as server:
        reply = server.call("file.search", params, timeout=120)
        returned = len(json.dumps(reply))
        peak = _peak_mib(server)
    assert "result" in reply, reply
    result = reply["result"]
    if params.get("output_mode") == "count":
        assert result["counts"] == [{"path": "long.txt", "count": 2}]
    elif params.get("output_mode") == "files_with_matches":
        assert result["files"] == ["long.txt"]
    else:
        first = result["matches"][0]
        assert first["line"] == 2 and (
            f"… [line truncated: showing 2000 of {len(LONG_LINE) - 1} characters]"
            in first["content"])
    assert peak <= 64 + 4 * returned / MIB, (peak, returned)


def test_regression_many_long_lines_memory_follows_what_is_returned(tmp_path: Path) -> None:
    """ripgrep: 120 lines of 600 kB, each a match under the size parsed whole; the
    lines the reply shows are kept as it shows them (cut), not whole."""
    line = "x" + "y" * 600_000 + "\n"
    (tmp_path / "wide.txt").write_text(line * 120)
    with RpcServer(tmp_path, "--workers", "1", "--search-engine", "ripgrep") as server:
        reply = server.call("file.search", {"pattern": "x", "max_results": 110},
                            timeout=120)
        returned = len(json.dumps(reply))
        peak = _peak_mib(server)
    assert len(reply["result"]["matches"]) == 110 and reply["result"]["truncated"]
    assert peak <= 64 + 4 * returned / MIB, (peak, returned)
