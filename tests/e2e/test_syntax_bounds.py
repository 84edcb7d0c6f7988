"""Regressions (issue 36, fault 7) over the real server: the syntax guard and the
indentation tier were unbounded on huge or junk files.

- A 50 MB one-line JS file made a looser-tier edit take 45-60 s, the server peaking at
  7-10 GiB and a worker keeping ~9.4 GiB for every later call (16 MiB here: 27 s, 1.4 GiB
  over idle, all of it kept). Now the guard parses at most --syntax-max-bytes (4 MiB):
  past it the edit is `file_too_large` saying so, memory stays within max(512 MiB, 30x
  the file) over idle and is given back when the call ends.
- 1 MiB of binary-looking text in a `.rs` file took tree-sitter's error recovery 36-60 s
  (the request timed out). Now a parse stops at --syntax-timeout (5 s): `timeout` saying so.

Memory is each server process's high-water mark (VmHWM, which no sampling can miss) over
what it held before the call, summed; time is measured against a generous bound.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest

from rpc_client import RpcServer

from benchmarks.rss import rss_bytes, tree_pids

MIB = 1 << 20
GUARD_BYTES = 4 * MIB  # --syntax-max-bytes' default
FUNCTION = "function g() {\n    if (x) {\n        return 1;\n    }\n}\n"
# find indented with tabs: only the indentation tier matches it, so the guard must judge
LOOSER = {"find": "\tif (x) {\n\t\treturn 1;\n", "replace": "\tif (x) {\n\t\treturn 2;\n"}


def _hwm(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _held(server: RpcServer) -> dict[int, int]:
    return {pid: rss_bytes(pid) for pid in tree_pids(server.proc.pid)}


def _peak_over(server: RpcServer, idle: dict[int, int]) -> int:
    """The most the server's processes can have held at once beyond `idle`: each one's
    high-water mark over what it held before (a process started since counts whole)."""
    return sum(max(_hwm(pid) - idle.get(pid, 0), 0) for pid in tree_pids(server.proc.pid))


def _timed_call(server: RpcServer, params: dict) -> tuple[dict, float]:
    started = time.monotonic()
    reply = server.call("file.patch", params, timeout=300)
    return reply, time.monotonic() - started


def _bound(size: int) -> int:
    return max(512 * MIB, 30 * size)


def test_regression_guard_unbounded_on_a_huge_one_line_js_file(tmp_path: Path) -> None:
    unit = "f(1234,'abcdef'),"
    text = "var a=[" + unit * (16 * MIB // len(unit)) + "0];\n" + FUNCTION
    f = tmp_path / "bundle.js"
    f.write_text(text)
    size = f.stat().st_size
    with RpcServer(tmp_path, "--workers", "1") as server:
        server.result("file.info", {"path": "bundle.js"})  # the pool and warm tree are up
        idle = _held(server)
        reply, took = _timed_call(server, {"path": "bundle.js", "patches": [LOOSER]})
        peak = _peak_over(server, idle)
        after = sum(_held(server).values()) - sum(idle.values())
    error = reply["error"]
    assert error["data"]["error"] == "file_too_large", error
    assert error["data"]["limit"] == GUARD_BYTES and error["data"]["size"] == size
    assert error["data"]["patch_index"] == 0 and error["data"]["tier"] == "indentation"
    assert "--syntax-max-bytes" in error["message"] and "exactly" in error["message"]
    assert f.read_text() == text
    assert peak <= _bound(size), (peak // MIB, size // MIB)
    assert after <= 64 * MIB, after // MIB  # given back once the call ended
    assert took < 60, took


@pytest.mark.long  # seconds of the default suite; CI runs it under -m long
def test_regression_guard_unbounded_on_binary_looking_rust(tmp_path: Path) -> None:
    rng = random.Random(7)
    junk = bytes(rng.randrange(1, 256) for _ in range(MIB))  # no NUL: text, in latin-1
    data = junk + b"\nfn g() {\n    if x {\n        return 1;\n    }\n}\n"
    f = tmp_path / "junk.rs"
    f.write_bytes(data)
    with RpcServer(tmp_path, "--workers", "1") as server:
        server.result("file.info", {"path": "junk.rs"})
        idle = _held(server)
        reply, took = _timed_call(server, {"path": "junk.rs", "patches": [
            {"find": "\tif x {\n\t\treturn 1;\n", "replace": "\tif x {\n\t\treturn 2;\n"}]})
        peak = _peak_over(server, idle)
    error = reply["error"]
    assert error["data"]["error"] == "timeout", error
    assert error["data"]["seconds"] == 5 and "--syntax-timeout" in error["message"]
    assert f.read_bytes() == data
    assert peak <= _bound(len(data)), peak // MIB
    assert took < 40, took  # the 5 s budget, not tree-sitter's minute


def test_the_bounds_are_options(tmp_path: Path) -> None:
    text = "def f():\n    if x:\n        return 1\n" + "# padding\n" * 200
    (tmp_path / "a.py").write_text(text)
    with RpcServer(tmp_path, "--syntax-max-bytes", "1000") as server:
        error = server.error("file.patch", {"path": "a.py", "patches": [
            {"find": "\tif x:\n\t\treturn 1\n", "replace": "\tif x:\n\t\treturn 2\n"}]})
    assert error["data"]["error"] == "file_too_large" and error["data"]["limit"] == 1000
    with RpcServer(tmp_path, "--syntax-gate", "off", "--syntax-max-bytes", "1000") as server:
        done = server.result("file.patch", {"path": "a.py", "patches": [
            {"find": "\tif x:\n\t\treturn 1\n", "replace": "\tif x:\n\t\treturn 2\n"}]})
    assert done["matches"][0]["tier"] == "indentation"
    assert os.path.getsize(tmp_path / "a.py") == len(text)
