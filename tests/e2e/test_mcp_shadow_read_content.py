"""The shadow set's `Read` as a model reads it over MCP (docs/protocol.md, MCP: `content`
is "for reads the file text itself (numbered as in file.read) ... for an image an `image`
block"): the numbered text, or the image, while `structuredContent` keeps the seed's
result. Found by probing: both came as the result's JSON, an image as base64 text."""

from __future__ import annotations

import base64
from pathlib import Path

from rpc_client import RpcServer

PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
                    "0000000d4944415478da63f8cfc0f01f0005000201a0b6c1f10000000049454e44ae"
                    "426082")


def test_shadow_read_shows_the_text_or_the_image(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    (tmp_path / "img.png").write_bytes(PNG)
    with RpcServer(tmp_path, "--tools", "shadow", "--workers", "1") as server:
        server.result("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "shadow", "version": "1"}})
        text = server.result("tools/call", {"name": "Read", "arguments": {
            "file_path": "a.py", "offset": "2"}})
        image = server.result("tools/call", {"name": "Read", "arguments": {
            "filePath": "img.png"}})
    assert text["content"] == [{"type": "text", "text": "     2\t    return 1"}]
    assert text["structuredContent"] == {"file_path": "a.py",
                                         "content": "     2\t    return 1"}
    data = base64.b64encode(PNG).decode()
    assert image["content"] == [{"type": "image", "data": data, "mimeType": "image/png"}]
    assert image["structuredContent"]["image"] == data
    assert image["structuredContent"]["file_size"] == len(PNG)
