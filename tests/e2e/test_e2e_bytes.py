"""Bytes in and out over stdio (docs/protocol.md, Bytes in and out), as an orchestrator
moves them: write_bytes and read_bytes of a binary file, an upload in parts sent out of
order, every refusal a structured error that leaves the file as it was; records, history
and rewind keep an upload like any write; --read-only and --deny hold; the methods are no
MCP tools; a full disk mid-upload is write_failed ENOSPC with the old file intact."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path


from rpc_client import RpcServer, error_code

PNGISH = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 300


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_write_then_read_bytes_of_a_binary_file(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with RpcServer(ws) as server:
        out = server.result("file.write_bytes", {"path": "img/a.png", "data": b64(PNGISH),
                                                 "sha256": hashlib.sha256(PNGISH).hexdigest()})
        assert out["created"] and out["bytes_written"] == len(PNGISH)
        got, offset = b"", 0
        while True:
            part = server.result("file.read_bytes", {"path": "img/a.png", "offset": offset,
                                                     "length": 30000})
            got += base64.b64decode(part["data"])
            offset += part["length"]
            if part["eof"]:
                break
        assert got == PNGISH and part["version"] == out["version"]
        bad = server.error("file.write_bytes", {"path": "img/a.png", "data": "%%%"})
        assert bad["data"]["error"] == "invalid_params" and bad["data"]["param"] == "data"
    assert (ws / "img/a.png").read_bytes() == PNGISH


def test_an_upload_out_of_order_lands_whole_recorded_and_rewindable(tmp_path: Path) -> None:
    ws, records = tmp_path / "ws", tmp_path / "records"
    ws.mkdir()
    records.mkdir()
    (ws / "model.bin").write_bytes(b"old weights")
    blob = os.urandom(300_000)
    with RpcServer(ws, "--records", str(records)) as server:
        mark = server.result("workspace.checkpoint", {})["checkpoint"]
        uid = server.result("file.upload_begin", {
            "path": "model.bin", "size": len(blob),
            "sha256": hashlib.sha256(blob).hexdigest()})["upload_id"]
        for start in (200_000, 0, 100_000):
            server.result("file.upload_part", {"upload_id": uid, "offset": start,
                                               "data": b64(blob[start:start + 100_000])})
        assert (ws / "model.bin").read_bytes() == b"old weights"
        done = server.result("file.upload_commit", {"upload_id": uid})
        assert done["bytes_written"] == len(blob) and done["created"] is False
        assert (ws / "model.bin").read_bytes() == blob
        again = server.error("file.upload_commit", {"upload_id": uid})
        assert again["code"] == -32028 and again["data"]["error"] == "upload_not_found"
        versions = server.result("file.history", {"path": "model.bin"})["versions"]
        assert versions[0]["method"] == "file.upload_commit"
        assert versions[0]["sha256"] == hashlib.sha256(b"old weights").hexdigest()
        server.result("workspace.rewind", {"checkpoint": mark})
        assert (ws / "model.bin").read_bytes() == b"old weights"
    lines = [json.loads(line) for line in (records / "records.jsonl").read_text().splitlines()]
    commit = next(line for line in lines if line["method"] == "file.upload_commit")
    assert commit["path"] == "model.bin" and commit["outcome"] == "ok"
    assert commit["sha256_after"] == hashlib.sha256(blob).hexdigest()
    assert commit["bytes"] == len(blob)


def test_a_wrong_digest_and_missing_parts_are_verification_failed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.bin").write_bytes(b"intact")
    with RpcServer(ws) as server:
        uid = server.result("file.upload_begin", {"path": "f.bin", "size": 8,
                                                  "sha256": "0" * 64})["upload_id"]
        server.result("file.upload_part", {"upload_id": uid, "offset": 0, "data": b64(b"abcd")})
        hole = server.error("file.upload_commit", {"upload_id": uid})
        assert hole["code"] == -32029 and hole["data"]["missing"] == [[4, 8]]
        server.result("file.upload_part", {"upload_id": uid, "offset": 4, "data": b64(b"efgh")})
        wrong = server.error("file.upload_commit", {"upload_id": uid})
        assert wrong["data"]["error"] == "verification_failed"
        assert wrong["data"]["expected"] == {"sha256": "0" * 64}
        assert server.result("file.upload_abort", {"upload_id": uid}) == {"success": True}
        assert error_code(server.call("file.upload_part", {
            "upload_id": uid, "offset": 0, "data": b64(b"x")})) == "upload_not_found"
    assert (ws / "f.bin").read_bytes() == b"intact"
    assert [p.name for p in ws.iterdir()] == ["f.bin"]


def test_read_only_and_deny_hold_for_bytes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".env").write_bytes(b"SECRET=1")
    (ws / "a.bin").write_bytes(b"a")
    with RpcServer(ws, "--read-only", "--deny", "**/.env") as server:
        for method, params in [("file.write_bytes", {"path": "n.bin", "data": b64(b"x")}),
                               ("file.upload_begin", {"path": "n.bin"})]:
            assert error_code(server.call(method, params)) == "permission_denied"
        assert error_code(server.call("file.read_bytes", {"path": ".env"})) == \
            "permission_denied"
        assert base64.b64decode(server.result("file.read_bytes", {"path": "a.bin"})["data"]) \
            == b"a"
    with RpcServer(ws, "--deny", "**/*.pem") as server:
        assert error_code(server.call("file.upload_begin", {"path": "k.pem"})) == \
            "permission_denied"
        assert error_code(server.call("file.write_bytes", {"path": "d/k.pem",
                                                           "data": b64(b"x")})) == \
            "permission_denied"
    assert sorted(p.name for p in ws.iterdir()) == [".env", "a.bin"]


def test_bytes_methods_are_callable_but_no_mcp_tools(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with RpcServer(ws, "--tools", "claude") as server:
        server.result("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "t", "version": "1"}})
        names = {t["name"] for t in server.result("tools/list", {})["tools"]}
        assert not {n for n in names if "bytes" in n or "upload" in n}
        assert server.result("file.write_bytes", {"path": "x", "data": b64(b"1")})["created"]
    with RpcServer(ws) as server:
        server.result("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "t", "version": "1"}})
        listed = server.result("tools/list", {})["tools"]
        assert not [t for t in listed if "bytes" in t["name"] or "upload" in t["name"]]
        seen = [{k: t[k] for k in ("name", "description", "inputSchema")} for t in listed]
        assert len(json.dumps(seen, separators=(",", ":"))) < 10_000
        discovered = {m["name"] for m in server.result("rpc.discover", {})["methods"]}
        assert {"file.read_bytes", "file.write_bytes", "file.upload_begin",
                "file.upload_part", "file.upload_commit", "file.upload_abort"} <= discovered


def test_a_disk_that_fills_mid_upload_is_enospc_and_the_old_file_stays(small_fs: Path,
                                                                       tmp_path: Path) -> None:
    ws = small_fs / "ws"
    ws.mkdir()
    (ws / "f.bin").write_bytes(b"old content")
    part = os.urandom(800_000)
    with RpcServer(ws, "--history", str(tmp_path / "history")) as server:
        uid = server.result("file.upload_begin", {"path": "f.bin"})["upload_id"]
        server.result("file.upload_part", {"upload_id": uid, "offset": 0, "data": b64(part)})
        server.result("file.upload_part", {"upload_id": uid, "offset": 800_000,
                                           "data": b64(part)})
        full = server.error("file.upload_part", {"upload_id": uid, "offset": 1_600_000,
                                                 "data": b64(part)})
        assert full["data"]["error"] == "write_failed" and full["data"]["errno"] == "ENOSPC"
        big = server.error("file.write_bytes", {"path": "g.bin", "data": b64(part * 3)})
        assert big["data"]["error"] == "write_failed" and big["data"]["errno"] == "ENOSPC"
        server.result("file.upload_abort", {"upload_id": uid})
    assert (ws / "f.bin").read_bytes() == b"old content"
    assert sorted(p.name for p in ws.iterdir()) == ["f.bin"]


def test_mcp_file_read_of_a_pdf_is_an_embedded_resource(tmp_path: Path) -> None:
    import jsonschema
    ws = tmp_path / "ws"
    ws.mkdir()
    pdf = b"%PDF-1.7\n" + bytes(range(256)) * 10 + b"\n%%EOF\n"
    (ws / "report.pdf").write_bytes(pdf)
    (ws / "big.pdf").write_bytes(pdf * 10)
    with RpcServer(ws, "--max-image-bytes", "5000") as server:
        server.result("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "t", "version": "1"}})
        tools = {t["name"]: t for t in server.result("tools/list", {})["tools"]}
        out = server.result("tools/call", {"name": "file_read",
                                           "arguments": {"path": "report.pdf"}})
        assert out["isError"] is False
        block = out["content"][0]
        assert block["type"] == "resource"
        assert block["resource"]["mimeType"] == "application/pdf"
        assert block["resource"]["uri"].endswith("/report.pdf")
        assert base64.b64decode(block["resource"]["blob"]) == pdf
        jsonschema.validate(out["structuredContent"], tools["file_read"]["outputSchema"])
        over = server.result("tools/call", {"name": "file_read",
                                            "arguments": {"path": "big.pdf"}})
        assert over["isError"] and over["structuredContent"]["error"] == "file_too_large"
        assert (over["structuredContent"]["size"], over["structuredContent"]["limit"]) == \
            (len(pdf) * 10, 5000)
        plain = server.error("file.read", {"path": "report.pdf"})
        assert plain["data"]["error"] == "binary_file"
