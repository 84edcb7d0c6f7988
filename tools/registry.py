"""The one table of methods: name, function, params and result schemas, and how the
runtime may treat a call. Dispatch, parameter validation, `rpc.discover` and the MCP face's
`tools/list` all read it.

Every method belongs to a tool set (`--tools`): `native` (the `file.*` methods, always
callable over plain JSON-RPC), a seed dialect (`claude`, `scope`, `shadow`) or a trained
edit format (`codex`), whose methods are callable, and listed as MCP tools, only when their
set is selected. The native methods are below; each dialect's are in
tools/dialects/<set>_table.py. Two sets that define the same name cannot be served together
(`clashes`).

Functions are named as "module:function" and imported on first use, so a worker pays only
for the tools it runs.
"""

from __future__ import annotations

from chorus_tools.tools.bytes import table as bytes_table
from chorus_tools.tools.code import table as code_table
from chorus_tools.tools.dialects import (anthropic_table, claude_table, codex_table,
                                         gemini_table, scope_table, shadow_table)
from chorus_tools.tools.method import (DIAGNOSTICS, GLOBS, INVALID_BYTES, NON_NEGATIVE,
                                      NULLABLE_STR, PATCH_RESULT, PATH, POSITIVE, READ_RESULT,
                                      FILE_ENTRY, SEARCH_RESULT, TIME, VERSION, WRITE_RESULT,
                                      Method, nullable, obj as _obj)

OFFSET = {"type": "integer", "not": {"const": 0},
          "description": "First line, 1-based; negative counts from the end (-20: the last "
                         "20 lines, numbered as in the file)"}

_LIMIT = {"type": ["integer", "null"], "minimum": 0}  # a quota: null is unlimited
_SUCCESS = {"type": "boolean"}

