"""The `claude` tool set (seed 001; `--tools` in docs/protocol.md, Starting the server):
Read, Write, Edit, MultiEdit, Delete, LS, Glob and Grep as thin adapters over the core
tools.

Read-before-write: the dispatcher remembers the version of every file the session was
shown or wrote (rpc/dispatch/session.py) and passes it to Write, Edit and MultiEdit as
`read_version` (None: never read). An existing file never read is `not_read`; one changed
since it was read is the core's `conflict` (it goes down as `expected_version`); a file
read and since deleted is new again.
"""

from __future__ import annotations

import os
import stat
from typing import Any

from chorus_tools.tools.read import text
from chorus_tools.tools.mutate.delete import delete
from chorus_tools.tools.dialects import notebook
from chorus_tools.tools.dialects.common import then
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.fanout import FanOut
from chorus_tools.tools.walk.listing import list_entries, list_files
from chorus_tools.tools.patch.patch import patch
from chorus_tools.tools.read.read import read, window_text
from chorus_tools.tools.confine.sandbox import names_directory, version_of
from chorus_tools.tools.search.search import search
from chorus_tools.tools.mutate.write import write

GLOB_LIMIT = 100  # Glob's most recent matches
GLOB_SCAN = 5000  # entries considered to find them (directories are dropped)


def read_tool(ctx: ToolContext, file_path: str, offset: int | None = None,
              limit: int | None = None) -> dict[str, Any]:
    """file.read; a notebook rendered cell by cell. Offset 0 is the start, as in the seed."""
    start = max(offset or 1, 1)
    if file_path.lower().endswith(".ipynb"):
        shown = _notebook(ctx, file_path, start, limit)
        if shown is not None:
            return shown
    return read(ctx, file_path, offset=start, limit=limit)


def _notebook(ctx: ToolContext, path: str, offset: int,
              limit: int | None) -> dict[str, Any] | None:
    """The rendering, windowed and numbered like file.read, with the images its window
    names; None when the file is not a notebook's JSON (then it is read as the text it
    is)."""
    fd, st = ctx.ws.open_regular(ctx.ws.rel(path), shown=path)
    try:
        if st.st_size > ctx.limits.max_image_bytes:
            return None
        data = os.read(fd, st.st_size + 1)
    finally:
        os.close(fd)
    rendered = notebook.render(data)
    if rendered is None:
        return None
    content, images = rendered
    result = window_text(content, offset, limit, False, ctx.limits)
    shown = [image for i, image in enumerate(images)
             if notebook.image_marker(i) in result["content"]]
    return {**result, "encoding": "utf-8", "version": version_of(st), "images": shown}


def write_tool(ctx: ToolContext, file_path: str, content: str,
               read_version: str | None = None) -> dict[str, Any]:
    """file.write, creating parent directories; an existing file must have been read."""
    try:
        return write(ctx, file_path, content, overwrite=read_version is not None,
                     expected_version=read_version)
    except ToolError as err:
        if err.code == "already_exists":
            raise _not_read(file_path) from None
        if _gone_since_read(err):
            return write(ctx, file_path, content, overwrite=False)
        raise _changed(err, file_path) from None


def edit_tool(ctx: ToolContext, file_path: str, old_string: str, new_string: str,
              replace_all: bool = False, read_version: str | None = None) -> dict[str, Any]:
    """file.patch with one patch."""
    patches = [{"find": old_string, "replace": new_string, "replace_all": replace_all}]
    return _patch(ctx, file_path, patches, read_version)


def multi_edit_tool(ctx: ToolContext, file_path: str, edits: list[dict[str, Any]],
                    read_version: str | None = None) -> dict[str, Any]:
    """file.patch: the edits in order, all or nothing; a first empty old_string creates."""
    patches = [{"find": e["old_string"], "replace": e["new_string"],
                "replace_all": e.get("replace_all", False)} for e in edits]
    return _patch(ctx, file_path, patches, read_version)


def _patch(ctx: ToolContext, path: str, patches: list[dict[str, Any]],
           read_version: str | None) -> dict[str, Any]:
    if read_version is None:
        if _exists(ctx, path):
            raise _not_read(path)
        return patch(ctx, path, patches)  # creates it, or says it is not there
    try:
        return patch(ctx, path, patches, expected_version=read_version)
    except ToolError as err:
        if _gone_since_read(err):
            return patch(ctx, path, patches)
        raise _changed(err, path) from None


