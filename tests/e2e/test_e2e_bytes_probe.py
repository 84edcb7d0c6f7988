"""Regressions found probing docs/protocol.md's Bytes in and out over the real server as a
client would (HTTP and JSON-RPC over pipes): each test is named after the bug it pins
down, and failed before its fix."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import socket
import time
from pathlib import Path
from typing import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from http_server import HttpServer
from rpc_client import RpcServer, error_code
from tar_support import tar_of

BODY = bytes(range(256)) * 4


def _raw(base: str, request: bytes) -> bytes:
    """One request on a fresh socket, everything the server answers until it closes or a
    second of silence (HEAD has no body to wait for)."""
    address = urlsplit(base)
    with socket.create_connection((address.hostname, address.port), timeout=5) as sock:
        sock.sendall(request)
        sock.settimeout(1)
        got = b""
        try:
            while chunk := sock.recv(65536):
                got += chunk
        except TimeoutError:
            pass
    return got


@pytest.fixture
def served(tmp_path: Path) -> Iterator[HttpServer]:
    """A server over a workspace holding a.bin (BODY)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.bin").write_bytes(BODY)
    with HttpServer(ws) as server:
        yield server


def test_head_on_files_and_probes_was_a_dropped_connection_and_an_error_log(
        tmp_path: Path) -> None:
    """HEAD /files/{path} was answered 405 with a body, which h11 refuses for HEAD: the
    connection was dropped without any answer and a traceback logged. HEAD of a file is
    its GET's head (length, ETag) without the body, and the connection serves on; a
    probe answers it as GET; /archive, whose length is known only once made, 405."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.bin").write_bytes(BODY)
    with HttpServer(ws, token="t0ken", tmp=tmp_path) as server:
        auth = {"authorization": "Bearer t0ken"}
        for path, status in (("/files/a.bin", 200), ("/healthz", 200), ("/archive/", 405)):
            head = httpx.head(server.base + path, headers=auth)
            assert head.status_code == status and head.content == b"", path
        whole = httpx.get(server.base + "/files/a.bin", headers=auth)
        assert whole.content == BODY
        with httpx.Client(headers=auth) as client:  # one connection: it serves on
            head = client.head(server.base + "/files/a.bin", headers={"range": "bytes=2-5"})
            assert head.status_code == 206 and head.content == b""
            assert head.headers["content-length"] == "4"
            assert head.headers["content-range"] == f"bytes 2-5/{len(BODY)}"
            head = client.head(server.base + "/files/a.bin")
            assert head.headers["content-length"] == str(len(BODY))
            assert head.headers["etag"] == whole.headers["etag"]
            assert client.get(server.base + "/files/a.bin").content == BODY
    assert b"Traceback" not in server.stderr and b"ERROR" not in server.stderr, \
        server.stderr.decode(errors="replace")


def test_if_none_match_with_a_list_or_a_weak_tag_was_a_full_200(served: HttpServer) -> None:
    """If-None-Match is a list of ETags compared weakly (RFC 9110, 13.1.2): a client
    sending the tag it holds among others, or as W/"...", got the whole file again; and
    a 304 said `Content-Length: 0`, which it may only say of the full body's length."""
    url = served.base + "/files/a.bin"
    tag = httpx.get(url).headers["etag"]
    for given in (f'"other", {tag}', f"W/{tag}", f'W/"x", W/{tag}', tag, "*"):
        got = httpx.get(url, headers={"if-none-match": given})
        assert got.status_code == 304 and got.content == b"", given
        assert got.headers["etag"] == tag
        # no Content-Length: 0 for a 1 KiB file (RFC 9110, 8.6: the full body's or none)
        assert got.headers.get("content-length", str(len(BODY))) == str(len(BODY))
    assert httpx.get(url, headers={"if-none-match": '"other"'}).content == BODY


