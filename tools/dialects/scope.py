"""The `scope` tool set (seed 002; `--tools` in docs/protocol.md, Starting the server):
read_file, write_file, list_directory, search_files and get_file_info as thin adapters over
the core tools. Errors get their `data.code` in the dispatcher (scope_table.scope_error)."""

from __future__ import annotations

from typing import Any

from chorus_tools.tools.dialects.common import then, window
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.fanout import FanOut
from chorus_tools.tools.read.info import info
from chorus_tools.tools.walk.listing import list_files
from chorus_tools.tools.read.read import read
from chorus_tools.tools.search.search import search
from chorus_tools.tools.mutate.write import write
from chorus_tools.tools.patch.note import carried

CAP = 5000  # entries a listing, matches a search return
_EVERY = 10**9  # listed to count them all (`total`), then cut to CAP


def read_file(ctx: ToolContext, path: str, startLine: int = 1,
              endLine: int | None = None) -> dict[str, Any]:
    """The exact text of lines startLine..endLine (line endings included)."""
    if endLine is not None and endLine < startLine:
        raise ToolError("invalid_params", f"endLine ({endLine}) is before startLine "
                        f"({startLine}).", param="endLine")
    limit = None if endLine is None else endLine - startLine + 1
    got = read(ctx, path, offset=startLine, limit=limit, raw=True)
    if "image" in got:
        raise ToolError("binary_file", f"Binary file ({got['mime_type']}, {got['size']} "
                        f"bytes): {path}. read_file reads text only.", path=path,
                        mime_type=got["mime_type"], size=got["size"])
    wanted = got["total_lines"] if endLine is None else min(endLine, got["total_lines"])
    return {"content": got["content"], "lines": got["total_lines"],
            "truncated": got["end_line"] < wanted, "encoding": got["encoding"]}


def write_file(ctx: ToolContext, path: str, content: str, encoding: str = "utf-8",
               createDirs: bool = False) -> dict[str, Any]:
    got = write(ctx, path, content, create_dirs=createDirs, encoding=encoding)
    return {"path": ctx.ws.rel(path), "bytes": got["bytes_written"], **carried(got)}


def list_directory(ctx: ToolContext, path: str, recursive: bool = False, depth: int | None = None,
                   glob: str | None = None,
                   includeHidden: bool = False) -> dict[str, Any] | FanOut:
    """A glob without '/' filters names at every depth of a recursive listing (the
    core's rule for a name pattern)."""
    listed = list_files(ctx, path, pattern=glob, recursive=recursive, depth=depth,
                        include_hidden=includeHidden, max_results=_EVERY)
    return then(listed, "chorus_tools.tools.dialects.scope:listing_result")


def listing_result(listed: dict[str, Any]) -> dict[str, Any]:
    files = listed["files"]
    return {"entries": [{"name": f["path"].rpartition("/")[2], "path": f["path"],
                         "type": f["type"], "size": f["size"]} for f in files[:CAP]],
            "total": len(files), "truncated": len(files) > CAP}


def search_files(ctx: ToolContext, pattern: str, path: str = ".", regex: bool = False,
                 caseSensitive: bool = True, contextLines: int = 0,
                 glob: str | None = None) -> dict[str, Any] | FanOut:
    """A literal search unless `regex`; each match with its context as arrays."""
    found = search(ctx, pattern, path=path, glob=glob, literal=not regex,
                   case_sensitive=caseSensitive, context_lines=contextLines, max_results=CAP)
    return then(found, "chorus_tools.tools.dialects.scope:search_result",
                context=contextLines)


def search_result(found: dict[str, Any], context: int) -> dict[str, Any]:
    """file.search's windows (`--> ` the match, four spaces the context) as arrays."""
    matches = []
    for m in found["matches"]:
        before, line, after = window(m, context, context > 0)
        matches.append({"file": m["path"], "line": m["line"], "content": line,
                        "context": {"before": before, "after": after}})
    return {"matches": matches, "totalMatches": len(matches),
            "filesSearched": found["files_searched"], "truncated": found["truncated"]}


def get_file_info(ctx: ToolContext, path: str) -> dict[str, Any]:
    got = info(ctx, path)
    return {"name": got["path"].rpartition("/")[2], "path": got["path"], "type": got["type"],
            "size": got["size"], "modified": got["modified"], "mime": got["mime_type"],
            "lines": got["lines"], "isSymlink": got["is_symlink"],
            "symlinkTarget": got["symlink_target"]}
