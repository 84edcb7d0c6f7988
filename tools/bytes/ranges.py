"""file.read_bytes: a byte range of any regular file, text or binary, as base64.

The range is read with pread from the descriptor the sandbox opened (confined, --deny,
never a FIFO or device), so memory follows `length`, never the file's size; `version` is
the file's as it was opened, so a client reading in ranges can tell the file changed
between two of them."""

from __future__ import annotations

import os
from typing import Any

from chorus_tools.tools.bytes.payload import encoded
from chorus_tools.tools.confine.sandbox import version_of
from chorus_tools.tools.context import MIB, ToolContext
from chorus_tools.tools.errors import ToolError, from_os_error

DEFAULT_LENGTH = MIB


def read_range(fd: int, offset: int, length: int) -> bytes:
    """Up to `length` bytes at `offset` (fewer only at the end of the file)."""
    chunks, got = [], 0
    while got < length:
        chunk = os.pread(fd, length - got, offset + got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_bytes(ctx: ToolContext, path: str, offset: int = 0,
               length: int | None = None) -> dict[str, Any]:
    """`length` left out is 1 MiB, or the chunk limit when that is lower: a client that
    named no length is never refused for one."""
    limit = ctx.limits.max_chunk_bytes
    if length is None:
        length = min(DEFAULT_LENGTH, limit)
    if length > limit:
        raise ToolError("invalid_params", f"'length' is {length}, over the {limit}-byte "
                        "chunk limit (--max-chunk-bytes): read the file in several ranges.",
                        param="length", limit=limit)
    rel = ctx.ws.rel(path)
    fd, st = ctx.ws.open_regular(rel, shown=path)
    size = st.st_size
    try:  # past the end is empty: pread takes no offset past 63 bits (an OverflowError)
        data = read_range(fd, offset, length) if offset < size else b""
    except OSError as exc:
        raise from_os_error(exc, path) from None
    finally:
        os.close(fd)
    return {"data": encoded(data), "offset": offset, "length": len(data), "size": size,
            "eof": offset + len(data) >= size, "version": version_of(st)}