def test_range_of_the_last_zero_bytes_was_a_206_with_a_backwards_content_range(
        served: HttpServer) -> None:
    """`Range: bytes=-0` asks for no bytes (unsatisfiable: 416), and `bytes=9-3` is no
    valid range (ignored: the whole file); they were a 206 whose Content-Range ended
    before it began, and a 416."""
    url = served.base + "/files/a.bin"
    none = httpx.get(url, headers={"range": "bytes=-0"})
    assert none.status_code == 416 and none.headers["content-range"] == \
        f"bytes */{len(BODY)}"
    backwards = httpx.get(url, headers={"range": "bytes=9-3"})
    assert backwards.status_code == 200 and backwards.content == BODY
    tail = httpx.get(url, headers={"range": "bytes=-3"})
    assert tail.status_code == 206 and tail.content == BODY[-3:]


def test_a_range_spanning_the_whole_file_was_a_200_without_content_range(
        tmp_path: Path) -> None:
    """`Range: bytes=0-` (how downloaders probe for range support) or any range that
    covers the whole file was answered 200 without `Content-Range`, as if Range were not
    served; every satisfiable range is a 206."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.bin").write_bytes(BODY)
    (ws / "empty").write_bytes(b"")
    with HttpServer(ws) as server:
        url = server.base + "/files/a.bin"
        for given in ("bytes=0-", f"bytes=0-{len(BODY) - 1}", f"bytes=-{len(BODY) + 5}"):
            whole = httpx.get(url, headers={"range": given})
            assert whole.status_code == 206 and whole.content == BODY, given
            assert whole.headers["content-range"] == f"bytes 0-{len(BODY) - 1}/{len(BODY)}"
        empty = httpx.get(server.base + "/files/empty", headers={"range": "bytes=-5"})
        assert empty.status_code == 200 and empty.content == b""
        assert httpx.get(server.base + "/files/empty", headers={"range": "bytes=0-"}
                         ).status_code == 416


def test_a_range_under_an_if_range_naming_an_older_version_was_served_partial(
        served: HttpServer) -> None:
    """A client resuming a download sends `If-Range` with the ETag of what it has: once
    the file changed, the range is of another version and must be ignored (RFC 9110,
    13.1.5: the whole file, 200); the server sent the range of the new file, which the
    client spliced onto the old bytes."""
    url = served.base + "/files/a.bin"
    tag = httpx.get(url).headers["etag"]
    same = httpx.get(url, headers={"range": "bytes=10-19", "if-range": tag})
    assert same.status_code == 206 and same.content == BODY[10:20]
    assert httpx.put(url, content=BODY[::-1]).status_code == 200
    stale = httpx.get(url, headers={"range": "bytes=10-19", "if-range": tag})
    assert stale.status_code == 200 and stale.content == BODY[::-1]
    dated = httpx.get(url, headers={"range": "bytes=10-19",
                                    "if-range": "Sun, 29 Nov 2026 13:00:00 GMT"})
    assert dated.status_code == 200 and dated.content == BODY[::-1]


def _tar(*files: tuple[str, bytes]) -> bytes:
    return tar_of(files, [("ln", "x.txt")], gz=True)


def test_an_archive_import_recorded_one_line_with_one_files_hashes_and_bytes(
        tmp_path: Path) -> None:
    """`PUT /archive` wrote one record for the call, its `bytes` and hashes those of
    whichever file landed last; each file extracted is recorded as a write is: its own
    line, its path, the bytes written, its hashes before and after."""
    ws, records = tmp_path / "ws", tmp_path / "records"
    (ws / "dst").mkdir(parents=True)
    records.mkdir()
    (ws / "dst" / "old.txt").write_bytes(b"OLD")
    with HttpServer(ws, "--records", str(records)) as server:
        put = httpx.put(server.base + "/archive/dst", content=_tar(
            ("x.txt", b"hello"), ("sub/y.bin", b"\0\1"), ("old.txt", b"NEW!")))
        assert put.json() == {"created": 3, "replaced": 1, "bytes": 11}
    lines = [json.loads(x) for x in (records / "records.jsonl").read_text().splitlines()]
    got = {x["path"]: x for x in lines if x["method"] == "archive.import_commit"}
    assert sorted(got) == ["dst/ln", "dst/old.txt", "dst/sub/y.bin", "dst/x.txt"]
    assert {x["outcome"] for x in got.values()} == {"ok"}
    assert len({x["id"] for x in got.values()}) == 1  # one call's lines
    sha = lambda data: hashlib.sha256(data).hexdigest()  # noqa: E731
    assert (got["dst/x.txt"]["bytes"], got["dst/x.txt"]["sha256_before"],
            got["dst/x.txt"]["sha256_after"]) == (5, None, sha(b"hello"))
    assert (got["dst/old.txt"]["bytes"], got["dst/old.txt"]["sha256_before"],
            got["dst/old.txt"]["sha256_after"]) == (4, sha(b"OLD"), sha(b"NEW!"))
    assert (got["dst/sub/y.bin"]["bytes"], got["dst/sub/y.bin"]["sha256_before"]) == (2, None)
    assert got["dst/ln"]["sha256_after"] == sha(b"x.txt")  # a link: its text, as delete


@pytest.mark.long  # waits out an upload timeout: ~3 s
def test_an_abandoned_upload_stayed_on_disk_and_in_the_quota_past_its_timeout(
        tmp_path: Path) -> None:
    """An upload untouched for --upload-timeout was removed only by the next upload call:
    abandoned with none after it, its parts stayed on the workspace's disk and in its
    quota for as long as the server ran. The server now sweeps on a timer (no record:
    it is no client's change)."""
    ws, records = tmp_path / "ws", tmp_path / "records"
    ws.mkdir()
    records.mkdir()
    with RpcServer(ws, "--upload-timeout", "2", "--quota-bytes", "100000",
                   "--index-memory", "0", "--records", str(records)) as server:
        upload = server.result("file.upload_begin", {"path": "big.bin"})["upload_id"]
        server.result("file.upload_part", {"upload_id": upload, "offset": 0,
                                           "data": base64.b64encode(BODY).decode()})
        assert server.result("workspace.status", {})["usage"]["bytes"] == len(BODY)
        deadline = time.monotonic() + 30  # a hang guard, not a timing check
        while any(p.name.startswith(".chorus-tmp-") for p in ws.iterdir()):
            assert time.monotonic() < deadline, list(ws.iterdir())
            time.sleep(0.1)
        assert server.result("workspace.status", {})["usage"]["bytes"] == 0
        gone = server.call("file.upload_commit", {"upload_id": upload})
        assert error_code(gone) == "upload_not_found"
    methods = [json.loads(x)["method"] for x in
               (records / "records.jsonl").read_text().splitlines()]
    assert methods == ["file.upload_begin", "file.upload_part", "file.upload_commit"]


def _moved(base: str) -> tuple[float, float]:
    text = httpx.get(base + "/metrics").text
    found = dict(re.findall(r"^(chorus_bytes_(?:read|written)_total) (\S+)$", text, re.M))
    return float(found["chorus_bytes_read_total"]), float(found["chorus_bytes_written_total"])


def test_bytes_moved_by_files_and_the_bytes_methods_were_not_in_the_byte_metrics(
        tmp_path: Path) -> None:
    """chorus_bytes_read_total and chorus_bytes_written_total counted file.read and
    file.write alone: GET and PUT /files, file.read_bytes, file.write_bytes, an upload's
    commit and an archive import moved bytes the metrics never saw."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.bin").write_bytes(BODY)
    with HttpServer(ws) as server:
        def rpc(method: str, params: dict) -> dict:
            reply = httpx.post(server.base + "/rpc", json={
                "jsonrpc": "2.0", "id": 1, "method": method, "params": params}).json()
            assert "result" in reply, reply
            return reply["result"]

        assert _moved(server.base) == (0, 0)
        assert httpx.get(server.base + "/files/a.bin").content == BODY
        assert httpx.get(server.base + "/files/a.bin", headers={"range": "bytes=0-9"}
                         ).status_code == 206
        assert _moved(server.base) == (len(BODY) + 10, 0)
        assert httpx.put(server.base + "/files/b.bin", content=b"b" * 2000).status_code == 201
        rpc("file.read_bytes", {"path": "a.bin", "offset": 1000})
        rpc("file.write_bytes", {"path": "c.bin", "data": base64.b64encode(b"c" * 300).decode()})
        assert _moved(server.base) == (len(BODY) + 10 + len(BODY) - 1000, 2300)
        assert httpx.put(server.base + "/archive/d", content=_tar(("x", b"x" * 40))
                         ).json()["bytes"] == 40
        assert _moved(server.base)[1] == 2340


@pytest.mark.parametrize(("options", "named"), [
    (("--max-image-bytes", "1000"), "--max-image-bytes"),
    (("--max-image-bytes", "1M", "--max-chunk-bytes", "1000"), "--max-chunk-bytes")],
    ids=["over_max_image_bytes", "within_it_over_max_chunk_bytes"])
def test_a_pdf_past_its_limit_is_file_too_large_naming_the_limit(
        tmp_path: Path, options: tuple[str, ...], named: str) -> None:
    """Over MCP, file_read gives a PDF up to --max-image-bytes. Past it the model was told
    `binary_file` ("file.read returns text and images only"), though it was the limit that
    refused it; and one within it but over --max-chunk-bytes (it is read in one
    file.read_bytes piece) got read_bytes' invalid_params about a `length` the model never
    gave. Both are file_too_large with the size and the limit met, as an image past it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "big.pdf").write_bytes(b"%PDF-1.4\n" + b"x" * 2000)
    with RpcServer(ws, *options) as server:
        server.result("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "t", "version": "1"}})
        over = server.result("tools/call", {"name": "file_read",
                                            "arguments": {"path": "big.pdf"}})
        assert over["isError"] is True
        assert over["structuredContent"]["error"] == "file_too_large"
        assert (over["structuredContent"]["size"], over["structuredContent"]["limit"]) == \
            (2009, 1000)
        assert named in over["content"][0]["text"]


def test_a_refused_commit_was_recorded_without_its_path_or_the_files_hashes(
        tmp_path: Path) -> None:
    """A commit's params name no path (only its upload's id): a refused one was recorded
    with `path` null and no hashes, though the upload was for a known path and a failed
    mutation of an existing file records its hash as both before and after."""
    ws, records = tmp_path / "ws", tmp_path / "records"
    ws.mkdir()
    records.mkdir()
    (ws / "g.bin").write_bytes(b"old")
    with RpcServer(ws, "--records", str(records)) as server:
        upload = server.result("file.upload_begin", {"path": "g.bin", "sha256": "0" * 64})
        server.result("file.upload_part", {"upload_id": upload["upload_id"], "offset": 0,
                                           "data": base64.b64encode(b"abc").decode()})
        assert error_code(server.call("file.upload_commit", upload)) == "verification_failed"
        begun = server.result("archive.import_begin", {"path": "dest"})
        server.result("file.upload_part", {"upload_id": begun["upload_id"], "offset": 0,
                                           "data": base64.b64encode(b"x" * 700).decode()})
        assert error_code(server.call("archive.import_commit", begun)) == "invalid_params"
    lines = [json.loads(x) for x in (records / "records.jsonl").read_text().splitlines()]
    commit, extract = [x for x in lines if x["method"].endswith("_commit")]
    old = hashlib.sha256(b"old").hexdigest()
    assert (commit["path"], commit["outcome"], commit["bytes"], commit["sha256_before"],
            commit["sha256_after"]) == ("g.bin", "verification_failed", 0, old, old)
    assert (extract["path"], extract["outcome"]) == ("dest", "invalid_params")


def test_read_bytes_without_a_length_under_a_small_chunk_limit_was_refused_for_one(
        tmp_path: Path) -> None:
    """`length` left out is 1 MiB; under a --max-chunk-bytes below that, a call naming no
    length was refused as invalid_params for its `length`. It reads the limit's worth."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.bin").write_bytes(BODY)
    with RpcServer(ws, "--max-chunk-bytes", "1000") as server:
        got = server.result("file.read_bytes", {"path": "a.bin"})
        assert base64.b64decode(got["data"]) == BODY[:1000] and got["length"] == 1000
        assert server.error("file.read_bytes", {"path": "a.bin", "length": 1001})[
            "data"]["param"] == "length"
