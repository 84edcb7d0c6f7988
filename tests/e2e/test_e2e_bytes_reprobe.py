"""Regressions found probing docs/protocol.md's Bytes in and out a second time, over the
real server as a client would (JSON-RPC over pipes and HTTP): each test is named after
the bug it pins down, and failed before its fix."""

from __future__ import annotations

import base64
import io
import os
import signal
import socket
import tarfile
from pathlib import Path
from urllib.parse import quote, urlsplit

import httpx

from e2e_support import wait_for
from http_server import HttpServer
from rpc_client import RpcServer, error_code

BEYOND = 2 ** 100  # an offset no file can reach (past off_t), and a double holds it exactly


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_an_offset_past_any_files_end_was_an_internal_error(tmp_path: Path) -> None:
    """read_bytes at an offset of 10**30 and an upload part there answered internal_error
    (pread/pwrite could not take the number). A read past the end is an empty range at
    eof, as any offset past the size is; a part no file system can hold is
    file_too_large, as one past the file system's own limit already was; an upload
    announcing such a size is refused at its beginning, before a byte is sent."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.bin").write_bytes(b"abc")
    with RpcServer(ws) as server:
        got = server.result("file.read_bytes", {"path": "a.bin", "offset": BEYOND})
        assert (got["data"], got["offset"], got["length"], got["size"], got["eof"]) == \
            ("", BEYOND, 0, 3, True)
        upload = server.result("file.upload_begin", {"path": "b.bin"})["upload_id"]
        for offset in (BEYOND, 2 ** 63 - 1):
            part = server.call("file.upload_part", {"upload_id": upload, "offset": offset,
                                                    "data": _b64(b"xy")})
            assert error_code(part) == "file_too_large", part
        assert server.result("file.upload_part", {"upload_id": upload, "offset": 0,
                                                  "data": _b64(b"ok")}) == {"received": 2}
        assert server.result("file.upload_commit", {"upload_id": upload})["bytes_written"] == 2
        huge = server.call("file.upload_begin", {"path": "c.bin", "size": BEYOND})
        assert error_code(huge) == "file_too_large", huge
    assert (ws / "b.bin").read_bytes() == b"ok"
    assert sorted(p.name for p in ws.iterdir()) == ["a.bin", "b.bin"]


def test_a_percent_escape_of_a_non_utf8_byte_named_a_replacement_character(
        tmp_path: Path) -> None:
    """`/files/%FF.bin` was decoded with U+FFFD in place of the byte: the file named with
    byte 0xFF could not be fetched, and a PUT landed a file named "\\ufffd.bin", one the
    client never named. The byte is the name's byte, as the JSON-RPC methods take it
    (the `\\udcXX` escape), for /files and /archive alike, and an error naming it holds
    that escape (the JSON encoder refused it: a 500)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    os.mkdir(os.path.join(os.fsencode(ws), b"d\xfe"))
    with open(os.path.join(os.fsencode(ws), b"\xff.bin"), "wb") as out:
        out.write(b"ff bytes")
    with HttpServer(ws) as server:
        assert httpx.get(server.base + "/files/%FF.bin").content == b"ff bytes"
        missing = httpx.get(server.base + "/files/%FF.nope")
        assert missing.status_code == 404
        assert missing.json() == {"error": "file_not_found", "path": "\udcff.nope",
                                  "message": "File not found: \udcff.nope"}
        put = httpx.put(server.base + "/files/%FE.bin", content=b"fe bytes")
        assert put.status_code == 201, put.text
        got = httpx.put(server.base + "/archive/d%FE", content=_tar(("x", b"x")))
        assert got.status_code == 200, got.text
    assert sorted(os.listdir(os.fsencode(ws))) == [b"d\xfe", b"\xfe.bin", b"\xff.bin"]
    assert (ws / os.fsdecode(b"\xfe.bin")).read_bytes() == b"fe bytes"
    assert (ws / os.fsdecode(b"d\xfe") / "x").read_bytes() == b"x"


def test_an_archive_of_a_directory_named_beyond_ascii_was_a_dropped_connection(
        tmp_path: Path) -> None:
    """GET /archive/日本 dropped the connection without an answer (the directory's name
    went into Content-Disposition, which HTTP headers cannot carry beyond ASCII), and
    a name holding a quote broke the header's quoted string. The header names the
    archive in ASCII, and exactly as RFC 6266's `filename*`."""
    ws = tmp_path / "ws"
    for name in ("日本", 'q"x'):
        (ws / name).mkdir(parents=True)
        (ws / name / "a.txt").write_text("a")
    with HttpServer(ws) as server:
        for name in ("日本", 'q"x'):
            got = httpx.get(server.base + "/archive/" + quote(name) + "?format=tar")
            assert got.status_code == 200
            with tarfile.open(fileobj=io.BytesIO(got.content)) as tar:
                assert tar.getnames() == ["a.txt"]
            disposition = got.headers["content-disposition"]
            assert disposition.isascii()
            assert f"filename*=UTF-8''{quote(name, safe='')}.tar" in disposition
            plain = disposition.split('filename="')[1].split('"')[0]
            assert '"' not in plain and plain.endswith(".tar")


