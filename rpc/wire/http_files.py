"""`GET /files/{path}` and `PUT /files/{path}` (docs/protocol.md, Bytes in and out): a
file's bytes streamed out and in over HTTP, as calls of the bytes methods through the same
dispatcher as `/rpc` (so confinement, --deny, --read-only, records, history and the
version checks are theirs); this module only speaks HTTP and never touches a file.

- GET: `file.read_bytes` range by range, each sent once the socket drained the one
  before: memory is one range, whatever the file's size. `ETag` is the version, `Range:
  bytes=` answers 206 (one range; 416 past the end), `If-None-Match` 304. A file that
  changes between two ranges ends the response early (its length is then not met).
- PUT: the body, read as it arrives (rpc/wire/http_conn.py streams it), goes into an upload
  (`file.upload_begin`, a part per CHUNK, `file.upload_commit`), so the file appears whole
  and at once; `If-Match` is the upload's `expected_version` (412 when it no longer
  matches), `X-Content-SHA256` its `sha256`. A body cut off midway aborts the upload: the
  file stays as it was, the spool is removed. 201 created, 200 replaced; a failure is the
  JSON-RPC error's `data` as JSON, with the status below.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import re
from typing import Any
from urllib.parse import unquote

import orjson

from chorus_tools.rpc.dispatch.dispatcher import Dispatcher
from chorus_tools.rpc.wire.http_message import Head, Reply, Response

PREFIX = "/files/"
CHUNK = 1 << 20  # one read range or upload part: the memory a transfer holds per process
JSON = [("content-type", "application/json")]
STATUS = {"invalid_params": 400, "path_outside_workspace": 403, "permission_denied": 403,
          "file_not_found": 404, "upload_not_found": 404, "is_directory": 409,
          "not_a_directory": 409, "not_a_regular_file": 409, "already_exists": 409,
          "conflict": 412, "file_too_large": 413, "verification_failed": 422,
          "quota_exceeded": 507, "server_busy": 503, "shutting_down": 503, "timeout": 504}
_RANGE = re.compile(r"bytes=(\d*)-(\d*)")
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


def file_path(head: Head) -> str:
    """The workspace path a /files/ URL names: percent-decoding is HTTP's (a space is
    %20), nothing more (the path itself is never normalised beyond the methods' rules)."""
    return unquote(head.path[len(PREFIX):])


async def get(dispatcher: Dispatcher, head: Head, out: Response) -> None:
    path = file_path(head)
    try:
        first = await call(dispatcher, "file.read_bytes", {"path": path, "length": 1})
    except Failed as failed:
        out.whole(failed.reply())
        return
    size, version = first["size"], first["version"]
    tag = f'"{version}"'
    common = [("etag", tag), ("accept-ranges", "bytes")]
    if head.headers.get("if-none-match") in (tag, version, "*"):
        out.whole(Reply(304, b"", common))
        return
    span = _range(head.headers.get("range"), size)
    if span is None:
        out.whole(Reply(416, b"", [("content-range", f"bytes */{size}")]))
        return
    start, end = span
    headers = [*common, ("content-type", "application/octet-stream"),
               ("content-length", str(end - start))]
    if (start, end) != (0, size):
        headers.append(("content-range", f"bytes {start}-{end - 1}/{size}"))
    out.stream(206 if (start, end) != (0, size) else 200, headers)
    await _send(dispatcher, path, version, start, end, out)


async def _send(dispatcher: Dispatcher, path: str, version: str, start: int, end: int,
                out: Response) -> None:
    offset = start
    while offset < end and out.open:
        try:
            part = await call(dispatcher, "file.read_bytes", {
                "path": path, "offset": offset, "length": min(CHUNK, end - offset)})
        except Failed:
            break
        if part["version"] != version or not part["length"]:
            break  # changed (or shrank) under us: the short body tells the client
        out.chunk(base64.b64decode(part["data"]))
        offset += part["length"]
        await out.drained()
    if offset == end:
        out.end()
    else:
        out.abort()


def _range(given: str | None, size: int) -> tuple[int, int] | None:
    """[start, end) of a single `bytes=` range (the whole file without one, or for a form
    this server does not serve: several ranges); None when it lies past the end."""
    found = _RANGE.fullmatch(given.strip()) if given else None
    if found is None or found.group(0) == "bytes=-":
        return 0, size
    first, last = found.groups()
    if not first:  # the last N bytes
        return max(size - int(last), 0), size
    start = int(first)
    end = size if not last else min(int(last) + 1, size)
    if start >= size or end <= start:
        return None
    return start, end


async def put(dispatcher: Dispatcher, head: Head, out: Response) -> None:
    begin: dict[str, Any] = {"path": file_path(head)}
    if "if-match" in head.headers:
        begin["expected_version"] = head.headers["if-match"].strip().strip('"')
    if "x-content-sha256" in head.headers:
        begin["sha256"] = head.headers["x-content-sha256"].strip()
    done = await upload_body(dispatcher, head, out, ("file.upload_begin", begin),
                             "file.upload_commit")
    if done is not None:
        out.whole(Reply(201 if done["created"] else 200, orjson.dumps(done),
                        [*JSON, ("etag", f'"{done["version"]}"')]))


async def upload_body(dispatcher: Dispatcher, head: Head, out: Response,
                      begin: tuple[str, dict[str, Any]], finish: str) -> dict[str, Any] | None:
    """A streamed body into an upload (`begin`, parts, then `finish`): `finish`'s result,
    or None once a failure was answered (nothing is said to a client that went away, or
    was answered 408). An upload not finished is aborted: nothing lands, no spool stays."""
    stream = head.stream
    assert stream is not None
    upload = None
    try:
        upload = (await call(dispatcher, *begin))["upload_id"]
        offset = 0
        while data := await stream.read(CHUNK):
            await call(dispatcher, "file.upload_part", {
                "upload_id": upload, "offset": offset,
                "data": base64.b64encode(data).decode("ascii")})
            offset += len(data)
        done = await call(dispatcher, finish, {"upload_id": upload})
        upload = None
        return done
    except Failed as failed:
        out.whole(failed.reply())
        return None
    except ConnectionError:
        return None
    finally:
        if upload is not None:
            await abort_upload(dispatcher, upload)


async def abort_upload(dispatcher: Dispatcher, upload: str) -> None:
    try:
        await call(dispatcher, "file.upload_abort", {"upload_id": upload})
    except Failed:
        pass  # already gone
