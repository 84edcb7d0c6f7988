"""What an audit record says of a file that a failed call never looked at: its hash as it
is now, before and after alike, since a failed call changes nothing."""

from __future__ import annotations

import os
from typing import Any

from chorus_tools.tools.context import ToolContext, sha256_hex
from chorus_tools.tools.errors import ToolError


def current_hashes(ctx: ToolContext, path: str) -> dict[str, Any]:
    """Both hashes of the regular file at `path` (through in-workspace symlinks, as a
    write would go), or nulls where there is no such file."""
    try:
        fd, st = ctx.ws.open_regular(ctx.ws.rel(path), shown=path)
    except ToolError:
        return {"sha256_before": None, "sha256_after": None}
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(fd)
    digest = sha256_hex(b"".join(chunks))
    return {"sha256_before": digest, "sha256_after": digest}
