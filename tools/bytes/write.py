"""file.write_bytes: any bytes, through the one write path (tools/mutate/atomic.py), so the
file is replaced atomically and history, records, --deny, --read-only and
`expected_version` hold exactly as for file.write."""

from __future__ import annotations

from typing import Any

from chorus_tools.tools.bytes.payload import checked_digest, decoded, sha256_of, verify
from chorus_tools.tools.confine.sandbox import version_of
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.mutate.atomic import Current, mutate


def refuse_existing(current: Current, overwrite: bool, shown: str) -> None:
    if current.stat is not None and not overwrite:
        raise ToolError("already_exists", f"File already exists: {shown}. Pass overwrite: "
                        "true to replace it.", path=shown)


def write_bytes(ctx: ToolContext, path: str, data: str, create_dirs: bool = True,
                overwrite: bool = True, expected_version: str | None = None,
                sha256: str | None = None) -> dict[str, Any]:
    rel = ctx.ws.rel(path)
    digest = checked_digest(sha256)
    content = decoded(data)
    limit = ctx.limits.max_write_bytes
    if len(content) > limit:
        raise ToolError("file_too_large", f"The data is {len(content)} bytes, over the "
                        f"{limit}-byte write limit: {path}. Send it in parts "
                        "(file.upload_begin).", path=path, size=len(content), limit=limit)
    verify(path, expected_sha256=digest, actual_sha256=sha256_of(content))

    def compute(current: Current) -> bytes:
        refuse_existing(current, overwrite, path)
        return content

    out = mutate(ctx, rel, shown=path, compute=compute, create_dirs=create_dirs,
                 expected_version=expected_version, read_current=False)
    assert out.stat is not None
    return {"success": True, "bytes_written": len(content), "created": out.created,
            "version": version_of(out.stat)}
