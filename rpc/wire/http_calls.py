"""The calls `/files` and `/archive` make of the server itself (docs/protocol.md, Bytes in
and out), through the dispatcher like any `/rpc` call, and how a failed one is answered
over HTTP: its JSON-RPC error's `data` as the JSON body, with the status below."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import orjson

from chorus_tools.rpc.dispatch.dispatcher import Dispatcher
from chorus_tools.rpc.process.descriptors import Handed
from chorus_tools.rpc.wire.errors import wire_error
from chorus_tools.rpc.wire.http_message import Reply
from chorus_tools.tools.method import Method

JSON = [("content-type", "application/json")]
STATUS = {"invalid_params": 400, "path_outside_workspace": 403, "permission_denied": 403,
          "file_not_found": 404, "upload_not_found": 404, "is_directory": 409,
          "not_a_directory": 409, "not_a_regular_file": 409, "already_exists": 409,
          "conflict": 412, "file_too_large": 413, "verification_failed": 422,
          "quota_exceeded": 507, "server_busy": 503, "shutting_down": 503, "timeout": 504}
_ids = itertools.count(1)


class Failed(Exception):
    """A bytes method answered an error: its data travels as the HTTP body."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message", ""))
        self.data = error.get("data") or {"error": "internal_error",
                                          "message": error.get("message", "")}

    def reply(self) -> Reply:
        status = STATUS.get(self.data.get("error", ""), 500)
        if self.data.get("errno") == "ENOSPC":
            status = 507
        return Reply(status, orjson.dumps(self.data), list(JSON))


async def internal(dispatcher: Dispatcher, method: Method, params: dict[str, Any]
                   ) -> Handed:
    """One of the calls that hand a descriptor (tools/bytes/handoff.py); Failed on an
    error. The caller closes what it gets."""
    ok, payload = await dispatcher.internal(method, params, f"http-files-{next(_ids)}")
    if not ok:
        raise Failed(wire_error(payload))
    return payload


async def call(dispatcher: Dispatcher, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One call through the dispatcher, as `/rpc` would make it; Failed on an error."""
    answered: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
    body = orjson.dumps({"jsonrpc": "2.0", "id": f"http-files-{next(_ids)}",
                         "method": method, "params": params})
    dispatcher.submit(body, lambda reply: None if answered.done() else
                      answered.set_result(reply))
    reply = await answered
    if "error" in reply:
        raise Failed(reply["error"])
    return reply["result"]
