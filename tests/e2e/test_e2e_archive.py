"""GET and PUT /archive/{dir} over real HTTP (docs/protocol.md, Bytes in and out): a tree
taken out and put back byte for byte with its symlinks as links, every hostile archive
refused with nothing left in the workspace (no file, no directory, no spool), an import
recorded and undone by a rewind to a checkpoint taken before it."""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from http_server import HttpServer


def _tree(root: Path) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            p = Path(dirpath, name)
            found[str(p.relative_to(root))] = ("link", os.readlink(p)) if p.is_symlink() \
                else ("dir" if p.is_dir() else p.read_bytes())
    return found


def _tar(*members: tuple[str, bytes, bytes, str], gz: bool = True) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if gz else "w") as tar:
        for name, kind, data, link in members:
            info = tarfile.TarInfo(name)
            info.type, info.linkname, info.size = kind, link, len(data)
            tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
    return buf.getvalue()


def _rpc(server: HttpServer, method: str, params: dict[str, Any]) -> Any:
    reply = server.post("/rpc", {"jsonrpc": "2.0", "id": 1, "method": method,
                                 "params": params}).json()
    assert "result" in reply, reply
    return reply["result"]


def test_round_trip_same_bytes_symlinks_as_links(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "repo" / "src" / "pkg").mkdir(parents=True)
    (ws / "repo" / "src" / "pkg" / "mod.py").write_text("x = 1\n")
    (ws / "repo" / ".gitignore").write_text("build/\n")
    (ws / "repo" / "build").mkdir()
    (ws / "repo" / "build" / "out.o").write_bytes(b"\0" * 100)
    (ws / "repo" / "blob.bin").write_bytes(os.urandom(12 << 20))  # several chunks
    (ws / "repo" / "link").symlink_to("src/pkg/mod.py")
    with HttpServer(ws, token="t0ken", tmp=tmp_path) as server:
        auth = {"authorization": "Bearer t0ken"}
        got = httpx.get(server.base + "/archive/repo?format=tar.gz", headers=auth, timeout=60)
        assert got.status_code == 200 and got.headers["content-type"] == "application/gzip"
        with tarfile.open(fileobj=io.BytesIO(got.content)) as tar:
            assert "build/out.o" not in tar.getnames()
            assert tar.getmember("link").issym()
        plain = httpx.get(server.base + "/archive/repo?format=tar&include_ignored=true",
                          headers=auth, timeout=60)
        assert "build/out.o" in tarfile.open(fileobj=io.BytesIO(plain.content)).getnames()
        put = httpx.put(server.base + "/archive/copy", content=got.content, headers=auth,
                        timeout=60)
        assert put.status_code == 200, put.text
        assert put.json() == {"created": 4, "replaced": 0, "bytes": 6 + 7 + (12 << 20)}
        assert httpx.get(server.base + "/archive/repo").status_code == 401
        missing = httpx.get(server.base + "/archive/nope", headers=auth)
        assert missing.status_code == 404 and missing.json()["error"] == "file_not_found"
    expected = {k: v for k, v in _tree(ws / "repo").items() if not k.startswith("build")}
    assert _tree(ws / "copy") == expected


ATTACKS = {
    "dotdot": _tar(("ok", tarfile.REGTYPE, b"ok", ""), ("../x", tarfile.REGTYPE, b"x", "")),
    "nested dotdot": _tar(("a/../../x", tarfile.REGTYPE, b"x", "")),
    "absolute": _tar(("/etc/x", tarfile.REGTYPE, b"x", "")),
    "symlink out": _tar(("l", tarfile.SYMTYPE, b"", "../../etc")),
    "file through symlink": _tar(("l", tarfile.SYMTYPE, b"", "."),
                                 ("l/x", tarfile.REGTYPE, b"x", "")),
    "hard link out": _tar(("h", tarfile.LNKTYPE, b"", "/etc/passwd")),
    "fifo": _tar(("p", tarfile.FIFOTYPE, b"", "")),
    "device": _tar(("d", tarfile.CHRTYPE, b"", "")),
    "reserved": _tar((".chorus-tmp-0123456789abcdef", tarfile.REGTYPE, b"x", "")),
    "truncated": _tar(("a", tarfile.REGTYPE, os.urandom(50_000), ""))[:20_000],
    "not an archive": b"hello" * 1000,
}


