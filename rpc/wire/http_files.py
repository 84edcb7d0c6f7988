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
  answers 206 (one range; 416 past the end; ignored under an `If-Range` naming another
  version), `If-None-Match` (a list, compared weakly) 304. The bytes sent are those
  of the version named: a file replaced meanwhile (a rename) leaves the open one as it
  was, and one changed in place is caught before the last byte, which is then withheld
  (the client sees its length unmet).
- PUT: an upload (`file.upload_begin`, the body's length as its `size`), then
  `file.upload_stream` hands its data file, sized and charged to the quota, and the body
  is read, hashed and written into it at once (rpc/wire/http_upload.py);
  `file.upload_commit` checks the size and SHA-256 and lands the file whole and at once.
  `If-Match` is the upload's `expected_version` (412 when it no longer matches; of a
  list, the file's version when listed; `*`: 412
  when there is no file to replace), `If-None-Match: *` makes it create-only (412 when
  the file exists),
  `X-Content-SHA256` its `sha256`. A body cut off midway aborts the upload: the file
  stays as it was, the spool is removed. 201 created, 200 replaced; a failure is the
  JSON-RPC error's `data` as JSON, with its status (rpc/wire/http_calls.py). A PUT over
  a file this server landed itself is not read again to be hashed for its history
  (rpc/dispatch/landed.py).
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import unquote

import orjson

from chorus_tools.rpc.dispatch.dispatcher import Dispatcher
from chorus_tools.rpc.wire.envelope import dumps
from chorus_tools.rpc.wire.http_calls import JSON, Failed, call, internal
from chorus_tools.rpc.wire.http_message import Head, Reply, Response
from chorus_tools.rpc.wire.http_upload import body_length, upload_body
from chorus_tools.tools.bytes.handoff import READ_STREAM
from chorus_tools.tools.confine.sandbox import version_of

PREFIX = "/files/"
_RANGE = re.compile(r"bytes=(\d*)-(\d*)")


def file_path(head: Head, prefix: str = PREFIX) -> str:
    """The workspace path a /files/ (or /archive/) URL names: percent-decoding is HTTP's
    (a space is %20), a byte that is no UTF-8 its `\\udcXX` escape, as the methods take
    a name that is not UTF-8 (docs/protocol.md, Paths), never U+FFFD, which would name
    another file; nothing more (the path is never normalised beyond the methods' rules)."""
    return unquote(head.path[len(prefix):], errors="surrogateescape")


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
        if _none_match(head.headers.get("if-none-match"), tag):
            out.whole(Reply(304, b"", common))
            return
        # a Range under an If-Range that no longer names this version is ignored: the
        # client's earlier bytes are of another version (RFC 9110, 13.1.5)
        if_range = head.headers.get("if-range")
        span = _range(head.headers.get("range") if if_range in (None, tag) else None, size)
        if span is None:
            out.whole(Reply(416, b"", [("content-range", f"bytes */{size}")]))
            return
        start, end, partial = span
        headers = [*common, ("content-type", "application/octet-stream"),
                   ("content-length", str(end - start))]
        if partial:
            headers.append(("content-range", f"bytes {start}-{end - 1}/{size}"))
        out.stream(206 if partial else 200, headers)
        if head.method == "HEAD":  # GET's head alone: the length, version and range
            out.end()
        elif await _send(out, opened.fds[0], version, start, end):
            dispatcher.streamed_out(end - start)


async def _send(out: Response, fd: int, version: str, start: int, end: int) -> bool:
    """[start, end) of the open file: all but the last byte, then the file's version
    checked, then the last byte only if it is still the version named. Whether all went."""
    try:
        if end - start > 1 and not await _sent(out, fd, start, end - start - 1):
            return False
        if end > start and (version_of(os.fstat(fd)) != version
                            or not await _sent(out, fd, end - 1, 1)):
            out.abort()  # changed in place: the short body tells the client
            return False
    except OSError:
        out.abort()
        return False
    out.end()
    return True


async def _sent(out: Response, fd: int, offset: int, count: int) -> bool:
    """Whether all `count` bytes went (the stream is aborted when they did not)."""
    if await out.sendfile(fd, offset, count) == count:
        return True
    out.abort()  # the file shrank under us
    return False


