"""`GET /archive/{dir}` and `PUT /archive/{dir}` (docs/protocol.md, Bytes in and out): a
directory taken out and put in as tar or tar.gz, as calls of the archive methods through
the same dispatcher as `/rpc` (tools/bytes/archive_*.py do the work in the workers); this
module only speaks HTTP and never touches a file.

- GET: `archive.export` chunk by chunk, each call resuming from the cursor the one before
  returned, made while that one is sent (a worker builds the next chunk as the socket
  takes this one) and sent once the socket drained it, so memory is two chunks at most
  whatever the tree's size, and no spool is written (it works under --read-only). The
  first chunk is made before the 200 is sent, so an error about the
  directory is a whole reply; one later (a file changed midway) cuts the connection,
  leaving the client a chunked body without its last chunk, which it knows is short.
- PUT: the body, read as it arrives, goes into the archive's spool (`archive.import_begin`,
  `file.upload_part` per CHUNK), then `archive.import_commit` validates it whole and lands
  it; a body cut off midway, or an error, removes the spool and lands nothing.
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import parse_qs, quote

import orjson
import pybase64

from chorus_tools.rpc.dispatch.dispatcher import Dispatcher
from chorus_tools.rpc.wire.http_calls import JSON, Failed, call
from chorus_tools.rpc.wire.http_files import file_path
from chorus_tools.rpc.wire.http_upload import upload_body
from chorus_tools.rpc.wire.http_message import Head, Reply, Response

PREFIX = "/archive/"
_TYPES = {"tar": "application/x-tar", "tar.gz": "application/gzip"}


def _dir(head: Head) -> str:
    return file_path(head, PREFIX) or "."


async def get(dispatcher: Dispatcher, head: Head, out: Response) -> None:
    query = parse_qs(head.query)
    params: dict[str, Any] = {"path": _dir(head),
                              "format": query.get("format", ["tar.gz"])[-1],
                              "include_ignored": query.get("include_ignored", ["false"])[-1]
                              in ("true", "1", "yes")}
    try:
        part = await call(dispatcher, "archive.export", params)
    except Failed as failed:
        out.whole(failed.reply())
        return
    name = params["path"].rstrip("/").rpartition("/")[2] or "workspace"
    if name == ".":
        name = "workspace"
    out.stream(200, [("content-type", _TYPES[params["format"]]),
                     ("content-disposition", _disposition(f'{name}.{params["format"]}'))])
    while out.open:
        after = None if part["cursor"] is None else asyncio.ensure_future(call(
            dispatcher, "archive.export", {**params, "cursor": part["cursor"]}))
        out.chunk(pybase64.b64decode(part["data"]))
        if after is None:
            out.end()
            return
        await out.drained()
        try:
            part = await after
        except Failed:
            break
    out.abort()


def _disposition(filename: str) -> str:
    """Content-Disposition naming the archive (RFC 6266): `filename` in printable ASCII
    but a quote or backslash (anything else `_`), since a header carries nothing more,
    and the exact name as `filename*`, percent-encoded UTF-8 (a byte that is no UTF-8,
    its own escape)."""
    plain = "".join(c if " " <= c <= "~" and c not in '"\\' else "_" for c in filename)
    exact = quote(filename, safe="", errors="surrogateescape")
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{exact}"


async def put(dispatcher: Dispatcher, head: Head, out: Response) -> None:
    done = await upload_body(dispatcher, head, out,
                             ("archive.import_begin", {"path": _dir(head)}),
                             "archive.import_commit")
    if done is not None:
        out.whole(Reply(200, orjson.dumps(done), list(JSON)))
