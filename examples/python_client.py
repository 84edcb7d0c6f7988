"""A chorus-tools client in Python: asyncio and the standard library, nothing else.

    python examples/python_client.py WORKSPACE [SERVER COMMAND...]

The server command defaults to `chorus-tools`. The client writes a file, reads it,
patches it with the version it read (expected_version), recovers from a find_not_found
using the hint, and cancels a search it no longer needs.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from typing import Any


class RpcError(Exception):
    """A JSON-RPC error response: `code`, and `data` with the error's name in data.error."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error["message"])
        self.code = error["code"]
        self.data = error.get("data") or {}


class Client:
    """Newline-delimited JSON-RPC over the server's stdin/stdout. Responses may arrive in
    any order: each is matched to its request by id."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.ids = itertools.count(1)
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.reader = asyncio.ensure_future(self._read())

    @classmethod
    async def spawn(cls, command: list[str], workspace: str) -> "Client":
        process = await asyncio.create_subprocess_exec(
            *command, "--workspace", workspace, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, limit=64 * 1024 * 1024)  # a reply is one line
        return cls(process)

    async def _read(self) -> None:
        async for line in self.process.stdout:
            message = json.loads(line)
            future = self.pending.pop(message.get("id"), None)
            if future is not None and not future.done():
                future.set_result(message)

    def request(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        rid = next(self.ids)
        self.pending[rid] = asyncio.get_running_loop().create_future()
        return rid, {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}

    def send(self, *messages: dict[str, Any]) -> None:
        self.process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))

    async def response(self, rid: int) -> Any:
        message = await self.pending[rid]
        if "error" in message:
            raise RpcError(message["error"])
        return message["result"]

    async def call(self, method: str, **params: Any) -> Any:
        rid, message = self.request(method, params)
        self.send(message)
        return await self.response(rid)

    async def close(self) -> int:
        self.process.stdin.close()  # end of input: the server finishes and exits 0
        code = await self.process.wait()
        await self.reader
        return code


async def main(workspace: str, command: list[str]) -> None:
    client = await Client.spawn(command, workspace)
    await client.call("file.write", path="hello.py",
                      content='def greet(name):\n    return "hello, " + name\n')

    read = await client.call("file.read", path="hello.py")
    print(f"read hello.py: {read['total_lines']} lines")

    patched = await client.call("file.patch", path="hello.py", expected_version=read["version"],
                                patches=[{"find": '"hello, "', "replace": '"Hello, "'}])
    print(f"patched with expected_version: {patched['replacements']} replacement")

    fix = 'return "Hello " + name'  # a typo: the file says "Hello, "
    try:
        await client.call("file.patch", path="hello.py",
                          patches=[{"find": fix, "replace": "unused"}])
    except RpcError as err:
        if err.data.get("error") != "find_not_found" or err.data["hint"] is None:
            raise
        hint = err.data["hint"]
        print(f"find_not_found: closest region lines {hint['start_line']}-{hint['end_line']}: "
              f"{hint['text'].strip()}")
        patched = await client.call(
            "file.patch", path="hello.py",
            patches=[{"find": hint["text"], "replace": '    return f"Hello, {name}!"'}])
        print(f"patched from the hint: {patched['replacements']} replacement")

    rid, search = client.request("file.search", {"pattern": "greet"})
    cancel = {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": rid}}
    client.send(search, cancel)  # one write: the cancel arrives before the search can run
    try:
        found = await client.response(rid)
        print(f"search finished before the cancel: {len(found['matches'])} matches")
    except RpcError as err:
        print(f"search cancelled: {err.code} {err.data['error']}")

    final = await client.call("file.read", path="hello.py", raw=True)
    print("final hello.py:\n" + final["content"], end="")
    print(f"server exited {await client.close()}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    asyncio.run(main(sys.argv[1], sys.argv[2:] or ["chorus-tools"]))
