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

from chorus_tools.tools.dialects import (anthropic_table, claude_table, codex_table,
                                         gemini_table, scope_table, shadow_table)
from chorus_tools.tools.method import (GLOBS, NON_NEGATIVE, NULLABLE_STR, PATCH_RESULT, PATH,
                                      POSITIVE, READ_RESULT, FILE_ENTRY, SEARCH_RESULT, TIME,
                                      VERSION, WRITE_RESULT, Method, obj as _obj)

OFFSET = {"type": "integer", "not": {"const": 0},
          "description": "First line, 1-based; negative counts from the end (-20: the last "
                         "20 lines, numbered as in the file)"}

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
        "file.write", "chorus_tools.tools.mutate.write:write",
        "Create or replace a file atomically with UTF-8 content.",
        _obj(["path", "content"], path=PATH, content={"type": "string"},
             create_dirs={"type": "boolean"}, overwrite={"type": "boolean"},
             expected_version=VERSION),
        WRITE_RESULT, mutating=True, read_state="shown", title="Write file", idempotent=True,
        destructive=True,
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
        "file.delete", "chorus_tools.tools.mutate.delete:delete",
        "Delete a regular file or a symlink (never its target, never a directory).",
        _obj(["path"], path=PATH),
        _obj(["success"], success={"type": "boolean"}), mutating=True, read_state="removed",
        title="Delete file", idempotent=True, destructive=True,
        description=(
            "Delete one file, or a symlink (the link itself, never what it points to). "
            "Directories are refused (is_directory). Errors: file_not_found (already "
            "gone: nothing to do), is_directory, permission_denied, "
            "path_outside_workspace.")),
    Method(
        "file.list", "chorus_tools.tools.walk.listing:list_files",
        "List a directory's entries, or the paths matching a glob beneath it.",
        _obj([], path=PATH, pattern={"type": "string"}, recursive={"type": "boolean"},
             depth=POSITIVE, exclude=GLOBS,
             include_hidden={"type": "boolean"}, include_ignored={"type": "boolean"},
             sort={"enum": ["path", "modified", "size"]}, max_results=POSITIVE),
        _obj(["files", "truncated"], files={"type": "array", "items": FILE_ENTRY},
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
        "file.info", "chorus_tools.tools.read.info:info",
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
        "file.move", "chorus_tools.tools.mutate.move:move",
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
        "dir.create", "chorus_tools.tools.mutate.dirs:create",
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
        "dir.delete", "chorus_tools.tools.mutate.dirs:delete",
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
        "file.history", "chorus_tools.tools.mutate.restore:locate",
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
            "List what a file held before each change this server made to it (write, "
            "patch, delete, move, restore, rewind), newest first, up to `limit` (20). "
            "`exists: false`: there was no file then. `evicted: true`: dropped by the "
            "history's size budget. Pass a `version` to file_restore.")),
    Method(
        "file.restore", "chorus_tools.tools.mutate.restore:restore",
        "Put back a file's content from file.history (atomic, undoable).",
        _obj(["path", "version"], path=PATH, version={"type": "string"},
             expected_version=VERSION),
        _obj(["success", "version"], success=_SUCCESS,
             version={**VERSION, "type": ["string", "null"]}),
        mutating=True, destructive=True, title="Restore file",
        description=(
            "Put a file back as it was at a `version` from file_history, atomically (a "
            "deleted file reappears; `exists: false` removes it). The restore is itself "
            "kept, so it can be undone. Errors: invalid_params (unknown or evicted "
            "version), conflict (expected_version is stale).")),
    Method(
        "workspace.checkpoint", "chorus_tools.tools.mutate.restore:mark",
        "Mark this moment, to rewind every later change with workspace.rewind.",
        _obj([], label={"type": "string"}),
        _obj(["checkpoint"], checkpoint={"type": "string"}),
        mutating=True, title="Checkpoint",
        description=(
            "Mark the workspace's state now, before a risky series of changes; "
            "workspace_rewind with the returned `checkpoint` later undoes every change "
            "this server made since.")),
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
            "Return every file this server changed since `checkpoint` to its content then "
            "(files created since are deleted), all or nothing; `dry_run: true` only shows "
            "the diff. A file someone else changed since is listed in `conflicts` and left "
            "alone unless force: true.")),
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
    """The methods `tools/list` shows under `--tools`: those of the selected sets, less
    the mutating ones under `--read-only` (the worker refuses them anyway) and those that
    are no MCP tool."""
    return [m for m in ALL_METHODS if m.toolset in toolsets and m.mcp_tool
            and not (read_only and m.mutating and not m.read_commands)]