def _exists(ctx: ToolContext, path: str) -> bool:
    """Whether there is a file to protect (a link leading out is refused here, as the
    core would refuse it; a directory or special file is left to the core's refusal)."""
    if names_directory(path):
        return False
    try:
        fd = ctx.ws.open(ctx.ws.rel(path), os.O_PATH, shown=path)
    except ToolError as err:
        if err.code == "file_not_found":
            return False
        raise
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode)
    finally:
        os.close(fd)


def _gone_since_read(err: ToolError) -> bool:
    return err.code == "conflict" and err.details.get("current_version") is None


def _changed(err: ToolError, path: str) -> ToolError:
    if err.code != "conflict":
        return err
    return ToolError("conflict", f"File changed since this session last read it: {path}. "
                     "Read it again, then retry the change on its current content.",
                     **err.details)


def _not_read(path: str) -> ToolError:
    return ToolError("not_read", f"File exists but this session has not read it: {path}. "
                     "Read it first (Read), then write or edit it.", path=path)


def delete_tool(ctx: ToolContext, file_path: str) -> dict[str, Any]:
    return delete(ctx, file_path)


def ls_tool(ctx: ToolContext, path: str, ignore: list[str] | None = None) -> dict[str, Any]:
    """One directory's entries (hidden and ignored ones left out, as file.list does),
    each with is_binary for files (null for the rest)."""
    listed = list_entries(ctx, path, exclude=ignore or None)
    entries = [{"name": f["path"].rpartition("/")[2], "path": f["path"], "type": f["type"],
                "size": f["size"],
                "is_binary": _is_binary(ctx, f["path"]) if f["type"] == "file" else None}
               for f in listed["files"]]
    return {"path": ctx.ws.rel(path, allow_empty=True), "entries": entries,
            "truncated": listed["truncated"]}


def _is_binary(ctx: ToolContext, rel: str) -> bool | None:
    try:
        fd, _ = ctx.ws.open_regular(rel)
    except ToolError:
        return None  # gone or unreadable since it was listed
    try:
        return text.binary_mime(os.pread(fd, text.SNIFF_BYTES, 0)) is not None
    finally:
        os.close(fd)


def glob_tool(ctx: ToolContext, pattern: str, path: str = ".") -> dict[str, Any] | FanOut:
    """Files matching the glob beneath `path`, most recently modified first."""
    found = list_files(ctx, path, pattern=pattern, sort="modified", max_results=GLOB_SCAN)
    return then(found, "chorus_tools.tools.dialects.claude:glob_result")


def glob_result(listed: dict[str, Any]) -> dict[str, Any]:
    files = [f["path"] for f in listed["files"] if f["type"] == "file"]
    return {"files": files[:GLOB_LIMIT],
            "truncated": len(files) > GLOB_LIMIT or listed["truncated"]}


def grep_tool(ctx: ToolContext, pattern: str, path: str = ".", glob: str | None = None,
              type: str | None = None, output_mode: str = "files_with_matches",
              multiline: bool = False, head_limit: int | None = None,
              **flags: Any) -> dict[str, Any] | FanOut:
    """file.search under ripgrep's option names: -A, -B, -C, -i, -n (default true)."""
    limit: dict[str, Any] = {} if head_limit is None else {"max_results": head_limit}
    found = search(ctx, pattern, path=path, glob=glob, type=type, output_mode=output_mode,
                   multiline=multiline, case_sensitive=not flags.get("-i", False),
                   context_lines=flags.get("-C", 0), before_context=flags.get("-B"),
                   after_context=flags.get("-A"), **limit)
    return then(found, "chorus_tools.tools.dialects.claude:grep_result",
                numbered=flags.get("-n", True))


def grep_result(found: dict[str, Any], numbered: bool) -> dict[str, Any]:
    """file.search's result; without -n the matches carry no line numbers."""
    if numbered or "matches" not in found:
        return found
    return {**found, "matches": [{"path": m["path"], "content": m["content"]}
                                 for m in found["matches"]]}