METHODS: dict[str, Method] = {m.name: m for m in [
    Method(
        "file.read", "chorus_tools.tools.read.read:read",
        "Read a text file as numbered lines (paged), or an image as base64.",
        _obj(["path"], path=PATH, offset=OFFSET, limit=POSITIVE,
             raw={"type": "boolean"}),
        READ_RESULT, stoppable=True, read_state="shown", shown_as="read", title="Read file",
        idempotent=True,
        description=(
            "Read a text file as lines numbered like `cat -n` (never copy the numbers into a "
            "find). Long files come in windows: `offset` (first line) and `limit`; continue "
            "from end_line + 1. `raw: true`: the exact text. Images come back as images.")),
    Method(
        "file.write", "chorus_tools.tools.mutate.write:write",
        "Create or replace a file atomically with UTF-8 content.",
        _obj(["path", "content"], path=PATH, content={"type": "string"},
             create_dirs={"type": "boolean"}, overwrite={"type": "boolean"},
             expected_version=VERSION),
        WRITE_RESULT, mutating=True, read_state="shown", title="Write file", idempotent=True,
        destructive=True,
        description=(
            "Create or replace a whole file with `content` (atomic; parent directories are "
            "created); for part of one use file_patch. `overwrite: false` refuses an "
            "existing file, `expected_version` a changed one.")),
    Method(
        "file.patch", "chorus_tools.tools.patch.patch:patch",
        "Apply ordered search-and-replace edits, all or nothing.",
        _obj(["path", "patches"], path=PATH,
             patches={"type": "array", "items": _obj(
                 ["find", "replace"], find={"type": "string"},
                 replace={"type": "string"}, replace_all={"type": "boolean"})},
             dry_run={"type": "boolean"}, expected_version=VERSION),
        PATCH_RESULT, mutating=True, read_state="shown", title="Edit file (find and replace)",
        destructive=True,
        description=(
            "Find and replace: each of `patches`, in order, all or nothing. "
            "Copy `find` from the file (no line numbers), unique unless replace_all; line "
            "endings and indentation may differ. Returns a diff (`dry_run`: only that). A "
            "find not found is answered with the closest text: fix `find` from it.")),
    Method(
        "file.delete", "chorus_tools.tools.mutate.delete:delete",
        "Delete a regular file or a symlink (never its target, never a directory).",
        _obj(["path"], path=PATH),
        _obj(["success"], success={"type": "boolean"}), mutating=True, read_state="removed",
        title="Delete file", idempotent=True, destructive=True,
        description=(
            "Delete one file, or a symlink itself (never its target). Not a directory.")),
    Method(
        "file.list", "chorus_tools.tools.walk.listing:file_list",
        "List a directory's entries, or the paths matching a glob beneath it.",
        _obj([], path=PATH, pattern={"type": "string"}, recursive={"type": "boolean"},
             depth=POSITIVE, exclude=GLOBS,
             include_hidden={"type": "boolean"}, include_ignored={"type": "boolean"},
             sort={"enum": ["path", "modified", "size"]}, max_results=POSITIVE),
        _obj(["files", "truncated"], files={"type": "array", "items": FILE_ENTRY},
             truncated={"type": "boolean"},
             hint=_obj(["pattern", "count"], pattern={"type": "string"}, count=POSITIVE)),
        stoppable=True, title="List files", idempotent=True, shown_as="list",
        description=(
            "List the entries in `path` (default the root), or with `pattern` the paths "
            "beneath it matching the glob: `*.py` in `path` itself, or with `recursive` at "
            "any depth (as `**/*.py`). Hidden and .gitignored paths are skipped unless "
            "include_hidden / include_ignored.")),
    Method(
        "file.search", "chorus_tools.tools.search.search:file_search",
        "Search file contents with a regex (ripgrep syntax) or a fixed string.",
        _obj(["pattern"], pattern={"type": "string"}, path=PATH, glob=GLOBS,
             case_sensitive={"type": "boolean"}, literal={"type": "boolean"},
             context_lines=NON_NEGATIVE, before_context=NON_NEGATIVE,
             after_context=NON_NEGATIVE, type=GLOBS, max_results=POSITIVE,
             output_mode={"enum": ["content", "files_with_matches", "count"]},
             multiline={"type": "boolean"}, include_hidden={"type": "boolean"},
             include_ignored={"type": "boolean"}),
        SEARCH_RESULT,
        stoppable=True, title="Search file contents", idempotent=True, shown_as="search",
        description=(
            "Search file contents for a ripgrep regex (or a fixed string "
            "with `literal: true`); answers `path:line:text` lines. `glob` limits the files"
            " (`*.py`, `!tests/**`); `output_mode`: content, files_with_matches or count. "
            "Hidden and .gitignored files are skipped unless asked.")),
    Method(
        "file.info", "chorus_tools.tools.read.info:info",
        "Describe a path: type, size, times, mode, symlink, encoding, lines, version.",
        _obj(["path"], path=PATH),
        _obj(["path", "type", "size", "modified", "mode", "is_symlink", "symlink_target",
              "mime_type", "is_binary", "encoding", "lines", "version"],
             path={"type": "string"}, type={"enum": ["file", "dir", "symlink", "other"]},
             size=nullable({"type": "integer"}), modified=NULLABLE_STR,
             mode=NULLABLE_STR, is_symlink={"type": "boolean"},
             symlink_target=NULLABLE_STR, mime_type=NULLABLE_STR,
             is_binary=nullable({"type": "boolean"}), encoding=NULLABLE_STR,
             invalid_bytes=INVALID_BYTES, lines=nullable({"type": "integer"}),
             version=NULLABLE_STR),
        stoppable=True, title="File information", idempotent=True,
        description=(
            "Describe a path without reading it: type, size, times, mode, link, MIME type, "
            "encoding, lines, version.")),
    Method(
        "file.check", "chorus_tools.tools.code.check:check",
        "A file's syntax errors and problems as it is (what every edit's diagnostics say).",
        _obj(["path"], path={"type": "string"}),
        _obj(["path", "language", "diagnostics"], path={"type": "string"},
             language={"type": "string"}, diagnostics=DIAGNOSTICS),
        stoppable=True, title="Check syntax", idempotent=True,
        description="Check a file you did not just edit: its syntax errors and problems."),
    Method(
        "file.move", "chorus_tools.tools.mutate.move:move",
        "Move or rename a file or directory (one atomic rename inside the workspace).",
        _obj(["source", "destination"], source=PATH, destination=PATH,
             overwrite={"type": "boolean"}, create_dirs={"type": "boolean"}),
        _obj(["success", "version"], success=_SUCCESS, version=VERSION),
        mutating=True, destructive=True, path_params=("source", "destination"),
        title="Move or rename",
        description=(
            "Move or rename a file or directory inside the workspace (one atomic rename). "
            "An existing destination is refused unless `overwrite: true`.")),
    Method(
        "dir.create", "chorus_tools.tools.mutate.dirs:create",
        "Create a directory (and its missing parents, like mkdir -p).",
        _obj(["path"], path=PATH, parents={"type": "boolean"}),
        _obj(["success", "created"], success=_SUCCESS, created={"type": "boolean"}),
        mutating=True, idempotent=True, title="Create directory",
        description=(
            "Create a directory and its missing parents (like mkdir -p). Writing a file "
            "creates its directories already.")),
    Method(
        "dir.delete", "chorus_tools.tools.mutate.dirs:delete",
        "Delete an empty directory, or with recursive: true a whole tree (never the root).",
        _obj(["path"], path=PATH, recursive={"type": "boolean"}),
        _obj(["success", "removed"], success=_SUCCESS, removed=NON_NEGATIVE),
        mutating=True, destructive=True, title="Delete directory",
        description=(
            "Delete an empty directory, or with `recursive: true` the whole tree (symlinks "
            "inside are removed, never followed; never the root).")),
    Method(
        "file.history", "chorus_tools.tools.mutate.restore:listed",
        "List a file's earlier contents kept by the history, newest first.",
        _obj(["path"], path=PATH, limit=POSITIVE),
        _obj(["versions", "total", "truncated", "evicted"],
             versions={"type": "array", "items": _obj(
                 ["version", "time", "method", "bytes", "sha256", "exists", "evicted"],
                 version={"type": "string"}, time=TIME, method={"type": "string"},
                 bytes=NON_NEGATIVE, sha256=NULLABLE_STR, exists={"type": "boolean"},
                 evicted={"type": "boolean"}, moved_to={"type": "string"})},
             total=NON_NEGATIVE, truncated={"type": "boolean"}, evicted=NON_NEGATIVE),
        title="File history", idempotent=True,
        description=(
            "What a file held before each change this server made, newest first "
            "(`limit`: 20). Pass a `version` to file_restore.")),
    Method(
        "file.restore", "chorus_tools.tools.mutate.restore:restore",
        "Put back a file's content from file.history (atomic, undoable).",
        _obj(["path", "version"], path=PATH, version={"type": "string"},
             expected_version=VERSION),
        _obj(["success", "version"], success=_SUCCESS,
             version=nullable(VERSION), diagnostics=DIAGNOSTICS),
        mutating=True, destructive=True, title="Restore file",
        description=(
            "Put a file back as it was at a file_history `version`, atomically (a deleted "
            "file reappears). The restore can itself be undone.")),
    Method(
        "workspace.checkpoint", "chorus_tools.tools.mutate.restore:mark",
        "Mark this moment, to rewind every later change with workspace.rewind.",
        _obj([], label={"type": "string"}),
        _obj(["checkpoint"], checkpoint={"type": "string"}),
        mutating=True, marks=True, title="Checkpoint",
        description=(
            "Mark this moment; workspace_rewind to the returned `checkpoint` undoes every "
            "change this server made since.")),
    Method(
        "workspace.rewind", "chorus_tools.tools.mutate.rewind:rewind",
        "Undo every change made since a checkpoint, all or nothing.",
        _obj(["checkpoint"], checkpoint={"type": "string"}, dry_run={"type": "boolean"},
             force={"type": "boolean"}),
        _obj(["restored", "deleted", "diff", "conflicts"],
             restored={"type": "array", "items": {"type": "string"}},
             deleted={"type": "array", "items": {"type": "string"}}, diff={"type": "string"},
             conflicts={"type": "array", "items": {"type": "string"}}),
        mutating=True, destructive=True, title="Rewind to checkpoint",
        description=(
            "Undo every change this server made since `checkpoint`, all or nothing "
            "(`dry_run`: the diff only). Files others changed since are listed in "
            "`conflicts` and kept unless `force`.")),
    Method(
        "workspace.watch", "chorus_tools.tools.watch.checks:prepare",
        "Watch a directory: workspace/didChange notifications carry its changes.",
        _obj([], path=PATH, pattern={"type": "string"},
             include_ignored={"type": "boolean"}),
        _obj(["watch_id"], watch_id={"type": "string"}), mcp_tool=False),
    Method(
        "workspace.unwatch", None,
        "Stop a watch started by workspace.watch.",
        _obj(["watch_id"], watch_id={"type": "string"}),
        _obj(["success"], success=_SUCCESS), path_params=(), mcp_tool=False),
    Method(
        "workspace.status", "chorus_tools.tools.warm.status:status",
        "The warm tree, content and symbol indexes: ready or building, files, memory; the "
        "workspace's usage and quota.",
        _obj([]),
        _obj(["tree", "index", "symbols", "files", "directories", "indexed_files",
              "indexed_bytes", "symbol_files", "symbols_indexed", "memory_bytes",
              "memory_budget", "usage", "quota"],
             tree={"enum": ["building", "ready", "off"]},
             index={"enum": ["building", "ready", "off"]},
             symbols={"enum": ["building", "ready", "off"]}, symbol_files=NON_NEGATIVE,
             symbols_indexed=NON_NEGATIVE,
             files=NON_NEGATIVE, directories=NON_NEGATIVE, indexed_files=NON_NEGATIVE,
             indexed_bytes=NON_NEGATIVE, memory_bytes=NON_NEGATIVE,
             memory_budget=NON_NEGATIVE, reason={"type": "string"},
             usage=_obj(["bytes", "files"], bytes=NON_NEGATIVE, files=NON_NEGATIVE),
             quota=_obj(["bytes", "files"], bytes=_LIMIT, files=_LIMIT)),
        path_params=(), mcp_tool=False),
    Method(
        "rpc.metrics", None,
        "The server's figures (requests, latency, bytes, usage) as JSON, as /metrics has them.",
        _obj([]), {"type": "object"}, path_params=(), mcp_tool=False),
    *code_table.METHODS,
    *bytes_table.METHODS,
]}


