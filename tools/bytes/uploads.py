"""Uploads in parts (docs/protocol.md, Bytes in and out): file.upload_begin, _part, _commit
and _abort over a spool (tools/bytes/spool.py).

The target is checked when the upload begins (confinement, --deny, a directory, an
existing file without `overwrite`, `expected_version`), so a client learns before sending
a gigabyte; the commit checks it all again under the directory's lock, as every write
does, and lands the whole file at once. Parts may come in any order and be resent."""

from __future__ import annotations

import os
from typing import Any

from chorus_tools.tools.bytes.payload import checked_digest, decoded
from chorus_tools.tools.bytes.spool import Meta, Spool, reachable
from chorus_tools.tools.bytes.table import LANDED
from chorus_tools.tools.bytes.write import refuse_existing
from chorus_tools.tools.confine.sandbox import names_directory, version_of
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.mutate.atomic import Current, Spooled, conflict_error, mutate
from chorus_tools.tools.mutate.quota import ahead


def upload_begin(ctx: ToolContext, path: str, size: int | None = None,
                 sha256: str | None = None, overwrite: bool = True,
                 expected_version: str | None = None, replaced_version: str | None = None,
                 replaced_sha256: str | None = None) -> dict[str, Any]:
    """`replaced_*`: the version and digest of the file this server landed at the path,
    added by the invoker (rpc/dispatch/landed.py), never by a client."""
    rel = ctx.ws.rel(path)
    if names_directory(path):
        raise ToolError("is_directory", f"The path ends with '/', so it names a directory: "
                        f"{path}. Give a file path.", path=path)
    exists = _check_target(ctx, rel, path, overwrite, expected_version)
    if size is not None:  # its parts will be charged: refused now, not a GiB later
        reachable(size, path)
        ahead(ctx, size, 0 if exists else 1, path)
    meta = Meta(path=path, size=size, sha256=checked_digest(sha256), overwrite=overwrite,
                expected_version=expected_version,
                replaces=[replaced_version, replaced_sha256]
                if replaced_version and replaced_sha256 else None)
    return {"upload_id": Spool.begin(ctx, meta)}


def upload_part(ctx: ToolContext, upload_id: str, offset: int, data: str) -> dict[str, Any]:
    content = decoded(data)
    limit = ctx.limits.max_chunk_bytes
    if len(content) > limit:
        raise ToolError("invalid_params", f"The part is {len(content)} bytes, over the "
                        f"{limit}-byte chunk limit (--max-chunk-bytes): send smaller parts.",
                        param="data", limit=limit)
    with Spool.open(ctx, upload_id) as spool:
        return {"received": spool.write_part(offset, content)}


def upload_commit(ctx: ToolContext, upload_id: str) -> dict[str, Any]:
    with Spool.open(ctx, upload_id) as spool:
        meta = spool.meta
        if ctx.record is not None:  # the commit's params name no path: its record does,
            ctx.record["path"] = meta.path  # a refusal's too (rpc/dispatch/invoker.py)
        spool.committed_as(archive=False)
        whole = spool.whole()

        def compute(current: Current) -> Spooled:
            refuse_existing(current, meta.overwrite, meta.path)
            return whole

        out = mutate(ctx, ctx.ws.rel(meta.path), shown=meta.path, compute=compute,
                     create_dirs=True, expected_version=meta.expected_version,
                     read_current=False,
                     known=(meta.replaces[0], meta.replaces[1]) if meta.replaces else None)
        spool.discard()
    assert out.stat is not None
    if ctx.record is not None:
        ctx.record[LANDED] = [ctx.ws.rel(meta.path), version_of(out.stat), whole.sha256]
    return {"success": True, "bytes_written": whole.size, "created": out.created,
            "version": version_of(out.stat)}


def upload_abort(ctx: ToolContext, upload_id: str) -> dict[str, Any]:
    with Spool.open(ctx, upload_id) as spool:
        spool.discard()
    return {"success": True}


def _check_target(ctx: ToolContext, rel: str, shown: str, overwrite: bool,
                  expected_version: str | None) -> bool:
    """What the commit would refuse, said now: a directory or special file, an existing
    file without `overwrite`, a version that no longer matches. Whether the file exists."""
    try:
        fd, st = ctx.ws.open_regular(rel, os.O_PATH, shown=shown)
    except ToolError as err:
        if err.code != "file_not_found":
            raise
        st = None
    else:
        os.close(fd)
    refuse_existing(Current(rel=rel, data=None, stat=st), overwrite, shown)
    current = None if st is None else version_of(st)
    if expected_version is not None and expected_version != current:
        raise conflict_error(shown, expected_version, current)
    return st is not None
