"""`GET /files/{path}` and `PUT /files/{path}` (docs/protocol.md, Bytes in and out): a
file's bytes streamed out and in over HTTP at the disk's speed, every rule kept by the
workers as for `/rpc` (confinement, --deny, --read-only, records, history, the quota and
the version checks are theirs). This module only speaks HTTP and moves bytes between
descriptors: it never opens a workspace path. A worker opens the file, or an upload's
spool, and hands the open descriptor over (tools/bytes/handoff.py, through the invoker
like any call); the bytes then go between it and the socket without a worker, base64 or
a pipe in the way.

- GET: the file, opened by `file.read_stream`, is sent by the kernel (sendfile), so
  memory is nothing whatever the file's size. `ETag` is the version, `Range: bytes=`
  answers 206 (one range; 416 past the end), `If-None-Match` 304. The bytes sent are those
  of the version named: a file replaced meanwhile (a rename) leaves the open one as it
  was, and one changed in place is caught before the last byte, which is then withheld
  (the client sees its length unmet).
- PUT: an upload (`file.upload_begin`, the body's length as its `size`), then
  `file.upload_stream` hands its data file, sized and charged to the quota, and the body,
  read as it arrives (rpc/wire/http_conn.py streams it), is written into it in order, each
  chunk in a thread while the socket is read on; `file.upload_commit` checks the size and
  SHA-256 and lands the file whole and at once. `If-Match` is the upload's
  `expected_version` (412 when it no longer matches), `X-Content-SHA256` its `sha256`. A
  body cut off midway aborts the upload: the file stays as it was, the spool is removed.
  201 created, 200 replaced; a failure is the JSON-RPC error's `data` as JSON, with the
  status below.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import os
import re
from typing import Any
from urllib.parse import unquote

import orjson

from chorus_tools.rpc.dispatch.dispatcher import Dispatcher
from chorus_tools.rpc.process.descriptors import Handed
from chorus_tools.rpc.wire.errors import wire_error
from chorus_tools.rpc.wire.http_message import BodyStream, Head, Reply, Response
from chorus_tools.tools.bytes.handoff import READ_STREAM, UPLOAD_STREAM
from chorus_tools.tools.confine.sandbox import version_of
from chorus_tools.tools.errors import from_os_error
from chorus_tools.tools.method import Method

PREFIX = "/files/"
CHUNK = 1 << 20  # one write of a PUT's body into its spool
STEP = 16 << 20  # the room a body of unknown length is given at a time
JSON = [("content-type", "application/json")]
STATUS = {"invalid_params": 400, "path_outside_workspace": 403, "permission_denied": 403,
          "file_not_found": 404, "upload_not_found": 404, "is_directory": 409,
          "not_a_directory": 409, "not_a_regular_file": 409, "already_exists": 409,
          "conflict": 412, "file_too_large": 413, "verification_failed": 422,
          "quota_exceeded": 507, "server_busy": 503, "shutting_down": 503, "timeout": 504}
_IOV_MAX = os.sysconf("SC_IOV_MAX")  # the most pieces one pwritev takes
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


def file_path(head: Head) -> str:
    """The workspace path a /files/ URL names: percent-decoding is HTTP's (a space is
    %20), nothing more (the path itself is never normalised beyond the methods' rules)."""
    return unquote(head.path[len(PREFIX):])


async def get(dispatcher: Dispatcher, head: Head, out: Response) -> None:
    path = file_path(head)
    try:
        opened = await internal(dispatcher, READ_STREAM, {"path": path})
    except Failed as failed:
        out.whole(failed.reply())
        return
    with opened:
        size, version = opened.result["size"], opened.result["version"]
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
        await _send(out, opened.fds[0], version, start, end)


async def _send(out: Response, fd: int, version: str, start: int, end: int) -> None:
    """[start, end) of the open file: all but the last byte, then the file's version
    checked, then the last byte only if it is still the version named."""
    try:
        if end - start > 1 and not await _sent(out, fd, start, end - start - 1):
            return
        if end > start and (version_of(os.fstat(fd)) != version
                            or not await _sent(out, fd, end - 1, 1)):
            out.abort()  # changed in place: the short body tells the client
            return
    except OSError:
        out.abort()
        return
    out.end()


async def _sent(out: Response, fd: int, offset: int, count: int) -> bool:
    """Whether all `count` bytes went (the stream is aborted when they did not)."""
    if await out.sendfile(fd, offset, count) == count:
        return True
    out.abort()  # the file shrank under us
    return False


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
    if (length := body_length(head)) is not None:
        begin["size"] = length
    done = await upload_body(dispatcher, head, out, ("file.upload_begin", begin),
                             "file.upload_commit")
    if done is not None:
        out.whole(Reply(201 if done["created"] else 200, orjson.dumps(done),
                        [*JSON, ("etag", f'"{done["version"]}"')]))


async def upload_body(dispatcher: Dispatcher, head: Head, out: Response,
                      begin: tuple[str, dict[str, Any]], finish: str) -> dict[str, Any] | None:
    """A streamed body into an upload (`begin`, the body, then `finish`): `finish`'s result,
    or None once a failure was answered (nothing is said to a client that went away, or
    was answered 408). An upload not finished is aborted: nothing lands, no spool stays."""
    stream = head.stream
    assert stream is not None
    upload = None
    try:
        upload = (await call(dispatcher, *begin))["upload_id"]
        await _receive(dispatcher, upload, stream, body_length(head),
                       begin[1].get("path", ""))
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


def body_length(head: Head) -> int | None:
    """The body's declared length (h11 holds the body to it), or None (chunked)."""
    if "transfer-encoding" in head.headers:
        return None
    length = head.headers.get("content-length", "0")
    return int(length) if length.isdigit() else None


async def _receive(dispatcher: Dispatcher, upload: str, stream: BodyStream,
                   length: int | None, shown: str) -> None:
    """The body written in order into the upload's data, through the descriptor
    `file.upload_stream` hands: sized to the declared length at once, or for a body of
    unknown length STEP bytes at a time and to its length at its end. One chunk is written
    (in a thread) while the next is read from the socket."""
    if length is None:
        spool, room = await _room_for(dispatcher, upload, 0)
    else:
        spool, room = await _stream_to(dispatcher, upload, length), length
    loop = asyncio.get_running_loop()
    pending: asyncio.Future[None] | None = None
    offset = 0
    digest = hashlib.sha256()
    try:
        while pieces := await stream.take(CHUNK):
            size = sum(map(len, pieces))
            if pending is not None:
                await pending
            if offset + size > room:  # only a body of unknown length grows
                spool.close()
                spool, room = await _room_for(dispatcher, upload, offset + size)
            pending = loop.run_in_executor(None, _write, spool.fds[0], pieces, offset,
                                           digest, shown)
            offset += size
        if pending is not None:
            await pending
        spool.close()  # the room a body of unknown length did not use goes; the digest
        spool = await _stream_to(dispatcher, upload, offset, digest.hexdigest())
    finally:
        if pending is not None:  # never close the descriptor under a write
            await asyncio.gather(pending, return_exceptions=True)
        spool.close()


async def _room_for(dispatcher: Dispatcher, upload: str, needed: int) -> tuple[Handed, int]:
    """The spool with room for `needed` bytes and a STEP more, or for `needed` alone when
    the quota has no room for the step: a body is refused only for bytes it sent."""
    try:
        return await _stream_to(dispatcher, upload, needed + STEP), needed + STEP
    except Failed as failed:
        if failed.data.get("error") != "quota_exceeded":
            raise
    return await _stream_to(dispatcher, upload, needed), needed


async def _stream_to(dispatcher: Dispatcher, upload: str, size: int,
                     written_sha256: str | None = None) -> Handed:
    params: dict[str, Any] = {"upload_id": upload, "size": size}
    if written_sha256 is not None:
        params["written_sha256"] = written_sha256
    return await internal(dispatcher, UPLOAD_STREAM, params)


def _write(fd: int, pieces: list[bytes], offset: int, digest: Any, shown: str) -> None:
    """The pieces one after the other at `offset`, in as few system calls as the kernel
    takes them (one, almost always), and into the body's digest (in order: one write
    runs at a time)."""
    for piece in pieces:
        digest.update(piece)
    views = [memoryview(piece) for piece in pieces]
    try:
        while views:
            written = os.pwritev(fd, views[:_IOV_MAX], offset)
            offset += written
            while views and written >= len(views[0]):
                written -= len(views.pop(0))
            if views:
                views[0] = views[0][written:]
    except OSError as exc:
        raise Failed(wire_error(from_os_error(exc, shown, "write_failed"))) from None


async def abort_upload(dispatcher: Dispatcher, upload: str) -> None:
    try:
        await call(dispatcher, "file.upload_abort", {"upload_id": upload})
    except Failed:
        pass  # already gone
