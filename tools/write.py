"""file.write: create or replace a file with UTF-8 text, atomically (see tools.atomic)."""

from __future__ import annotations

from typing import Any

from chorus_tools.tools.atomic import Current, mutate
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.sandbox import version_of


def write(ctx: ToolContext, path: str, content: str, create_dirs: bool = True,
          overwrite: bool = True, expected_version: str | None = None) -> dict[str, Any]:
    """Write `content` exactly as given (UTF-8, no line-ending conversion). Identical
    content writes nothing, so the version an agent holds stays valid."""
    rel = ctx.ws.rel(path)
    data = _encode(content)
    limit = ctx.limits.max_write_bytes
    if len(data) > limit:
        raise ToolError("file_too_large",
                        f"Content is {len(data)} bytes, over the {limit}-byte write limit: "
                        f"{path}. Write a smaller file, or split the content.",
                        path=path, size=len(data), limit=limit)

    def compute(current: Current) -> bytes:
        if current.stat is not None and not overwrite:
            raise ToolError("already_exists",
                            f"File already exists: {path}. Pass overwrite: true to replace "
                            "it, or use file.patch to edit it.", path=path)
        return data

    out = mutate(ctx, rel, shown=path, compute=compute, create_dirs=create_dirs,
                 expected_version=expected_version, read_current=False)
    return {"success": True, "bytes_written": len(data), "created": out.created,
            "version": version_of(out.stat)}


def _encode(content: str) -> bytes:
    try:
        return content.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError("invalid_params",
                        f"'content' holds a lone surrogate at character {exc.start}, which "
                        "is not valid Unicode and cannot be written as UTF-8.",
                        param="content") from None
