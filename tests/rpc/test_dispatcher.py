"""rpc/dispatch/dispatcher.py and its invoker, in-process with a fake pool: what a request
becomes on its way to a worker (one job description, its paths normalised once), the
order per path, cancels, records, the claude session and split calls."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from chorus_tools.rpc.dispatch.dispatcher import Dispatcher
from chorus_tools.rpc.dispatch.records import RECORDS_FILE, Records
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.fanout import FanOut, shared
from fake_pool import Client, FakePool, in_process, request

ROOTS = ("/srv/ws",)


def dispatcher(pool: FakePool, **options: Any) -> Dispatcher:
    return Dispatcher(pool, request_timeout=30.0, roots=ROOTS, **options)


@pytest.fixture
def tool_ctx(root: Path) -> Any:
    ws = Workspace(str(root))
    yield ToolContext(ws=ws)
    os.close(ws.root_fd)


def test_a_read_is_one_job_whose_paths_are_normalised_once() -> None:
    async def go() -> None:
        pool = FakePool(lambda task: (True, {"content": "x"}, None))
        client = Client(dispatcher(pool))
        response = await client.call("file.read", {"path": "/srv/ws/a/../b.txt", "limit": 5})
        assert response == {"jsonrpc": "2.0", "id": 1, "result": {"content": "x"}}
        (task,) = pool.tasks
        assert task.target == "chorus_tools.tools.read.read:read"
        assert task.kwargs == {"path": "/srv/ws/a/../b.txt", "limit": 5}  # as the client gave it
        assert task.paths == {"/srv/ws/a/../b.txt": "b.txt"}
        assert (task.mutating, task.record, task.shared) == (False, False, b"")
    asyncio.run(go())


def test_a_path_with_no_normal_form_is_left_to_the_tool() -> None:
    async def go() -> None:
        pool = FakePool(lambda task: (False, ToolError("path_outside_workspace", "out"), None))
        response = await Client(dispatcher(pool)).call("file.read", {"path": "../x"})
        assert response["error"]["data"]["error"] == "path_outside_workspace"
        assert pool.tasks[0].paths == {}
    asyncio.run(go())


def test_the_worker_runs_the_job_as_described(tool_ctx: ToolContext, root: Path) -> None:
    """The same job run in-process, as a worker runs it: the tool answers from the
    normalised path it was sent."""
    (root / "b.txt").write_text("hello\n")

    async def go() -> None:
        pool = FakePool(in_process(tool_ctx))
        client = Client(Dispatcher(pool, request_timeout=30.0, roots=tool_ctx.ws.roots))
        response = await client.call("file.read", {"path": f"{root}/a/../b.txt"})
        assert response["result"]["content"] == "     1\thello"
    asyncio.run(go())


def test_a_read_pipelined_after_a_write_of_its_file_waits_for_it() -> None:
    async def go() -> None:
        pool = FakePool()
        client = Client(dispatcher(pool))
        client.send(request(1, "file.write", {"path": "f.txt", "content": "new"}))
        client.send(request(2, "file.read", {"path": "./f.txt"}))
        client.send(request(3, "file.read", {"path": "other.txt"}))
        await client.settle()
        assert [t.target.rpartition(":")[2] for t in pool.tasks] == ["write", "read"]
        assert pool.tasks[1].kwargs == {"path": "other.txt"}  # another path: not held
        pool.finish(pool.jobs[0], (True, {"success": True}, None))
        await client.settle()
        assert pool.tasks[2].kwargs == {"path": "./f.txt"}
        assert pool.tasks[0].mutating and not pool.tasks[2].mutating
    asyncio.run(go())


def test_cancel_stops_a_running_read_and_answers_32800() -> None:
    async def go() -> None:
        pool = FakePool()
        client = Client(dispatcher(pool))
        client.send(request(7, "file.read", {"path": "a"}))
        await client.settle()
        client.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 7}})
        replies = await client.answers()
        assert [code for _, code in pool.stopped] == ["cancelled"]
        assert replies == [{"jsonrpc": "2.0", "id": 7, "error": {
            "code": -32800, "message": replies[0]["error"]["message"],
            "data": {"error": "cancelled", "message": replies[0]["error"]["message"]}}}]
    asyncio.run(go())


def test_routing_answers_what_no_worker_needs() -> None:
    async def go() -> None:
        pool = FakePool()
        client = Client(dispatcher(pool))
        client.send([request(1, "no.such"), request(2, "rpc.discover", {"x": 1}),
                     request(3, "rpc.discover")])
        (batch,) = await client.answers()
        by_id = {r["id"]: r for r in batch}
        assert by_id[1]["error"]["code"] == -32601
        assert by_id[2]["error"]["data"] == {
            "error": "invalid_params", "message": by_id[2]["error"]["message"], "param": "x"}
        assert by_id[3]["result"]["openrpc"]
        assert pool.jobs == []
    asyncio.run(go())


def test_bad_params_never_reach_a_worker() -> None:
    async def go() -> None:
        pool = FakePool()
        response = await Client(dispatcher(pool)).call("file.read", {"path": 3})
        assert response["error"]["data"]["param"] == "path"
        assert pool.jobs == []
    asyncio.run(go())


def test_a_mutation_asks_for_its_hashes_and_is_recorded(tmp_path: Path) -> None:
    async def go() -> None:
        audit = {"sha256_before": None, "sha256_after": "ab", "bytes": 3}
        pool = FakePool(lambda task: (True, {"success": True}, audit))
        records = Records(str(tmp_path / "rec"))
        client = Client(dispatcher(pool, records=records))
        await client.call("file.move", {"source": "a", "destination": "b/../c"})
        await client.call("file.read", {"path": "c"}, rid=2)
        records.close()
        assert [(t.record, t.mutating) for t in pool.tasks] == [(True, True), (False, False)]
        assert pool.tasks[0].paths == {"a": "a", "b/../c": "c"}
        (line,) = (tmp_path / "rec" / RECORDS_FILE).read_text().splitlines()
        assert {k: v for k, v in json.loads(line).items() if k != "time"} == {
            "id": 1, "method": "file.move", "path": "a", "destination": "b/../c",
            "outcome": "ok", "bytes": 3, "sha256_before": None, "sha256_after": "ab"}
    asyncio.run(go())


def test_the_claude_writer_gets_the_version_its_file_was_read_at() -> None:
    async def go() -> None:
        pool = FakePool(lambda task: (True, {"version": "v1", "content": ""}, None))
        client = Client(dispatcher(pool, toolsets=("native", "claude")))
        await client.call("Read", {"file_path": "/srv/ws/d/./f.py"})
        await client.call("Edit", {"file_path": "d/f.py", "old_string": "a",
                                   "new_string": "b"}, rid=2)
        await client.call("Edit", {"file_path": "d/g.py", "old_string": "a",
                                   "new_string": "b"}, rid=3)
        assert pool.tasks[1].kwargs["read_version"] == "v1"  # the same file, however named
        assert pool.tasks[2].kwargs["read_version"] is None
    asyncio.run(go())


def _fan(parts: int, max_results: int) -> FanOut:
    return FanOut(part="tests:part", parts=[{"n": i} for i in range(parts)],
                  merge="chorus_tools.tools.walk.listing:Merge",
                  args={"sort": "path", "max_results": max_results},
                  shared=shared(pattern="**"), sizes=[1] * parts, unit="trees")


def test_a_split_call_sends_each_part_once_and_stops_when_the_merge_has_enough() -> None:
    async def go() -> None:
        fan = _fan(parts=4, max_results=2)
        pool = FakePool(lambda task: (True, fan, None) if task.kwargs.get("pattern") else None)
        client = Client(dispatcher(pool))
        client.send(request(1, "file.list", {"path": ".", "pattern": "**"}))
        await client.settle()
        first, *parts = pool.jobs
        assert [p.task.kwargs for p in parts] == fan.parts
        assert all(p.task.shared == fan.shared and p.task.paths == {} and not p.task.mutating
                   and not p.batchable for p in parts)
        pool.finish(parts[1], (True, {"files": [{"path": "c"}, {"path": "d"}]}, None))
        await client.settle()
        assert client.replies == []  # the first part is not in yet: nothing is final
        pool.finish(parts[0], (True, {"files": [{"path": "a"}, {"path": "b"}]}, None))
        (response,) = await client.answers()
        assert response["result"] == {"files": [{"path": "a"}, {"path": "b"}],
                                      "truncated": True}
        assert sorted(job.id for job, _ in pool.stopped) == [parts[2].id, parts[3].id]
    asyncio.run(go())


def test_a_failed_part_fails_the_call_and_stops_the_others() -> None:
    async def go() -> None:
        fan = _fan(parts=3, max_results=10)
        pool = FakePool(lambda task: (True, fan, None) if task.kwargs.get("pattern") else None)
        client = Client(dispatcher(pool))
        client.send(request(1, "file.list", {"pattern": "**"}))
        await client.settle()
        pool.finish(pool.jobs[1], (False, ToolError("timeout", "slow"), None))
        (response,) = await client.answers()
        assert response["error"]["data"]["error"] == "timeout"
        assert len(pool.stopped) == 2
    asyncio.run(go())
