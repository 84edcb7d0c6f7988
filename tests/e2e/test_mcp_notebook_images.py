"""The claude set's `Read` of a notebook over MCP (docs/protocol.md, Tool set `claude`: "a
`.ipynb` notebook is rendered cell by cell ...; image outputs as images"): the model gets
the rendering as text and each image output as an `image` content block, in the order the
text numbers them (`image 0`, `image 1`), within the window read. Found by probing: the
images reached `structuredContent.images` only, never a block a model sees as an image."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from rpc_client import RpcServer

PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d4944415478da63f8cfc0f01f0005000201a0b6c1f10000000049454e44ae426082")).decode()
NOTEBOOK = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
    {"cell_type": "markdown", "metadata": {}, "source": "# Plots"},
    {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": "plot()",
     "outputs": [{"output_type": "execute_result", "metadata": {}, "execution_count": 1,
                  "data": {"text/plain": ["<Figure>"], "image/png": PNG}},
                 {"output_type": "display_data", "metadata": {},
                  "data": {"image/jpeg": PNG}}]}]}


def _read(server: RpcServer, **arguments: Any) -> dict[str, Any]:
    result = server.result("tools/call", {"name": "Read", "arguments": {
        "file_path": "nb.ipynb", **arguments}})
    assert result["isError"] is False, result
    return result


def test_a_notebooks_image_outputs_are_image_blocks(tmp_path: Path) -> None:
    (tmp_path / "nb.ipynb").write_text(json.dumps(NOTEBOOK))
    with RpcServer(tmp_path, "--tools", "claude", "--workers", "1") as server:
        server.result("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "nb", "version": "1"}})
        whole = _read(server)
        text, *images = whole["content"]
        assert text["type"] == "text" and "image 1>" in text["text"]
        assert images == [{"type": "image", "data": PNG, "mimeType": "image/png"},
                          {"type": "image", "data": PNG, "mimeType": "image/jpeg"}]
        assert len(whole["structuredContent"]["images"]) == 2  # the result is unchanged

        window = _read(server, offset=1, limit=2)  # the markdown cell only
        assert [block["type"] for block in window["content"]] == ["text", "text"]
        assert window["content"][1]["text"].startswith("[Lines 1-2 of")
