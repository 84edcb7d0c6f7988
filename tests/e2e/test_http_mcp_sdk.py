"""The official MCP Python SDK's Streamable HTTP client (`mcp.client.streamable_http`)
against the real server started with `--http 127.0.0.1:0` (docs/protocol.md, HTTP): it
initializes (a session), lists the tools and calls every native one with valid and
invalid arguments, with output-schema validation on; progress of a long call comes on
the call's SSE stream; a token-guarded server is reached with the token as a header.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any, Awaitable, Callable

import anyio
import httpx
import jsonschema
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from mcp.types import LATEST_PROTOCOL_VERSION

from http_server import HttpServer
from test_mcp_sdk import INVALID, PNG, VALID, every_tool_workspace, latest_of, with_latest


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return every_tool_workspace(tmp_path / "ws")


def over_http(server: HttpServer, body: Callable[[ClientSession, Any], Awaitable[None]],
              on_message: Callable[[Any], Awaitable[None]] | None = None) -> None:
    async def main() -> None:
        headers = server.headers()
        async with create_mcp_http_client(headers=headers) as client:
            async with streamable_http_client(server.mcp, http_client=client) as (
                    read, write, session_id):
                async with ClientSession(read, write, message_handler=on_message) as session:
                    init = await session.initialize()
                    assert session_id(), "the server named no session"
                    await body(session, init)
    anyio.run(main)


def test_sdk_lists_and_calls_every_native_tool_over_http(ws: Path) -> None:
    async def body(session: ClientSession, init: Any) -> None:
        assert init.protocolVersion == LATEST_PROTOCOL_VERSION
        assert init.serverInfo.name == "chorus-tools"
        tools = (await session.list_tools()).tools
        assert sorted(t.name for t in tools) == sorted(VALID)
        schemas = {t.name: t.outputSchema for t in tools}
        for name, cases in INVALID.items():
            for arguments, error in cases:
                result = await session.call_tool(name, arguments)
                assert result.isError is True, (name, arguments)
                assert result.structuredContent["error"] == error
                jsonschema.validate(result.structuredContent, schemas[name])
        latest = None
        for name, (arguments, holds) in VALID.items():
            result = await session.call_tool(name, with_latest(arguments, latest))
            assert result.isError is False, (name, result.content)
            assert holds(result.structuredContent), (name, result.structuredContent)
            latest = latest_of(result.structuredContent)
        image = await session.call_tool("file_read", {"path": "dot.png"})
        assert base64.b64decode(image.content[0].data) == PNG
        await session.send_ping()
    with HttpServer(ws, "--workers", "2") as server:
        over_http(server, body)
    assert (ws / "new" / "out.txt").read_text() == "written\n"
    assert (ws / "moved" / "here.txt").read_text() == "moving\n"
    assert (ws / "made" / "deep").is_dir()


def test_sdk_with_the_token_and_refused_without_it(ws: Path, tmp_path: Path) -> None:
    async def body(session: ClientSession, _: Any) -> None:
        result = await session.call_tool("file_read", {"path": "src/app.py"})
        assert result.content[0].text.startswith("     1\tdef main():")
    with HttpServer(ws, "--workers", "1", token="s3cret-token", tmp=tmp_path) as server:
        over_http(server, body)
        server.token = "wrong"
        with pytest.raises(BaseException) as refused:
            over_http(server, body)
        assert "401" in repr(refused.value) or _has_401(refused.value)


def _has_401(exc: BaseException) -> bool:
    if isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code == 401
    return any(_has_401(e) for e in getattr(exc, "exceptions", ()))


def test_progress_comes_on_the_calls_stream(tmp_path: Path) -> None:
    """A python search of 2,000 files of 1 MiB split across the workers (seconds of work on
    any machine, as in test_mcp_sdk's progress test; 400 files were searched before the
    first report on a quiet machine), with a progress callback: its notifications/progress
    reach the SDK on the POST's SSE stream. The warm index is off (--index-memory 0): once
    ready, it knows no file holds `zebra`, and the search would answer at once."""
    tree = tmp_path / "ws" / "tree"
    tree.mkdir(parents=True)
    first = tree / "f0.txt"
    first.write_bytes(b"the quick brown fox jumps over the lazy dog\n" * 24000)
    for i in range(1, 2000):
        (tree / f"f{i}.txt").hardlink_to(first)
    seen: list[float] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append(done)

    async def body(session: ClientSession, _: Any) -> None:
        result = await session.call_tool("file_search", {"pattern": "zebra"},
                                         progress_callback=progress)
        assert result.isError is False and result.structuredContent["matches"] == []
    with HttpServer(tmp_path / "ws", "--workers", "2", "--search-engine", "python",
                    "--search-file-timeout", "30", "--index-memory", "0") as server:
        over_http(server, body)
    assert seen and seen == sorted(seen), seen
