"""archive.import_begin and archive.import: an archive uploaded in parts (file.upload_part)
and extracted into a directory all or nothing (tools/bytes/archive_in.py); `archive.read`
(tools/bytes/archive_out.py) is the way out. The HTTP routes /archive/{dir} are made of
these calls (rpc/wire/http_files.py)."""

from __future__ import annotations

from typing import Any

from chorus_tools.tools.bytes.archive_in import land, stage
from chorus_tools.tools.bytes.spool import Meta, Spool
from chorus_tools.tools.confine.sandbox import ROOT
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.mutate.dirs import create as make_dir


def import_begin(ctx: ToolContext, path: str = ".") -> dict[str, Any]:
    """A spool for an archive to extract into directory `path` (made if missing, as
    mkdir -p: a file there is not_a_directory now, not after the upload)."""
    rel = ctx.ws.rel(path, allow_empty=True)
    if rel != ROOT:
        make_dir(ctx, path)
    return {"upload_id": Spool.begin(ctx, Meta(path=path or ".", archive=True))}


def archive_import(ctx: ToolContext, upload_id: str) -> dict[str, Any]:
    with Spool.open(ctx, upload_id) as spool:
        meta = spool.meta
        if not meta.archive:
            raise ToolError("invalid_params", f"Upload {upload_id} is a file for "
                            f"{meta.path}: finish it with file.upload_commit.",
                            param="upload_id")
        try:
            plan = stage(ctx, spool, meta.path)
            base = ctx.ws.rel(meta.path, allow_empty=True)
            done = land(ctx, spool, plan, base)
        finally:
            spool.discard()
    if ctx.record is not None:
        ctx.record["path"] = meta.path
        ctx.record["bytes"] = done.bytes
        ctx.record["files"] = sorted([*done.created, *(rel for rel, _ in done.replaced)])
    return {"created": len(done.created), "replaced": len(done.replaced),
            "bytes": done.bytes}
