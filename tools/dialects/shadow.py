"""The `shadow` tool set (seed 003; `--tools` in docs/protocol.md, Starting the server):
Read, Write, Edit, ListDir, Glob and Grep as thin adapters over the core tools, with the
seed's aliases (file_path/filePath, old/ old_string/oldString, new/new_string/newString,
replace_all/replaceAll, root/path), integers that may come as decimal strings, and
JavaScript RegExp queries.

Edit's `count` is the exact number of occurrences to replace (0: all, at least one): the
core patch checks it (a patch's internal `count`). `before`/`after` anchors select the
occurrences whose surroundings match, whitespace between ignored: they are found here in
the file's text, and each distinct qualifying region becomes one exact patch, applied
against the version that text was read at.
"""

from __future__ import annotations

import os
import re
import stat
from typing import Any

from chorus_tools.tools.dialects import jsregex
from chorus_tools.tools.dialects.common import alias, integer, then, window
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.fanout import FanOut
from chorus_tools.tools.walk.listing import list_entries, list_files
from chorus_tools.tools.patch.patch import LINES_SHOWN, patch
from chorus_tools.tools.patch.explain import missed, occurrences
from chorus_tools.tools.read.read import read
from chorus_tools.tools.confine.sandbox import ROOT, version_of
from chorus_tools.tools.search.search import search
from chorus_tools.tools.read.text import SNIFF_BYTES, binary_mime, decode
from chorus_tools.tools.mutate.write import write
from chorus_tools.tools.patch.note import carried

CAP = 5000  # entries Glob, matches Grep return at most (beside: truncated)
_ALL_FILES = ("**/*", "**", "*")  # file_glob values that filter nothing


def read_tool(ctx: ToolContext, **params: Any) -> dict[str, Any]:
    path = alias(params, "file_path", "filePath")
    offset = integer(params.get("offset"), "offset")
    got = read(ctx, path, offset=max(offset or 1, 1), limit=integer(params.get("limit"),
                                                                     "limit"))
    shown = ctx.ws.rel(path)
    if "image" in got:
        return {"file_path": shown, "image": got["image"], "mime_type": got["mime_type"],
                "file_size": got["size"]}
    return {"file_path": shown, "content": got["content"]}


def write_tool(ctx: ToolContext, content: str, overwrite: bool = False,
               **params: Any) -> dict[str, Any]:
    path = alias(params, "file_path", "filePath")
    try:
        got = write(ctx, path, content, overwrite=overwrite)
    except ToolError as err:
        if err.code == "already_exists":
            raise ToolError("already_exists", f"File already exists: {path}. Pass "
                            "overwrite: true to replace it, or use Edit.", path=path) from None
        raise
    shown = ctx.ws.rel(path)
    verb = "Created" if got["created"] else "Overwrote"
    return {"file_path": shown, "bytes_written": got["bytes_written"],
            "message": f"{verb} {shown} ({got['bytes_written']} bytes).", **carried(got)}


def edit_tool(ctx: ToolContext, before: str | None = None, after: str | None = None,
              **params: Any) -> dict[str, Any]:
    path = alias(params, "file_path", "filePath")
    old = alias(params, "old", "old_string", "oldString")
    new = alias(params, "new", "new_string", "newString")
    every = alias(params, "replace_all", "replaceAll", required=False)
    count = 0 if every else integer(params.get("count"), "count")
    count = 1 if count is None else count
    try:
        if before or after:
            got = _anchored(ctx, path, old, new, before or "", after or "", count)
        else:
            got = patch(ctx, path, [{"find": old, "replace": new, **(
                {"replace_all": True} if count == 0 else {"count": count})}])
    except ToolError as err:
        if err.code == "find_not_unique":
            err.details.setdefault("expected", count)
        raise
    shown = ctx.ws.rel(path)
    n = got["replacements"]
    return {"file_path": shown, "replacements": n,
            "message": f"Replaced {n} occurrence{'s' if n != 1 else ''} in {shown}.",
            **carried(got)}


