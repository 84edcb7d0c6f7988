"""Regression: a request line of --log-requests for an id beyond 64 bits (2**70, which a
double holds exactly, so it is a valid id) or a string holding a lone surrogate (a
`\\ud800` escape, in the id or the path) failed in the log's encoder: instead of the line,
logging's own multi-line "--- Logging error ---" traceback went to stderr, in either
format, breaking `--log-format json`'s one object per line."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from rpc_client import RpcServer

BIG = 2 ** 70
LONE = "\ud800"


@pytest.mark.parametrize("log_format", ["json", "text"])
def test_request_lines_of_unencodable_ids_and_paths_are_written(tmp_path: Path,
                                                                log_format: str) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    with RpcServer(tmp_path, "--workers", "1", "--log-format", log_format,
                   "--log-requests") as server:
        for rid, path in ((BIG, "a.txt"), (LONE, "a.txt"), (7, LONE + "x")):
            server.send_raw(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "file.info",
                                        "params": {"path": path}}).encode() + b"\n")
            assert server.recv()["id"] == rid
        assert server.close() == 0
    time.sleep(0.1)
    assert b"Logging error" not in server.stderr, server.stderr.decode(errors="replace")
    if log_format == "text":
        assert server.stderr.count(b" request ") + server.stderr.count(b": request") >= 3
        return
    lines = [json.loads(line) for line in server.stderr.splitlines() if line.strip()]
    requests = [(e["id"], e["path"], e["outcome"]) for e in lines if e["event"] == "request"]
    assert requests == [(BIG, "a.txt", "ok"), (LONE, "a.txt", "ok"),
                        (7, LONE + "x", "invalid_params")]
