"""The one table of methods: name, function, params and result schemas, and how the
runtime may treat a call. Dispatch, parameter validation, `rpc.discover` and the MCP face's
`tools/list` all read it.

Every method belongs to a tool set (`--tools`): `native` (the `file.*` methods, always
callable over plain JSON-RPC) or a seed dialect (`claude`, `scope`, `shadow`), whose
methods are callable, and listed as MCP tools, only when their set is selected.

Functions are named as "module:function" and imported on first use, so a worker pays only
for the tools it runs.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable

PATH = {"type": "string", "description": "Workspace-relative path (or absolute inside it)"}
VERSION = {"type": "string", "description": "Opaque; changes whenever the file changes"}
TIME = {"type": "string", "description": "ISO 8601 UTC, e.g. 2026-01-31T12:00:00.000000Z"}
POSITIVE = {"type": "integer", "minimum": 1}
NON_NEGATIVE = {"type": "integer", "minimum": 0}
NULLABLE_STR = {"type": ["string", "null"]}


def _obj(required: list[str], **props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required,
            "additionalProperties": False}


@dataclass(frozen=True)
class Method:
    name: str
    target: str | None  # "module:function"; None: answered by the dispatcher itself
    summary: str
    params: dict[str, Any]
    result: dict[str, Any]
    mutating: bool = False  # serialized per file, audited, never killed once running
    stoppable: bool = False  # a cancel kills the worker running it at once
    toolset: str = "native"  # the --tools set it belongs to
    title: str = ""  # MCP tools/list: a short human-readable name
    description: str = ""  # MCP tools/list: written for a model (when to use it, errors)
    idempotent: bool = False  # MCP annotation: repeating the call changes nothing more
    destructive: bool = False  # MCP annotation: it may overwrite or remove what exists
    path_params: tuple[str, ...] = ("path",)  # the params naming paths: ordering, --deny
    shown_as: str = "json"  # MCP content for a model: "read", "search", "list" or "json"
    mcp_tool: bool = True  # listed by tools/list (a watch's notifications reach no model)

    @property
    def tool_name(self) -> str:
        """The MCP tool name: `^[a-zA-Z0-9_-]{1,64}$`, so `file.read` is `file_read`."""
        return self.name.replace(".", "_")

    def mutates(self, params: dict[str, Any]) -> bool:
        """Whether this call changes files (and so is audited): a dry run does not."""
        return self.mutating and params.get("dry_run") is not True  # "yes" is refused: audited

    @cached_property
    def func(self) -> Callable[..., Any] | None:
        if self.target is None:
            return None
        module, _, name = self.target.partition(":")
        return getattr(importlib.import_module(module), name)


_READ_RESULT = {
    "type": "object",
    "oneOf": [
        _obj(["content", "total_lines", "truncated", "start_line", "end_line", "encoding",
              "version"],
             content={"type": "string"}, total_lines=NON_NEGATIVE,
             truncated={"type": "boolean"}, start_line=POSITIVE,
             end_line=NON_NEGATIVE, encoding={"enum": ["utf-8", "utf-8-sig", "utf-16-le",
                                                       "utf-16-be", "latin-1"]},
             version=VERSION),
        _obj(["image", "mime_type", "size", "version"], image={"type": "string"},
             mime_type={"type": "string"}, size=NON_NEGATIVE, version=VERSION),
    ],
}

_FILE_ENTRY = _obj(["path", "size", "modified", "type"], path={"type": "string"},
                   size=NON_NEGATIVE, modified=TIME,
                   type={"enum": ["file", "dir", "symlink", "other"]})

_MATCH_REPORT = _obj(["patch_index", "tier", "count", "lines"], patch_index=NON_NEGATIVE,
                     tier={"enum": ["exact", "line_endings", "indentation"]},
                     count=POSITIVE, lines={"type": "array", "items": POSITIVE})

_SUCCESS = {"type": "boolean"}

_GLOBS = {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}

METHODS: dict[str, Method] = {m.name: m for m in [
    Method(
        "file.read", "chorus_tools.tools.read:read",
        "Read a text file as numbered lines (paged), or an image as base64.",
        _obj(["path"], path=PATH, offset=POSITIVE, limit=POSITIVE,
             raw={"type": "boolean"}),
        _READ_RESULT, stoppable=True, title="Read file", idempotent=True, shown_as="read",
        description=(
            "Read a text file from the workspace. Returns its lines numbered like `cat -n` "
            "(line number, tab, text); the numbers are not part of the file, so never copy "
            "them into file_patch's `find`. Large files come in windows: `offset` is the "
            "first line (1-based), `limit` the number of lines; when the answer says more "
            "lines follow, call again with offset = end_line + 1. `raw: true` returns the "
            "exact text without numbers. PNG, JPEG, GIF and WebP files come back as an "
            "image. Paths are relative to the workspace root. Errors: file_not_found (check "
            "the path with file_list or file_search), is_directory (use file_list), "
            "binary_file (not text: use file_info), file_too_large, "
            "path_outside_workspace (stay inside the workspace).")),
    Method(
        "file.write", "chorus_tools.tools.write:write",
        "Create or replace a file atomically with UTF-8 content.",
        _obj(["path", "content"], path=PATH, content={"type": "string"},
             create_dirs={"type": "boolean"}, overwrite={"type": "boolean"},
             expected_version=VERSION),
        _obj(["success", "bytes_written", "created", "version"],
             success={"type": "boolean"}, bytes_written=NON_NEGATIVE,
             created={"type": "boolean"}, version=VERSION),
        mutating=True, title="Write file", idempotent=True, destructive=True,
        description=(
            "Create a file, or replace a whole file, with the given UTF-8 `content` "
            "(atomic: readers see the old file or the new one, never a mix). Missing parent "
            "directories are created. To change part of an existing file prefer "
            "file_patch, which needs only the changed text. `overwrite: false` refuses an "
            "existing file (already_exists); `expected_version` (from an earlier read or "
            "write) refuses if the file changed since (conflict: read it again, then "
            "redo the change). Errors: is_directory, not_a_directory (a parent is a file), "
            "file_too_large, permission_denied, path_outside_workspace.")),
    Method(
        "file.patch", "chorus_tools.tools.patch:patch",
        "Apply ordered search-and-replace edits, all or nothing.",
        _obj(["path", "patches"], path=PATH,
             patches={"type": "array", "items": _obj(
                 ["find", "replace"], find={"type": "string"},
                 replace={"type": "string"}, replace_all={"type": "boolean"})},
             dry_run={"type": "boolean"}, expected_version=VERSION),
        _obj(["success", "patches_applied", "replacements", "matches", "diff", "version"],
             success={"type": "boolean"}, patches_applied=NON_NEGATIVE,
             replacements=NON_NEGATIVE, matches={"type": "array", "items": _MATCH_REPORT},
             diff={"type": "string"},
             version={**VERSION, "type": ["string", "null"]}),  # null: dry-run creation
        mutating=True, title="Edit file (find and replace)", destructive=True,
        description=(
            "Edit a file by exact search and replace: each of `patches` replaces its `find` "
            "text with `replace`, in order, all or nothing. Read the file first and copy "
            "`find` from it exactly (without the line numbers), with enough surrounding "
            "lines to be unique; `replace_all: true` replaces every occurrence. Differences "
            "in line endings and indentation are tolerated; anything else must match. "
            "Returns a unified diff of the change; `dry_run: true` only shows it. A missing "
            "file with one patch whose `find` is \"\" is created. Errors: find_not_found "
            "(data.hint shows the closest text in the file: fix `find` from it, no "
            "re-read needed), find_not_unique (data.lines lists where it occurs: add "
            "context or use replace_all), conflict (expected_version is stale: read "
            "again), file_not_found, binary_file, invalid_params (names the parameter).")),
    Method(
        "file.delete", "chorus_tools.tools.delete:delete",
        "Delete a regular file or a symlink (never its target, never a directory).",
        _obj(["path"], path=PATH),
        _obj(["success"], success={"type": "boolean"}),
        mutating=True, title="Delete file", idempotent=True, destructive=True,
        description=(
            "Delete one file, or a symlink (the link itself, never what it points to). "
            "Directories are refused (is_directory). Errors: file_not_found (already "
            "gone: nothing to do), is_directory, permission_denied, "
            "path_outside_workspace.")),
    Method(
        "file.list", "chorus_tools.tools.listing:list_files",
        "List a directory's entries, or the paths matching a glob beneath it.",
        _obj([], path=PATH, pattern={"type": "string"},
             include_hidden={"type": "boolean"}, include_ignored={"type": "boolean"},
             sort={"enum": ["path", "modified", "size"]}, max_results=POSITIVE),
        _obj(["files", "truncated"], files={"type": "array", "items": _FILE_ENTRY},
             truncated={"type": "boolean"}),
        stoppable=True, title="List files", idempotent=True, shown_as="list",
        description=(
            "List the workspace's files. Without `pattern`: the entries directly in `path` "
            "(default: the root). With `pattern`: every path beneath `path` matching the "
            "glob (`**/*.py`, `src/*.{ts,tsx}`; `*.py` matches only directly in `path`). "
            "Hidden entries and paths ignored by .gitignore/.ignore are left out unless "
            "include_hidden / include_ignored. `sort`: path (default), modified (newest "
            "first) or size. Results stop at `max_results` with truncated: true. Use it to "
            "find files by name; use file_search to find text inside files. Errors: "
            "file_not_found, not_a_directory (a file: use file_info or file_read), "
            "invalid_pattern (fix the glob).")),
    Method(
        "file.search", "chorus_tools.tools.search.search:search",
        "Search file contents with a regex (ripgrep syntax) or a fixed string.",
        _obj(["pattern"], pattern={"type": "string"}, path=PATH, glob=_GLOBS,
             case_sensitive={"type": "boolean"}, literal={"type": "boolean"},
             context_lines=NON_NEGATIVE, max_results=POSITIVE,
             output_mode={"enum": ["content", "files_with_matches", "count"]},
             multiline={"type": "boolean"}, include_hidden={"type": "boolean"},
             include_ignored={"type": "boolean"}),
        {"type": "object", "required": ["truncated", "engine"], "properties": {
            "matches": {"type": "array", "items": _obj(
                ["path", "line", "content"], path={"type": "string"}, line=POSITIVE,
                content={"type": "string"})},
            "files": {"type": "array", "items": {"type": "string"}},
            "counts": {"type": "array", "items": _obj(
                ["path", "count"], path={"type": "string"}, count=POSITIVE)},
            "total": NON_NEGATIVE, "truncated": {"type": "boolean"},
            "engine": {"enum": ["ripgrep", "python"]}}},
        stoppable=True, title="Search file contents", idempotent=True, shown_as="search",
        description=(
            "Search the text of files beneath `path` (default: the whole workspace) for a "
            "regular expression in ripgrep syntax, or a fixed string with `literal: true`. "
            "Answers `path:line:text` lines, in path then line order. `glob` limits the "
            "files (`*.py`, `!tests/**`); `case_sensitive: false` ignores case; "
            "`context_lines` adds surrounding lines (matching lines marked `-->`); "
            "`output_mode`: content (default), files_with_matches (paths only) or count. "
            "At most `max_results` (default 100) results, with truncated: true when more "
            "exist. Hidden and ignored files are skipped unless include_hidden / "
            "include_ignored. Errors: invalid_pattern (data.reason says why: escape "
            "special characters or use literal), timeout (narrow path or glob).")),
    Method(
        "file.info", "chorus_tools.tools.info:info",
        "Describe a path: type, size, times, mode, symlink, encoding, lines, version.",
        _obj(["path"], path=PATH),
        _obj(["path", "type", "size", "modified", "mode", "is_symlink", "symlink_target",
              "mime_type", "is_binary", "encoding", "lines", "version"],
             path={"type": "string"}, type={"enum": ["file", "dir", "symlink", "other"]},
             size={"type": ["integer", "null"]}, modified={"type": ["string", "null"]},
             mode=NULLABLE_STR, is_symlink={"type": "boolean"},
             symlink_target=NULLABLE_STR, mime_type=NULLABLE_STR,
             is_binary={"type": ["boolean", "null"]}, encoding=NULLABLE_STR,
             lines={"type": ["integer", "null"]}, version=NULLABLE_STR),
        stoppable=True, title="File information", idempotent=True,
        description=(
            "Describe one path without reading it whole: type (file, dir, symlink, other), "
            "size, modification time, permission mode, symlink target, MIME type, whether "
            "it is binary, its text encoding and line count, and its version (pass it as "
            "expected_version to file_write or file_patch to refuse a stale edit). Use it "
            "to check a path exists or to size a file before reading. Errors: "
            "file_not_found, path_outside_workspace.")),
    Method(
        "file.move", "chorus_tools.tools.move:move",
        "Move or rename a file or directory (one atomic rename inside the workspace).",
        _obj(["source", "destination"], source=PATH, destination=PATH,
             overwrite={"type": "boolean"}, create_dirs={"type": "boolean"}),
        _obj(["success", "version"], success=_SUCCESS, version=VERSION),
        mutating=True, destructive=True, path_params=("source", "destination"),
        title="Move or rename",
        description=(
            "Move or rename a file or a directory inside the workspace, in one atomic step "
            "(nothing is copied). Missing parent directories of `destination` are created "
            "unless create_dirs: false. An existing destination is refused "
            "(already_exists) unless overwrite: true. Errors: file_not_found (the source "
            "is missing: check it with file_list), already_exists, not_a_directory (a "
            "parent is a file), permission_denied, path_outside_workspace.")),
    Method(
        "dir.create", "chorus_tools.tools.dirs:create",
        "Create a directory (and its missing parents, like mkdir -p).",
        _obj(["path"], path=PATH, parents={"type": "boolean"}),
        _obj(["success", "created"], success=_SUCCESS, created={"type": "boolean"}),
        mutating=True, idempotent=True, title="Create directory",
        description=(
            "Create a directory, with its missing parents (like mkdir -p; parents: false "
            "to refuse a missing parent). An existing directory is a success with "
            "created: false. Writing a file creates its directories already, so this is "
            "only needed for an empty one. Errors: not_a_directory (a file is in the "
            "way), permission_denied, path_outside_workspace.")),
    Method(
        "dir.delete", "chorus_tools.tools.dirs:delete",
        "Delete an empty directory, or with recursive: true a whole tree (never the root).",
        _obj(["path"], path=PATH, recursive={"type": "boolean"}),
        _obj(["success", "removed"], success=_SUCCESS, removed=NON_NEGATIVE),
        mutating=True, destructive=True, title="Delete directory",
        description=(
            "Delete an empty directory, or with recursive: true the directory and "
            "everything in it (symlinks inside are removed, never followed; the workspace "
            "root itself is refused). `removed` counts the entries deleted. Errors: "
            "not_a_directory (a file: use file_delete), file_not_found, invalid_params "
            "(not empty without recursive, or the root), permission_denied.")),
    Method(
        "workspace.watch", "chorus_tools.tools.watch:prepare",
        "Watch a directory: workspace/didChange notifications carry its changes.",
        _obj([], path=PATH, pattern={"type": "string"},
             include_ignored={"type": "boolean"}),
        _obj(["watch_id"], watch_id={"type": "string"}), mcp_tool=False),
    Method(
        "workspace.unwatch", None,
        "Stop a watch started by workspace.watch.",
        _obj(["watch_id"], watch_id={"type": "string"}),
        _obj(["success"], success=_SUCCESS), path_params=(), mcp_tool=False),
]}


TOOLSETS = ("native", "claude", "scope", "shadow")


def callable_methods(toolsets: tuple[str, ...]) -> dict[str, Method]:
    """The methods plain JSON-RPC accepts under `--tools`: the native ones always, plus
    every method of the selected sets."""
    return {name: m for name, m in METHODS.items()
            if m.toolset == "native" or m.toolset in toolsets}


def listed_methods(toolsets: tuple[str, ...], read_only: bool = False) -> list[Method]:
    """The methods `tools/list` shows under `--tools`: those of the selected sets, less
    the mutating ones under `--read-only` (the worker refuses them anyway) and those that
    are no MCP tool."""
    return [m for m in METHODS.values()
            if m.toolset in toolsets and m.mcp_tool and not (read_only and m.mutating)]
