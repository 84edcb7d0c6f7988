"""Regression: a PUT /files or PUT /archive refused (quota_exceeded, verification_failed)
was answered before its upload was aborted, so a client looking at the workspace as soon
as it had the answer still found the upload's spool there (removed a moment later).
Refused means nothing written (docs/protocol.md, Quotas; Bytes in and out): the spool is
gone before the answer is sent."""

from __future__ import annotations

import os
from pathlib import Path

import httpx

from http_server import HttpServer
from tar_support import tar_of

TOKEN = "tok-put-refused"


def test_a_refused_put_leaves_no_spool_when_its_answer_comes(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("a" * 900)
    with HttpServer(root, "--workers", "2", "--quota-bytes", "1000", "--quota-files", "3",
                    token=TOKEN, tmp=tmp_path) as srv:
        auth = {"authorization": f"Bearer {TOKEN}"}
        refusals = [
            ("/files/b.txt", b"b" * 200, {}, "quota_exceeded"),  # bytes
            ("/files/x/y/z.txt", b"b", {}, "quota_exceeded"),  # files
            ("/files/c.txt", b"c", {"x-content-sha256": "0" * 64}, "verification_failed"),
            ("/archive/imp", tar_of([("p/q.txt", b"z" * 10), ("p/r.txt", b"z" * 10)]), {},
             "quota_exceeded"),
        ]
        for target, body, headers, code in refusals * 3:
            reply = httpx.put(srv.base + target, content=body, headers={**auth, **headers},
                              timeout=30)
            assert reply.status_code >= 400 and reply.json()["error"] == code, reply.text
            assert sorted(os.listdir(root)) == ["a.txt"], (target, os.listdir(root))
