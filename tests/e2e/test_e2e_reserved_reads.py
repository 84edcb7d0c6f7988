"""Names beginning `.chorus-tmp-` are the runtime's (docs/protocol.md, Paths): an atomic
write's temp file, an upload's spool holding another client's bytes half uploaded. Writes
refused them; reads did not: file.read, file.info, file.read_bytes, a search or listing
rooted at one, an outline, GET /files and a tool set's Read all gave their content. Now
every path naming one, anywhere in it, is invalid_params, and nothing of it is shown."""

from __future__ import annotations

import base64
from pathlib import Path

import httpx

from http_server import HttpServer
from rpc_client import RpcServer

SECRET = "half of someone's upload\n"


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "d" / ".chorus-tmp-upload-0123").mkdir(parents=True)
    (ws / ".chorus-tmp-x").write_text(SECRET)
    (ws / "d" / ".chorus-tmp-upload-0123" / "data").write_text(SECRET)
    return ws


CALLS = [("file.read", {"path": ".chorus-tmp-x"}),
         ("file.info", {"path": "./.chorus-tmp-x"}),
         ("file.read_bytes", {"path": "d/.chorus-tmp-upload-0123/data"}),
         ("file.read", {"path": "d/.chorus-tmp-upload-0123/data"}),
         ("file.list", {"path": "d/.chorus-tmp-upload-0123"}),
         ("file.search", {"pattern": "upload", "path": ".chorus-tmp-x"}),
         ("code.outline", {"path": ".chorus-tmp-x"})]


def test_a_reserved_name_is_read_by_no_method(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    with RpcServer(ws) as server:
        for method, params in CALLS:
            refused = server.error(method, params)
            assert refused["data"]["error"] == "invalid_params", (method, refused)
            assert "upload" not in str(refused).replace("upload-0123", ""), refused
        found = server.result("file.search", {"pattern": "half of"})
        assert found["matches"] == []
    with RpcServer(ws, "--tools", "claude") as server:
        read = server.call("Read", {"file_path": ".chorus-tmp-x"})
        assert SECRET.strip() not in str(read), read


def test_get_files_of_a_reserved_name_is_refused(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    with HttpServer(ws) as server:
        got = httpx.get(f"{server.base}/files/d/.chorus-tmp-upload-0123/data")
        assert got.status_code == 400 and SECRET.encode() not in got.content, got.text
        assert got.json()["error"] == "invalid_params"
        ok = httpx.post(server.rpc, json={"jsonrpc": "2.0", "id": 1, "method":
                                          "file.write_bytes", "params": {
                                              "path": "fine.bin", "data":
                                              base64.b64encode(b"x").decode()}}).json()
        assert ok["result"]["created"] is True
