"""The `codex` tool set (docs/protocol.md, Tool set `codex`): the tools OpenAI's Codex
harness declares, as thin adapters over the core, with Codex's parameter names and result
texts.

- apply_patch {input}: a V4A patch (tools/dialects/v4a.py), all or nothing across files
  (codex_patch.py); its text is Codex's `Success. Updated the following files:` summary.
- read_file {file_path, offset?, limit?, mode?, indentation?}: `L<n>: <line>` lines, a
  slice or the indentation-aware block around an anchor line (codex_indent.py).
- list_dir {dir_path, offset?, limit?, depth?}: entries indented two spaces a level,
  `/` after a directory, `@` after a symlink, `?` after anything else, 1-based pages,
  under Codex's `Absolute path: DIR` line (`Relative path: DIR` for a relative one).
- grep_files {pattern, include?, path?, limit?}: the files whose contents match, newest
  modification first.

Every result carries `output`, the text Codex's harness gives the model (the MCP face
shows it), beside the structured fields. Paths in structured fields are
workspace-relative; Codex's own texts keep the path the client gave.
"""

from __future__ import annotations

from typing import Any

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.dialects.codex_indent import Line, block
from chorus_tools.tools.dialects.codex_patch import apply_patch as apply_v4a
from chorus_tools.tools.dialects.common import then
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.patch.match import content
from chorus_tools.tools.patch.note import notes
from chorus_tools.tools.read.read import read
from chorus_tools.tools.read.text import lines_with_endings
from chorus_tools.tools.search.search import search
from chorus_tools.tools.walk.fanout import FanOut, run_here
from chorus_tools.tools.walk.listing import list_files

MAX_LINE_BYTES = 500  # a read_file line and a list_dir name are cut to this many bytes
GREP_LIMIT = 2000  # grep_files returns at most this many paths, whatever `limit` says
_EVERY = 10**9
_GROUPS = (("add", "A"), ("update", "M"), ("delete", "D"))
_SUFFIX = {"dir": "/", "symlink": "@", "other": "?", "file": ""}


def apply_patch(ctx: ToolContext, input: str) -> dict[str, Any]:
    files = apply_v4a(ctx, input)
    lines = ["Success. Updated the following files:"]
    for action, letter in _GROUPS:
        lines += [f"{letter} {path}" for path in dict.fromkeys(
            f["path"] for f in files if f["action"] == action)]
    return {"output": "\n".join(lines + notes(files)) + "\n", "files": files}


def read_file(ctx: ToolContext, file_path: str, offset: int = 1, limit: int = 2000,
              mode: str = "slice", indentation: dict[str, Any] | None = None
              ) -> dict[str, Any]:
    if offset < 1:
        raise _say("offset must be a 1-indexed line number", "offset")
    if limit < 1:
        raise _say("limit must be greater than zero", "limit")
    if mode == "indentation":
        got = _text(ctx, file_path, 1, None)
        lines = [Line(n, text) for n, text in enumerate(_lines(got), 1)]
        chosen = block(lines, offset, limit, **(indentation or {}))
    else:
        got = _text(ctx, file_path, offset, limit)
        if got["start_line"] > got["total_lines"]:
            raise _say("offset exceeds file length", "offset")
        chosen = [Line(n, text) for n, text in enumerate(_lines(got), offset)]
    output = "\n".join(f"L{line.number}: {_cut(line.text)}" for line in chosen)
    return {"output": output, "start_line": chosen[0].number if chosen else offset,
            "end_line": chosen[-1].number if chosen else offset - 1,
            "total_lines": got["total_lines"], "truncated": got["truncated"],
            "version": got["version"]}


def _text(ctx: ToolContext, path: str, offset: int, limit: int | None) -> dict[str, Any]:
    got = read(ctx, path, offset=offset, limit=limit, raw=True)
    if "image" in got:
        raise ToolError("binary_file", f"failed to read file: {path} is an image "
                        f"({got['mime_type']}), not text.", path=path,
                        mime_type=got["mime_type"], size=got["size"])
    return got


