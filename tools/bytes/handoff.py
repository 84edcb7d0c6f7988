"""What `/files` asks of a worker so the server process can move the bytes itself
(docs/protocol.md, Bytes in and out): a file, or an upload's spool, opened here under every
rule and handed over as a descriptor (tools/handing.py). These are no methods a client can
call (a descriptor cannot travel in JSON): rpc/wire/http_files.py calls them through the
invoker, so ordering, --deny, --read-only, the quota and the records hold as for any call.

- `file.read_stream` opens a regular file for reading, as file.read_bytes does, and hands
  it with its size and version: a GET sends it with sendfile, and the bytes sent are those
  of the version its ETag names even if the file is replaced meanwhile (a rename leaves
  the open inode as it was).
- `file.upload_stream` makes an upload's data file `size` bytes long, charges that growth
  to the quota now, and hands it open for writing: a PUT writes its body through it, in
  order, then commits with file.upload_commit (which checks size and SHA-256 and lands it
  by the one write path) or aborts. A body of unknown length asks again as it grows; at
  the body's end it asks once more with the length it had and `written_sha256`, the
  digest of what it wrote, which the commit checks and keeps instead of reading the whole
  spool again (only this server-side call can say it: no client can name the method)."""

from __future__ import annotations

from chorus_tools.tools.bytes.spool import Spool
from chorus_tools.tools.bytes.payload import checked_digest
from chorus_tools.tools.bytes.table import SHA256, UPLOAD_ID
from chorus_tools.tools.confine.sandbox import version_of
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.handing import Handing
from chorus_tools.tools.method import NON_NEGATIVE, PATH, VERSION, Method, obj

_TARGET = "chorus_tools.tools.bytes.handoff:"


def read_stream(ctx: ToolContext, path: str) -> Handing:
    fd, st = ctx.ws.open_regular(ctx.ws.rel(path), shown=path)
    return Handing({"size": st.st_size, "version": version_of(st)}, (fd,))


def upload_stream(ctx: ToolContext, upload_id: str, size: int,
                  written_sha256: str | None = None) -> Handing:
    with Spool.open(ctx, upload_id) as spool:
        return Handing({"size": size}, (spool.reserve(size, checked_digest(
            written_sha256, "written_sha256")),))


READ_STREAM = Method(
    "file.read_stream", _TARGET + "read_stream",
    "Open a regular file for the server to send (GET /files).",
    obj(["path"], path=PATH), obj(["size", "version"], size=NON_NEGATIVE, version=VERSION),
    stoppable=True, idempotent=True, mcp_tool=False)
UPLOAD_STREAM = Method(
    "file.upload_stream", _TARGET + "upload_stream",
    "Size an upload's data and open it for the server to write (PUT /files).",
    obj(["upload_id", "size"], upload_id=UPLOAD_ID, size=NON_NEGATIVE,
        written_sha256=SHA256),
    obj(["size"], size=NON_NEGATIVE), mutating=True, path_params=(), mcp_tool=False)