def _anchored(ctx: ToolContext, path: str, old: str, new: str, before: str, after: str,
              count: int) -> dict[str, Any]:
    """The occurrences of `old` between the anchors, replaced as exact patches."""
    if old == "":
        raise ToolError("invalid_params", "'old' is empty: give the text to replace.",
                        param="old")
    rel = ctx.ws.rel(path)
    fd, st = ctx.ws.open_regular(rel, shown=path)
    try:
        data = b"".join(iter(lambda: os.read(fd, 1 << 20), b""))
    finally:
        os.close(fd)
    if binary_mime(data[:SNIFF_BYTES]) is not None:
        return patch(ctx, path, [{"find": old, "replace": new}])  # the core's refusal
    text, _ = decode(data)
    rx = re.compile((re.escape(before) + r"\s*" if before else "") + f"({re.escape(old)})"
                    + (r"\s*" + re.escape(after) if after else ""))
    found = list(rx.finditer(text))
    lines = [text.count("\n", 0, m.start(1)) + 1 for m in found]
    if not found:
        where, quote, data = missed(text, before + old + after,
                                  "patches[0].find and its anchors")
        raise ToolError("find_not_found", f"patches[0].find was not found in {path} between "
                        "the given before/after anchors (whitespace between them ignored). "
                        + where, quote=quote, path=path, patch_index=0, **data)
    if count and len(found) != count:
        more = max(len(lines) - LINES_SHOWN, 0)
        raise ToolError("find_not_unique", f"patches[0].find occurs {len(found)} times in "
                        f"{path} between the anchors, not {count} "
                        f"({occurrences(lines[:LINES_SHOWN], more)}). Set patches[0].count "
                        "to the number it occurs, or give longer anchors.", path=path,
                        patch_index=0, count=len(found), lines=lines[:LINES_SHOWN],
                        tier="exact", expected=count, **_more_lines(more))
    regions: dict[str, int] = {}
    for m in found:
        regions[m.group(0)] = regions.get(m.group(0), 0) + 1
    patches = []
    for region, times in regions.items():
        start = rx.fullmatch(region).start(1)  # type: ignore[union-attr]
        patches.append({"find": region, "count": times,
                        "replace": region[:start] + new + region[start + len(old):]})
    return patch(ctx, path, patches, expected_version=version_of(st))


def _more_lines(more: int) -> dict[str, Any]:
    return {"more_lines": more} if more else {}


def listdir_tool(ctx: ToolContext, path: str = ".") -> dict[str, Any]:
    """Direct entries; a symlink is typed by what it leads to inside the workspace."""
    listed = list_entries(ctx, path)
    entries = [{"name": f["path"].rpartition("/")[2],
                "type": "dir" if f["type"] == "dir" or (
                    f["type"] == "symlink" and _leads_to_dir(ctx, f["path"])) else "file"}
               for f in listed["files"]]
    return {"path": ctx.ws.rel(path, allow_empty=True), "entries": entries}


def _leads_to_dir(ctx: ToolContext, rel: str) -> bool:
    try:
        fd = ctx.ws.open(rel, os.O_PATH)
    except ToolError:
        return False  # leads outside, or nowhere
    try:
        return stat.S_ISDIR(os.fstat(fd).st_mode)
    finally:
        os.close(fd)


def glob_tool(ctx: ToolContext, pattern: str, max_files: int | str | None = None,
              **params: Any) -> dict[str, Any] | FanOut:
    root = alias(params, "root", "path", required=False) or ROOT
    cap = integer(max_files, "max_files") or CAP
    found = list_files(ctx, root, pattern=pattern, max_results=cap)
    return then(found, "chorus_tools.tools.dialects.shadow:glob_result")


def glob_result(listed: dict[str, Any]) -> dict[str, Any]:
    matches = [f["path"] for f in listed["files"] if f["type"] != "dir"]
    return {"matches": matches, "count": len(matches), "truncated": listed["truncated"]}


def grep_tool(ctx: ToolContext, query: str, file_glob: str = "**/*", case_sensitive: bool = True,
              mode: str = "content", before_context: int | str = 0,
              after_context: int | str = 0, **params: Any) -> dict[str, Any] | FanOut:
    root = alias(params, "root", "path", required=False) or ROOT
    before = integer(before_context, "before_context") or 0
    after = integer(after_context, "after_context") or 0
    found = search(ctx, jsregex.translate(query), path=root,
                   glob=None if file_glob in _ALL_FILES else file_glob,
                   case_sensitive=case_sensitive, before_context=before,
                   after_context=after, max_results=CAP,
                   output_mode="content" if mode == "content" else "files_with_matches")
    return then(found, "chorus_tools.tools.dialects.shadow:grep_result", before=before,
                context=bool(before or after))


def grep_result(found: dict[str, Any], before: int, context: bool) -> dict[str, Any]:
    if "files" in found:
        return {"files": found["files"], "truncated": found["truncated"]}
    matches = []
    for m in found["matches"]:
        above, line, below = window(m, before, context)
        matches.append({"file_path": m["path"], "line": m["line"], "text": line,
                        "before_context": above, "after_context": below})
    return {"matches": matches, "truncated": found["truncated"]}