def _tar(*files: tuple[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_an_archive_entry_named_in_latin1_was_an_internal_error(tmp_path: Path) -> None:
    """A tar whose entry names are Latin-1 (as old tarballs are) answered internal_error:
    the landing journal's encoder refused the names' \\udcXX escapes. The entries land
    under their bytes, as any non-UTF-8 name, and a rewind takes them away again."""
    ws = tmp_path / "ws"
    ws.mkdir()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT,
                      encoding="latin-1") as tar:
        info = tarfile.TarInfo("caf\xe9.txt")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    with HttpServer(ws) as server:
        def rpc(method: str, params: dict) -> dict:
            reply = server.post("/rpc", {"jsonrpc": "2.0", "id": 1, "method": method,
                                         "params": params}).json()
            assert "result" in reply, reply
            return reply["result"]

        mark = rpc("workspace.checkpoint", {})["checkpoint"]
        got = httpx.put(server.base + "/archive/dest", content=buf.getvalue())
        assert got.status_code == 200, got.text
        assert got.json() == {"created": 1, "replaced": 0, "bytes": 1}
        assert os.listdir(os.fsencode(ws / "dest")) == [b"caf\xe9.txt"]
        rewound = rpc("workspace.rewind", {"checkpoint": mark})
        assert rewound["conflicts"] == [] and rewound["deleted"] == ["dest/caf\udce9.txt"]
    assert os.listdir(os.fsencode(ws / "dest")) == []


def test_an_upload_committed_by_the_other_kinds_commit_landed_the_wrong_thing(
        tmp_path: Path) -> None:
    """An archive import's upload committed with file.upload_commit landed the tar's
    bytes as a file at the directory's path; a file upload committed with
    archive.import_commit was extracted into a directory named as the file. Each is
    invalid_params naming the right commit, nothing changes, and that commit still lands
    it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    with RpcServer(ws) as server:
        archive = server.result("archive.import_begin", {"path": "dest"})
        upload = server.result("file.upload_begin", {"path": "f.tar"})
        for begun in (archive, upload):
            server.result("file.upload_part", {**begun, "offset": 0,
                                               "data": _b64(_tar(("x", b"x")))})
        for begun, wrong, right in ((archive, "file.upload_commit", "archive.import_commit"),
                                    (upload, "archive.import_commit", "file.upload_commit")):
            refused = server.error(wrong, begun)
            assert refused["data"]["error"] == "invalid_params"
            assert right in refused["message"]
            assert sorted(p.name for p in ws.iterdir() if not p.name.startswith(".")) == []
        assert server.result("archive.import_commit", archive)["created"] == 1
        assert server.result("file.upload_commit", upload)["created"] is True
    assert (ws / "dest" / "x").read_bytes() == b"x"
    assert (ws / "f.tar").read_bytes() == _tar(("x", b"x"))


def test_an_if_match_list_naming_the_current_version_was_412(tmp_path: Path) -> None:
    """`If-Match: "old", "current"` was read as one version (`old", "current`), so a PUT
    the header allows (RFC 9110: any listed tag may match) was refused 412. A list that
    names the file's version replaces it; one that does not, or only weakly, is 412
    with the file unchanged."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.bin").write_bytes(b"one")
    with HttpServer(ws) as server:
        url = server.base + "/files/a.bin"
        tag = httpx.get(url).headers["etag"]
        stale = httpx.put(url, content=b"two", headers={"if-match": f'"nope", W/{tag}'})
        assert stale.status_code == 412 and stale.json()["error"] == "conflict"
        assert (ws / "a.bin").read_bytes() == b"one"
        put = httpx.put(url, content=b"two", headers={"if-match": f'"nope", {tag}'})
        assert put.status_code == 200, put.text
        assert httpx.put(url, content=b"three", headers={"if-match": f'{tag}, "x"'}
                         ).status_code == 412
    assert (ws / "a.bin").read_bytes() == b"two"