def test_every_attack_refused_with_nothing_left(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "dest").mkdir(parents=True)
    (ws / "dest" / "keep").write_text("keep")
    before = _tree(ws)
    with HttpServer(ws, "--max-archive-bytes", "1M", "--max-archive-entries", "50") as server:
        for name, body in ATTACKS.items():
            reply = httpx.put(server.base + "/archive/dest", content=body, timeout=60)
            assert reply.status_code == 400, (name, reply.text)
            assert reply.json()["error"] == "invalid_params", name
            assert _tree(ws) == before, name
        bomb = _tar(("zeros", tarfile.REGTYPE, bytes(2 << 20), ""))
        big = httpx.put(server.base + "/archive/dest", content=bomb, timeout=60)
        assert big.status_code == 413 and big.json()["limit"] == 1 << 20
        many = _tar(*((f"e{i}", tarfile.REGTYPE, b"", "") for i in range(51)))
        assert httpx.put(server.base + "/archive/dest", content=many).status_code == 413
        assert _tree(ws) == before


def test_import_recorded_and_undone_by_rewind(tmp_path: Path) -> None:
    ws, records = tmp_path / "ws", tmp_path / "records"
    (ws / "dest").mkdir(parents=True)
    records.mkdir()
    (ws / "dest" / "old.txt").write_text("old")
    (ws / "dest" / "oldln").symlink_to("old.txt")
    with HttpServer(ws, "--records", str(records)) as server:
        mark = _rpc(server, "workspace.checkpoint", {})["checkpoint"]
        body = _tar(("old.txt", tarfile.REGTYPE, b"replaced", ""),
                    ("new/a.txt", tarfile.REGTYPE, b"created", ""),
                    ("new/ln", tarfile.SYMTYPE, b"", "a.txt"),
                    ("oldln", tarfile.SYMTYPE, b"", "new/a.txt"), gz=False)
        put = httpx.put(server.base + "/archive/dest", content=body, timeout=60)
        assert put.json() == {"created": 2, "replaced": 2, "bytes": 15}
        assert (ws / "dest" / "old.txt").read_text() == "replaced"
        rewound = _rpc(server, "workspace.rewind", {"checkpoint": mark})
        assert rewound["conflicts"] == [] and "dest/new/ln" in rewound["deleted"]
        assert (ws / "dest" / "old.txt").read_text() == "old"
        assert not (ws / "dest" / "new" / "a.txt").exists()
        assert not (ws / "dest" / "new" / "ln").is_symlink()  # a link it made: removed
        # a link it put over an older link: the older link back (its target was kept)
        assert "dest/oldln" in rewound["restored"]
        assert os.readlink(ws / "dest" / "oldln") == "old.txt"
    lines = [json.loads(x) for x in (records / "records.jsonl").read_text().splitlines()]
    commits = [x for x in lines if x["method"] == "archive.import_commit"]
    assert sorted(x["path"] for x in commits) == ["dest/new/a.txt", "dest/new/ln",
                                                  "dest/old.txt", "dest/oldln"]
    assert {x["outcome"] for x in commits} == {"ok"}


@pytest.mark.parametrize("option", ["--read-only"])
def test_read_only_exports_and_refuses_imports(tmp_path: Path, option: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a")
    with HttpServer(ws, option) as server:
        got = httpx.get(server.base + "/archive/?format=tar")
        assert tarfile.open(fileobj=io.BytesIO(got.content)).getnames() == ["a.txt"]
        put = httpx.put(server.base + "/archive/", content=got.content)
        assert put.status_code == 403 and put.json()["error"] == "permission_denied"
    assert _tree(ws) == {"a.txt": b"a"}
