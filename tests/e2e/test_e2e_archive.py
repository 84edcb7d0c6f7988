"""GET and PUT /archive/{dir} over real HTTP (docs/protocol.md, Bytes in and out): a tree
out as tar.gz and back in elsewhere, the same bytes and links; a hostile archive refused
with nothing left; an import recorded, kept in history and undone by a rewind."""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path

import httpx

from http_server import HttpServer


def _tree(root: Path) -> dict[str, object]:
    return {str(p.relative_to(root)): (os.readlink(p) if p.is_symlink() else
                                       "dir" if p.is_dir() else p.read_bytes())
            for p in sorted(root.rglob("*"))}


def test_a_tree_round_trips_and_an_import_is_recorded_and_rewound(tmp_path: Path) -> None:
    ws, records = tmp_path / "ws", tmp_path / "records"
    (ws / "src/pkg").mkdir(parents=True)
    records.mkdir()
    (ws / "src/pkg/mod.py").write_text("x = 1\n")
    (ws / "src/data.bin").write_bytes(os.urandom(300_000))
    (ws / "src/link").symlink_to("pkg/mod.py")
    (ws / "dst").mkdir()
    (ws / "dst/data.bin").write_bytes(b"older")
    with HttpServer(ws, "--records", str(records)) as server:
        rpc = server.base + "/rpc"
        mark = httpx.post(rpc, json={"jsonrpc": "2.0", "id": 1, "method":
                                     "workspace.checkpoint", "params": {}}).json()["result"]
        got = httpx.get(server.base + "/archive/src?format=tar.gz", timeout=60)
        assert got.status_code == 200 and got.headers["content-type"] == "application/gzip"
        put = httpx.put(server.base + "/archive/dst", content=got.content, timeout=60)
        assert put.status_code == 200, put.text
        assert put.json() == {"created": 2, "replaced": 1, "bytes": 300_006}
        assert _tree(ws / "dst") == _tree(ws / "src")
        plain = httpx.get(server.base + "/archive/src", timeout=60)
        names = tarfile.open(fileobj=io.BytesIO(plain.content)).getnames()
        assert sorted(names) == ["data.bin", "link", "pkg", "pkg/mod.py"]
        back = httpx.post(rpc, json={"jsonrpc": "2.0", "id": 2, "method": "workspace.rewind",
                                     "params": {"checkpoint": mark["checkpoint"]}}).json()
        assert "result" in back, back
        assert (ws / "dst/data.bin").read_bytes() == b"older"
        assert not (ws / "dst/pkg/mod.py").exists()
    lines = [json.loads(x) for x in (records / "records.jsonl").read_text().splitlines()]
    imported = next(x for x in lines if x["method"] == "archive.import")
    assert imported["path"] == "dst" and imported["outcome"] == "ok"
    assert imported["files"] == ["dst/data.bin", "dst/link", "dst/pkg/mod.py"]


def test_a_hostile_archive_over_http_lands_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name in ("ok.txt", "../../escaped.txt"):
            info = tarfile.TarInfo(name)
            info.size = 2
            tar.addfile(info, io.BytesIO(b"hi"))
    with HttpServer(ws) as server:
        put = httpx.put(server.base + "/archive/in", content=buf.getvalue())
        assert put.status_code == 400
        assert put.json()["error"] == "invalid_params" and "leave" in put.json()["message"]
        missing = httpx.get(server.base + "/archive/nope")
        assert missing.status_code == 404
    assert not (tmp_path / "escaped.txt").exists()
    assert [p.name for p in ws.rglob("*")] in ([], ["in"])