def test_a_put_in_flight_at_sigterm_was_refused_at_its_commit_and_left_its_spool(
        tmp_path: Path) -> None:
    """A PUT /files whose body was still arriving when SIGTERM came was answered 503
    shutting_down once the body was in (its commit, a call the server makes of itself,
    was refused like a new request), and its spool stayed in the workspace (the abort
    was refused too). A request in flight is finished by the drain: the file lands."""
    ws = tmp_path / "ws"
    ws.mkdir()
    server = HttpServer(ws, "--shutdown-timeout", "20", "--log-level", "info")
    try:
        address = urlsplit(server.base)
        with socket.create_connection((address.hostname, address.port), timeout=30) as sock:
            sock.sendall(b"PUT /files/slow.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         b"Content-Length: 10\r\n\r\n12345")
            wait_for(lambda: any(p.name.startswith(".chorus-tmp-") for p in ws.iterdir()))
            server.proc.send_signal(signal.SIGTERM)
            wait_for(lambda: b"draining" in server.stderr)
            sock.sendall(b"67890")
            answer = b""
            while b"\r\n\r\n" not in answer or not answer.endswith(b"}"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 201 "), answer
        assert server.proc.wait(30) == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
    assert sorted(p.name for p in ws.iterdir()) == ["slow.bin"]
    assert (ws / "slow.bin").read_bytes() == b"1234567890"


def _member(name: str, kind: bytes, data: bytes = b"", **pax: str) -> bytes:
    """One tar entry as a hostile client writes it (tarfile would refuse some): a pax
    header with `pax`'s records when given, then the entry's header and data."""
    info = tarfile.TarInfo(name)
    info.type, info.size = kind, len(data)
    head = info.tobuf(tarfile.USTAR_FORMAT, "utf-8", "surrogateescape")
    if pax:
        body = b"".join(_pax_record(k.encode(), v.encode()) for k, v in pax.items())
        extended = tarfile.TarInfo("pax")
        extended.type, extended.size = tarfile.XHDTYPE, len(body)
        head = extended.tobuf(tarfile.USTAR_FORMAT) + _padded(body) + head
    return head + _padded(data)


def _pax_record(key: bytes, value: bytes) -> bytes:
    rest = b" " + key + b"=" + value + b"\n"
    size = len(rest) + 1
    while len(str(size)) + len(rest) != size:
        size += 1
    return str(size).encode() + rest


def _padded(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % 512)


def test_hostile_tar_headers_answered_internal_error_or_a_misleading_404(
        tmp_path: Path) -> None:
    """Three archives a client can write by hand were not refused as archives: a pax
    record whose length has thousands of digits and a symlink whose target (a pax
    `linkpath`) holds a NUL byte answered internal_error; a symlink with an empty
    target answered 404 file_not_found ("File not found: dest/l The archive was not
    imported"), as if the client had named a missing file. Each is the archive refused
    whole, 400 invalid_params, nothing written."""
    ws = tmp_path / "ws"
    ws.mkdir()
    end = b"\0" * 1024
    huge_length = tarfile.TarInfo("pax")
    record = b"9" * 5000 + b" path=x\n"
    huge_length.type, huge_length.size = tarfile.XHDTYPE, len(record)
    archives = {
        "pax length": huge_length.tobuf(tarfile.USTAR_FORMAT) + _padded(record)
        + _member("f", tarfile.REGTYPE, b"a") + end,
        "NUL target": _member("l", tarfile.SYMTYPE, linkpath="a\0b") + end,
        "empty target": _member("l", tarfile.SYMTYPE) + end,
    }
    with HttpServer(ws) as server:
        for why, body in archives.items():
            got = httpx.put(server.base + "/archive/dest", content=body)
            assert got.status_code == 400, (why, got.text)
            assert got.json()["error"] == "invalid_params", (why, got.text)
            assert sorted(p.name for p in ws.iterdir()) == [], why


def test_a_watch_reported_the_files_inside_an_uploads_spool(tmp_path: Path) -> None:
    """workspace.watch hid a reserved name only as a path's last component: an upload's
    spool directory was hidden, the `data` and `meta.json` inside it were reported
    `added`, half-uploaded bytes of another client the watcher has no business with.
    Nothing beneath the reserved prefix is reported; a visible file still is."""
    ws = tmp_path / "ws"
    ws.mkdir()
    with RpcServer(ws) as server:
        watch = server.result("workspace.watch", {"include_ignored": True})["watch_id"]
        upload = server.request("file.upload_begin", {"path": "up.bin"})
        begun = archive = None
        seen: list[str] = []
        while "marker.txt" not in seen:
            message = server.recv(15)
            if message.get("id") == upload:
                begun = message["result"]["upload_id"]
                server.request("file.upload_part", {"upload_id": begun, "offset": 0,
                                                    "data": _b64(b"part")})
                archive = server.request("archive.import_begin", {"path": "dest"})
            elif message.get("id") == archive:
                server.request("file.write", {"path": "marker.txt", "content": "m"})
            elif message.get("method") == "workspace/didChange":
                assert message["params"]["watch_id"] == watch
                seen += [c["path"] for c in message["params"]["changes"]]
    assert not [p for p in seen if ".chorus-tmp-" in p], seen