def _lines(got: dict[str, Any]) -> list[str]:
    return [content(line) for line in lines_with_endings(got["content"])]


def _cut(text: str) -> str:
    data = text.encode("utf-8", "surrogateescape")
    if len(data) <= MAX_LINE_BYTES:
        return text
    return data[:MAX_LINE_BYTES].decode("utf-8", "ignore")


def list_dir(ctx: ToolContext, dir_path: str, offset: int = 1, limit: int = 25,
             depth: int = 2) -> dict[str, Any] | FanOut:
    if offset < 1:
        raise _say("offset must be a 1-indexed entry number", "offset")
    if limit < 1:
        raise _say("limit must be greater than zero", "limit")
    if depth < 1:
        raise _say("depth must be greater than zero", "depth")
    rel = ctx.ws.rel(dir_path, param="dir_path", allow_empty=True)  # "": the root
    listed = list_files(ctx, dir_path, depth=depth, recursive=True, include_hidden=True,
                        include_ignored=True, max_results=_EVERY)
    return then(listed, "chorus_tools.tools.dialects.codex:listing", shown=dir_path,
                base="" if rel == "." else rel + "/", offset=offset, limit=limit)


def listing(listed: dict[str, Any], shown: str, base: str, offset: int,
            limit: int) -> dict[str, Any]:
    """The page of entries Codex shows (pure: it may run in the dispatcher)."""
    entries = sorted(({"path": f["path"], "type": f["type"],
                       "name": f["path"][len(base):]} for f in listed["files"]),
                     key=lambda e: e["name"])
    if entries and offset > len(entries):
        raise _say("offset exceeds directory entry count", "offset")
    page = entries[offset - 1:offset - 1 + limit]
    lines = [_heading(shown, base)]
    for e in page:
        depth = e["name"].count("/")
        lines.append("  " * depth + _cut(e["name"].rpartition("/")[2]) + _SUFFIX[e["type"]])
    more = offset - 1 + len(page) < len(entries)
    if more:
        lines.append(f"More than {len(page)} entries found")
    return {"output": "\n".join(lines), "path": base.rstrip("/") or ".",
            "entries": [{"path": e["path"], "type": e["type"]} for e in page],
            "total": len(entries), "truncated": more}


def _heading(shown: str, base: str) -> str:
    """Codex's first line names the directory's absolute path; a relative path given is
    named as what it is (relative to the workspace root), never as absolute."""
    if shown.startswith("/"):
        return f"Absolute path: {shown}"
    return f"Relative path: {base.rstrip('/') or '. (the workspace root)'}"


def grep_files(ctx: ToolContext, pattern: str, include: str | None = None,
               path: str | None = None, limit: int = 100) -> dict[str, Any]:
    """ripgrep's files-with-matches, newest first (Codex runs `rg --sortr=modified`)."""
    if not pattern.strip():
        raise _say("pattern must not be empty", "pattern")
    if limit < 1:
        raise _say("limit must be greater than zero", "limit")
    include = (include or "").strip() or None
    found = search(ctx, pattern.strip(), path=path or ".", glob=include,
                   output_mode="files_with_matches", max_results=_EVERY)
    if isinstance(found, FanOut):  # sorting by mtime needs the files: run the parts here
        found = run_here(ctx, found)
    stamped = []
    for rel in found["files"]:
        try:
            stamped.append((-ctx.ws.lstat(rel).st_mtime_ns, rel))
        except ToolError:
            continue  # gone since the search: not a match any more
    files = [rel for _, rel in sorted(stamped)][:min(limit, GREP_LIMIT)]
    return {"output": "\n".join(files) if files else "No matches found.", "files": files,
            "truncated": len(stamped) > len(files)}


def _say(message: str, param: str) -> ToolError:
    """An invalid parameter in Codex's words."""
    return ToolError("invalid_params", message, param=param)