DIALECTS: tuple[Method, ...] = (*claude_table.METHODS, *scope_table.METHODS,
                                *shadow_table.METHODS, *codex_table.METHODS,
                                *anthropic_table.METHODS, *gemini_table.METHODS)
ALL_METHODS: tuple[Method, ...] = (*METHODS.values(), *DIALECTS)
TOOLSETS = ("native", "claude", "scope", "shadow", "codex", "anthropic", "gemini")


def clashes(toolsets: tuple[str, ...]) -> dict[str, list[str]]:
    """Names that more than one of the selected sets define, with those sets (e.g. claude
    and shadow both have Read): such sets cannot be served together."""
    owners: dict[str, list[str]] = {}
    for m in ALL_METHODS:
        if m.toolset in toolsets:
            owners.setdefault(m.name, []).append(m.toolset)
    return {name: sets for name, sets in owners.items() if len(sets) > 1}


def callable_methods(toolsets: tuple[str, ...]) -> dict[str, Method]:
    """The methods plain JSON-RPC accepts under `--tools`: the native ones always, plus
    every method of the selected sets (which must not clash)."""
    return {m.name: m for m in ALL_METHODS if m.toolset == "native" or m.toolset in toolsets}


def listed_methods(toolsets: tuple[str, ...], read_only: bool = False) -> list[Method]:
    """The methods `tools/list` shows under `--tools`: those of the selected sets (and the
    code.* methods under `--code-tools`, the pseudo set "code"), less the mutating ones
    under `--read-only` (the worker refuses them anyway) and those that are no MCP tool."""
    return [m for m in ALL_METHODS
            if (m.toolset in toolsets or any(s in toolsets for s in m.also_in)) and m.mcp_tool
            and not (read_only and m.mutating and not m.read_commands)]
