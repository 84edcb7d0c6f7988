"""Regression: chorus_bytes_read_total and chorus_bytes_written_total counted only
file.read and file.write, so the bytes an orchestrator moves in and out (file.read_bytes,
file.write_bytes, an upload in parts, PUT and GET /files, an archive import: the bulk of
a fleet's traffic) left them at 0 (docs/protocol.md, Running many: Metrics)."""

from __future__ import annotations

import base64
import io
import tarfile
from pathlib import Path
from typing import Any

import httpx

from http_server import HttpServer

TOKEN = "tok-bytes-moved"


def test_bytes_in_and_out_are_counted(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.bin").write_bytes(b"a" * 900)
    with HttpServer(root, "--workers", "1", token=TOKEN, tmp=tmp_path) as srv:
        auth = {"authorization": f"Bearer {TOKEN}"}

        def rpc(method: str, params: dict[str, Any]) -> Any:
            reply = httpx.post(srv.base + "/rpc", headers=auth, timeout=30, json={
                "jsonrpc": "2.0", "id": 1, "method": method, "params": params}).json()
            assert "result" in reply, reply
            return reply["result"]

        def moved() -> tuple[int, int]:
            figures = rpc("rpc.metrics", {})
            return figures["chorus_bytes_read_total"], figures["chorus_bytes_written_total"]

        assert moved() == (0, 0)
        rpc("file.write_bytes", {"path": "w.bin", "data": base64.b64encode(b"w" * 100).decode()})
        assert moved() == (0, 100)
        rpc("file.read_bytes", {"path": "a.bin", "offset": 100})
        assert moved() == (800, 100)
        upload = rpc("file.upload_begin", {"path": "u.bin"})["upload_id"]
        rpc("file.upload_part", {"upload_id": upload, "offset": 0,
                                 "data": base64.b64encode(b"u" * 7).decode()})
        rpc("file.upload_commit", {"upload_id": upload})
        assert moved() == (800, 107)
        put = httpx.put(srv.base + "/files/p.bin", content=b"p" * 1000, headers=auth,
                        timeout=30)
        assert put.status_code == 201
        assert moved() == (800, 1107)
        got = httpx.get(srv.base + "/files/a.bin", headers={**auth, "range": "bytes=0-99"},
                        timeout=30)
        assert got.status_code == 206 and got.content == b"a" * 100
        assert moved() == (900, 1107)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            info = tarfile.TarInfo("q.txt")
            info.size = 10
            tar.addfile(info, io.BytesIO(b"q" * 10))
        imported = httpx.put(srv.base + "/archive/imp", content=buf.getvalue(),
                             headers=auth, timeout=30)
        assert imported.json()["bytes"] == 10
        assert moved() == (900, 1117)