def _none_match(given: str | None, tag: str) -> bool:
    """Whether `If-None-Match` names the file's ETag: `*`, or a list of tags compared
    weakly (RFC 9110, 13.1.2: `W/` ignored), a bare version accepted as its tag."""
    if given is None:
        return False
    tags = [t.strip().removeprefix("W/") for t in given.split(",")]
    return "*" in tags or any(t == tag or f'"{t}"' == tag for t in tags)


def _range(given: str | None, size: int) -> tuple[int, int, bool] | None:
    """[start, end) of a single `bytes=` range and True, a 206 even when it spans the
    whole file (the whole file and False without one, or for a form this server does not
    serve: several ranges); None when it lies past the end."""
    found = _RANGE.fullmatch(given.strip()) if given else None
    if found is None or found.group(0) == "bytes=-" or not size and found.group(1) == "":
        return 0, size, False  # an empty file's suffix: no bytes to range over
    first, last = found.groups()
    if not first:  # the last N bytes; the last 0 are none (RFC 9110, 14.1.1)
        return (max(size - int(last), 0), size, True) if int(last) else None
    start = int(first)
    if last and int(last) < start:  # not a valid range: ignored (RFC 9110, 14.2)
        return 0, size, False
    end = size if not last else min(int(last) + 1, size)
    if start >= size or end <= start:
        return None
    return start, end, True


async def put(dispatcher: Dispatcher, head: Head, out: Response) -> None:
    path = file_path(head)
    begin: dict[str, Any] = {"path": path}
    match = head.headers.get("if-match", "").strip()
    if match and match != "*":
        begin["expected_version"] = await _if_match(dispatcher, path, match)
    create_only = head.headers.get("if-none-match", "").strip() == "*"
    if create_only:
        begin["overwrite"] = False  # the commit refuses one created since the check
    if (refused := await _unmet(dispatcher, path, match == "*", create_only)) is not None:
        out.whole(refused)
        return
    if "x-content-sha256" in head.headers:
        begin["sha256"] = head.headers["x-content-sha256"].strip()
    if (length := body_length(head)) is not None:
        begin["size"] = length
    done = await upload_body(dispatcher, head, out, ("file.upload_begin", begin),
                             "file.upload_commit")
    if done is not None:
        out.whole(Reply(201 if done["created"] else 200, orjson.dumps(done),
                        [*JSON, ("etag", f'"{done["version"]}"')]))


async def _if_match(dispatcher: Dispatcher, path: str, given: str) -> str:
    """The version an `If-Match` asks the commit to find: its one tag, or of a list (RFC
    9110, 13.1.1: any tag may match, compared strongly, so `W/` never does) the file's
    own when listed, else the first, which the upload's beginning refuses (412)."""
    versions = [t.strip() for t in given.split(",") if t.strip()]
    versions = [v[1:-1] if len(v) > 1 and v[0] == v[-1] == '"' else v for v in versions]
    if len(versions) > 1:
        try:
            current = (await call(dispatcher, "file.info", {"path": path}))["version"]
        except Failed:
            current = None
        if current in versions:
            return current
    return versions[0] if versions else given


async def _unmet(dispatcher: Dispatcher, path: str, must_exist: bool,
                 must_not: bool) -> Reply | None:
    """412 when `If-Match: *` names a file that is not there, or `If-None-Match: *` one
    that is (RFC 9110, 13.1.1 and 13.1.2); None when neither applies or both hold."""
    if not must_exist and not must_not:
        return None
    try:
        await call(dispatcher, "file.info", {"path": path})
        exists = True
    except Failed as failed:
        if failed.data.get("error") != "file_not_found":
            return failed.reply()
        exists = False
    if exists == must_exist:
        return None
    said = ("is not there, and If-Match: * asked for a file to replace" if must_exist else
            "exists, and If-None-Match: * asked to create it only")
    return Reply(412, dumps({
        "error": "already_exists" if must_not else "file_not_found", "path": path,
        "message": f"{path} {said}: nothing was written."}), list(JSON))
