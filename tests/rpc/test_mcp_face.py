"""rpc/mcp/face.py in-process with a fake pool: MCP's methods answered by the face, and a
tools/call run by the same invoker, as the same job, as the plain method call."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from chorus_tools.rpc.dispatch.dispatcher import Dispatcher
from chorus_tools.rpc.mcp.face import VERSIONS
from chorus_tools.rpc.wire.envelope import dumps
from chorus_tools.tools.encoded import encoded
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.fanout import FanOut, shared
from fake_pool import Client, FakePool, request


def client(pool: FakePool, **options: Any) -> Client:
    return Client(Dispatcher(pool, request_timeout=30.0, roots=("/ws",), **options))


def tool_call(rid: Any, name: str, arguments: Any, meta: Any = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    return request(rid, "tools/call", params)


def test_initialize_speaks_the_version_asked_for_or_the_newest_and_only_once() -> None:
    async def go() -> None:
        mcp = client(FakePool())
        first = await mcp.call("initialize", {"protocolVersion": VERSIONS[0]})
        assert first["result"]["protocolVersion"] == VERSIONS[0]
        again = await mcp.call("initialize", {"protocolVersion": VERSIONS[0]}, rid=2)
        assert again["error"]["code"] == -32600
        other = client(FakePool())
        newest = await other.call("initialize", {"protocolVersion": "1999-01-01"})
        assert newest["result"]["protocolVersion"] == VERSIONS[-1]
    asyncio.run(go())


def test_a_tool_call_is_the_same_job_as_the_plain_call() -> None:
    async def go() -> None:
        read = {"content": "     1\thi", "total_lines": 1, "truncated": False, "start_line": 1,
                "end_line": 1, "encoding": "utf-8", "version": "v1"}
        pool = FakePool(lambda task: (True, read, None))
        mcp = client(pool)
        plain = await mcp.call("file.read", {"path": "/ws/./a.txt"})
        called = await mcp.call("tools/call", {"name": "file_read",
                                               "arguments": {"path": "/ws/./a.txt"}}, rid=2)
        assert pool.tasks[0] == pool.tasks[1]
        assert called["result"]["structuredContent"] == plain["result"]
        assert called["result"]["isError"] is False
        assert called["result"]["content"][0]["type"] == "text"
    asyncio.run(go())


def test_a_tool_failure_is_a_result_the_model_sees() -> None:
    async def go() -> None:
        error = ToolError("file_not_found", "File not found: a.txt", path="a.txt")
        mcp = client(FakePool(lambda task: (False, error, None)))
        called = await mcp.call("tools/call", {"name": "file_read",
                                               "arguments": {"path": "a.txt"}})
        assert called["result"] == {
            "content": [{"type": "text", "text": "File not found: a.txt"}],
            "structuredContent": {"error": "file_not_found",
                                  "message": "File not found: a.txt", "path": "a.txt"},
            "isError": True}
    asyncio.run(go())


def test_bad_arguments_are_an_error_result_and_reach_no_worker() -> None:
    async def go() -> None:
        pool = FakePool()
        called = await client(pool).call("tools/call", {"name": "file_read",
                                                        "arguments": {"path": 1}})
        assert called["result"]["isError"] is True
        assert called["result"]["structuredContent"]["error"] == "invalid_params"
        assert pool.jobs == []
    asyncio.run(go())


def test_an_unknown_tool_or_a_non_object_arguments_is_a_protocol_error() -> None:
    async def go() -> None:
        pool = FakePool()
        mcp = client(pool)
        mcp.send([tool_call(1, "file.read", {}), tool_call(2, "file_read", [1]),
                  request(3, "tools/call", ["file_read"])])
        (batch,) = await mcp.answers()
        assert [(r["error"]["code"], r["error"]["data"]["param"]) for r in batch] == [
            (-32602, "name"), (-32602, "arguments"), (-32602, "params")]
        assert pool.jobs == []
    asyncio.run(go())


def test_tools_of_a_set_not_selected_are_unknown() -> None:
    async def go() -> None:
        called = await client(FakePool()).call("tools/call", {"name": "Read",
                                                              "arguments": {}})
        assert called["error"]["data"]["param"] == "name"
    asyncio.run(go())


def test_an_orchestrators_method_is_no_tool_to_call_either() -> None:
    """They were served though never listed: rpc_metrics was an internal_error, and a
    workspace_watch forked a watcher the drain had already closed."""
    async def go() -> None:
        pool = FakePool()
        mcp = client(pool)
        names = ["file_read_bytes", "file_upload_begin", "rpc_metrics", "workspace_watch",
                 "workspace_unwatch"]
        mcp.send([tool_call(i, name, {}) for i, name in enumerate(names)])
        (batch,) = await mcp.answers()
        for name, reply in zip(names, sorted(batch, key=lambda r: r["id"])):
            assert reply["error"]["code"] == -32602, reply
            assert name.replace("_", ".", 1) in reply["error"]["message"]
            assert "plain JSON-RPC" in reply["error"]["message"]
        assert pool.jobs == []
    asyncio.run(go())


def test_notifications_cancelled_stops_the_job_and_silences_the_call() -> None:
    async def go() -> None:
        pool = FakePool()
        mcp = client(pool)
        mcp.send(tool_call(5, "file_search", {"pattern": "x"}))
        await mcp.settle()
        mcp.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": 5}})
        assert await mcp.answers() == []
        assert [code for _, code in pool.stopped] == ["cancelled"]
    asyncio.run(go())


def test_cancel_request_on_a_tool_call_answers_32800() -> None:
    async def go() -> None:
        mcp = client(FakePool())
        mcp.send(tool_call(5, "file_read", {"path": "a"}))
        await mcp.settle()
        mcp.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 5}})
        (response,) = await mcp.answers()
        assert response["error"]["code"] == -32800
    asyncio.run(go())


def test_a_split_call_reports_the_items_of_its_finished_parts() -> None:
    async def go() -> None:
        fan = FanOut(part="tests:part", parts=[{"n": 0}, {"n": 1}],
                     merge="chorus_tools.tools.walk.listing:Merge",
                     args={"sort": "path", "max_results": 10}, shared=shared(),
                     sizes=[3, 4], unit="directory trees listed")
        pool = FakePool(lambda task: (True, fan, None) if "pattern" in task.kwargs else None)
        mcp = client(pool)
        mcp.send(tool_call(1, "file_list", {"pattern": "**"}, {"progressToken": "t"}))
        await mcp.settle()
        pool.finish(pool.jobs[2], (True, {"files": [{"path": "b"}]}, None))
        await asyncio.sleep(0.6)  # the first notification goes out after 0.5 s
        pool.finish(pool.jobs[1], (True, {"files": [{"path": "a"}]}, None))
        progress, response = await mcp.answers()
        assert progress == {"jsonrpc": "2.0", "method": "notifications/progress", "params": {
            "progressToken": "t", "progress": 4, "total": 7,
            "message": "4 of 7 directory trees listed so far."}}
        assert response["result"]["structuredContent"]["files"] == [{"path": "a"},
                                                                     {"path": "b"}]
    asyncio.run(go())


def test_a_text_harness_change_the_history_could_not_keep_says_so_to_the_model() -> None:
    """--history-full write: a codex/anthropic/gemini model reads text, not the result's
    `history` member, so the note is a block of its own."""
    from chorus_tools.rpc.mcp.content import content
    note = {"kept": False, "errno": "ENOSPC", "paths": ["a"], "message": "not kept"}
    assert content("output", {"output": "Done."}) == [{"type": "text", "text": "Done."}]
    assert content("output", {"output": "Done.", "history": note})[1] == {
        "type": "text", "text": "not kept"}


def test_an_encoded_result_is_spliced_and_read_for_the_models_blocks() -> None:
    """A whole warm code reply comes Encoded (tools/encoded.py): the plain call's response
    carries it as it is, and the tool's structuredContent too, its blocks made from it."""
    async def go() -> None:
        found = {"symbols": [{"path": "src/engine.py", "name": "Engine", "kind": "class",
                              "name_path": "Engine", "line": 1, "end_line": 3,
                              "signature": "class Engine:"}], "total": 1, "truncated": False,
                 "files_parsed": 0, "files_skipped": 0}
        made = encoded(found, (1, 1, 1))
        pool = FakePool(lambda task: (True, made, None))
        mcp = client(pool)
        plain = await mcp.call("code.symbols", {"query": "Engine"})
        assert orjson.loads(dumps(plain)) == {"jsonrpc": "2.0", "result": found, "id": 1}
        called = await mcp.call("tools/call", {"name": "code_symbols",
                                               "arguments": {"query": "Engine"}}, rid=2)
        sent = orjson.loads(dumps(called))["result"]
        assert sent["structuredContent"] == found and sent["isError"] is False
        assert "src/engine.py" in sent["content"][0]["text"]
    asyncio.run(go())
