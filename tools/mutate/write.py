"""file.write: create or replace a file with UTF-8 text, atomically (see tools.atomic).

`encoding` is not a file.write parameter: it serves the scope set's write_file, which
writes the encodings file.read reports (a BOM for utf-8-sig and UTF-16)."""

from __future__ import annotations

from typing import Any

from chorus_tools.tools.mutate.atomic import Current, mutate
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.confine.sandbox import version_of
from chorus_tools.tools.patch.diagnostics import (Diagnosis, Judge, refuse_introduced,
                                                  with_diagnostics)
from chorus_tools.tools.read.text import encode


def write(ctx: ToolContext, path: str, content: str, create_dirs: bool = True,
          overwrite: bool = True, expected_version: str | None = None,
          encoding: str = "utf-8") -> dict[str, Any]:
    """Write `content` exactly as given (UTF-8, no line-ending conversion). Identical
    content writes nothing, so the version an agent holds stays valid. A file in a
    language the server parses gets `diagnostics` (docs/protocol.md, Diagnostics)."""
    rel = ctx.ws.rel(path)
    data = _encode(content, encoding)
    limit = ctx.limits.max_write_bytes
    if len(data) > limit:
        raise ToolError("file_too_large",
                        f"Content is {len(data)} bytes, over the {limit}-byte write limit: "
                        f"{path}. Write a smaller file, or split the content.",
                        path=path, size=len(data), limit=limit)

    judge = Judge.of(ctx, rel, content, shown=path)
    found: list[Diagnosis | None] = [None]

    def compute(current: Current) -> bytes:
        if current.stat is not None and not overwrite:
            raise ToolError("already_exists",
                            f"File already exists: {path}. Pass overwrite: true to replace "
                            "it, or use file.patch to edit it.", path=path)
        found[0] = judge.replaced(current, content)
        refuse_introduced(judge, found[0], path)
        return data

    out = mutate(ctx, rel, shown=path, compute=compute, create_dirs=create_dirs,
                 expected_version=expected_version, read_current=judge.wants)
    assert out.stat is not None, "compute always leaves a file"
    result = {"success": True, "bytes_written": len(data), "created": out.created,
              "version": version_of(out.stat)}
    return with_diagnostics(result, found[0])


def _encode(content: str, encoding: str) -> bytes:
    try:
        return encode(content, encoding)
    except UnicodeEncodeError as exc:
        what = ("a lone surrogate, which is not valid Unicode" if encoding != "latin-1"
                else f"{content[exc.start]!r}, which latin-1 cannot represent")
        raise ToolError("invalid_params",
                        f"'content' holds {what} at character {exc.start}; it cannot be "
                        f"written as {encoding}.", param="content") from None
