"""The real server reading an LSP header a sloppy client wrote with bare `\\n` line ends:
the request is answered in that framing and the next line-framed request is answered too."""

from __future__ import annotations

import json
from pathlib import Path

from e2e_support import LINE, LSP, E2EServer, request


def test_regression_lf_only_lsp_header_swallowed_the_next_requests(tmp_path: Path) -> None:
    """Regression: `Content-Length: N\\n\\n` was never read as a header block, so the request
    in it and every request after it (up to 8 KiB) went unanswered."""
    (tmp_path / "a.txt").write_text("alpha\n")
    first = json.dumps(request("file.read", {"path": "a.txt", "raw": True}, 1)).encode()
    second = json.dumps(request("file.read", {"path": "a.txt", "raw": True}, 2)).encode()
    with E2EServer(tmp_path, "--workers", "1") as server:
        server.send_raw(b"Content-Length: %d\n\n%s" % (len(first), first) + second + b"\n")
        replies = {}
        for _ in range(2):
            reply, framing = server.recv_framed()
            replies[reply["id"]] = (reply["result"]["content"], framing)
        assert replies == {1: ("alpha\n", LSP), 2: ("alpha\n", LINE)}


def test_regression_lsp_body_cut_by_the_end_of_input_went_unanswered(tmp_path: Path) -> None:
    """Regression: a Content-Length body that stdin ended inside got no response at all
    (a cut newline-delimited message is answered -32700); the server still exits 0."""
    with E2EServer(tmp_path, "--workers", "1") as server:
        server.send_raw(b'Content-Length: 100\r\n\r\n{"jsonrpc":"2.0","id":1,')
        server.proc.stdin.close()
        reply, framing = server.recv_framed()
        assert framing == LSP and reply["id"] is None
        assert reply["error"]["code"] == -32700
        assert server.proc.wait(timeout=30) == 0


def test_regression_bom_before_an_lsp_header_lost_the_requests(tmp_path: Path) -> None:
    """Regression: a UTF-8 BOM at the start of the stream, before an LSP header, made the
    server answer two -32700s and neither request."""
    (tmp_path / "a.txt").write_text("alpha\n")
    first = json.dumps(request("file.read", {"path": "a.txt", "raw": True}, 1)).encode()
    second = json.dumps(request("file.read", {"path": "a.txt", "raw": True}, 2)).encode()
    with E2EServer(tmp_path, "--workers", "1") as server:
        server.send_raw(b"\xef\xbb\xbfContent-Length: %d\r\n\r\n%s" % (len(first), first)
                        + second + b"\n")
        replies = {}
        for _ in range(2):
            reply, framing = server.recv_framed()
            replies[reply["id"]] = (reply["result"]["content"], framing)
        assert replies == {1: ("alpha\n", LSP), 2: ("alpha\n", LINE)}
