"""Regressions: chorus_workspace_bytes and chorus_workspace_files said 0 for a full
workspace. Under a quota the workspace was counted only when the first change or
workspace.status came, so the metrics of a server just started (or one that only reads)
said 0; it is counted as the server starts (docs/protocol.md, Quotas: a walk at start),
and a read of the figures made before that count ends waits for it. Without a quota they
said 0 for the server's life; a read of the metrics now counts them from the warm tree
(outside changes included)."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from http_server import HttpServer
from rpc_client import RpcServer

TOKEN = "tok-usage-at-start"


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "d").mkdir(parents=True)
    (root / "a.txt").write_bytes(b"a" * 300)
    (root / "d" / "b.bin").write_bytes(b"b" * 34)
    return root  # 334 bytes; a.txt, d, d/b.bin: 3 entries


def _sample(text: str, name: str) -> float:
    lines = [line for line in text.splitlines() if line.startswith(name + " ")]
    assert len(lines) == 1, text
    return float(lines[0].split()[1])


def test_rpc_metrics_first_thing_reports_the_usage_under_a_quota(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    for warm in ((), ("--index-memory", "0")):
        with RpcServer(root, "--quota-bytes", "1M", "--quota-files", "100", *warm) as srv:
            figures = srv.result("rpc.metrics", {})
            assert figures["chorus_workspace_bytes"] == 334, figures
            assert figures["chorus_workspace_files"] == 3, figures
            assert figures["chorus_quota_bytes"] == 1 << 20
            assert figures["chorus_quota_files"] == 100


def test_a_scrape_first_thing_reports_the_usage_under_a_quota(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    with HttpServer(root, "--quota-bytes", "1000", "--metrics-public", token=TOKEN,
                    tmp=tmp_path) as srv:
        text = httpx.get(srv.base + "/metrics", timeout=30).text
        assert _sample(text, "chorus_workspace_bytes") == 334
        assert _sample(text, "chorus_workspace_files") == 3
        assert _sample(text, "chorus_quota_bytes") == 1000


def test_without_a_quota_the_metrics_follow_the_workspace(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    with RpcServer(root) as srv:
        figures = srv.result("rpc.metrics", {})
        assert (figures["chorus_workspace_bytes"], figures["chorus_workspace_files"]) == (
            334, 3)
        assert figures["chorus_quota_bytes"] == figures["chorus_quota_files"] == 0
        srv.result("file.write", {"path": "d/n.txt", "content": "n" * 66})
        figures = srv.result("rpc.metrics", {})
        assert (figures["chorus_workspace_bytes"], figures["chorus_workspace_files"]) == (
            400, 4)
        (root / "outside.txt").write_bytes(b"o" * 600)  # by someone else: the warm tree
        end = time.monotonic() + 15  # sees it once its inotify event is read
        while (figures := srv.result("rpc.metrics", {}))["chorus_workspace_bytes"] != 1000:
            assert time.monotonic() < end, figures
            time.sleep(0.05)
        assert figures["chorus_workspace_files"] == 5
