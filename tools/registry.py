"""The one table of methods: name, function, params and result schemas, and how the
runtime may treat a call. Dispatch, parameter validation, `rpc.discover` and the MCP face's
`tools/list` all read it.

Every method belongs to a tool set (`--tools`): `native` (the `file.*` methods, always
callable over plain JSON-RPC) or a seed dialect (`claude`, `scope`, `shadow`), whose
methods are callable, and listed as MCP tools, only when their set is selected. The
native methods are below; each dialect's are in tools/dialects/<set>_table.py. Two sets
that define the same name cannot be served together (`clashes`).

Functions are named as "module:function" and imported on first use, so a worker pays only
for the tools it runs.
"""

from __future__ import annotations

from typing import Any

from chorus_tools.tools.dialects import claude_table, scope_table, shadow_table
from chorus_tools.tools.method import (GLOBS, NON_NEGATIVE, NULLABLE_STR, PATCH_RESULT, PATH,
                                      POSITIVE, READ_RESULT, FILE_ENTRY, SEARCH_RESULT,
                                      VERSION, WRITE_RESULT, Method, obj as _obj)

_SUCCESS = {"type": "boolean"}

METHODS: dict[str, Method] = {m.name: m for m in [
    Method(
        "file.read", "chorus_tools.tools.read:read",
        "Read a text file as numbered lines (paged), or an image as base64.",
        _obj(["path"], path=PATH, offset=POSITIVE, limit=POSITIVE,
             raw={"type": "boolean"}),
        READ_RESULT, stoppable=True, read_state="shown"),
    Method(
        "file.write", "chorus_tools.tools.write:write",
        "Create or replace a file atomically with UTF-8 content.",
        _obj(["path", "content"], path=PATH, content={"type": "string"},
             create_dirs={"type": "boolean"}, overwrite={"type": "boolean"},
             expected_version=VERSION),
        WRITE_RESULT, mutating=True, read_state="shown"),
    Method(
        "file.patch", "chorus_tools.tools.patch:patch",
        "Apply ordered search-and-replace edits, all or nothing.",
        _obj(["path", "patches"], path=PATH,
             patches={"type": "array", "items": _obj(
                 ["find", "replace"], find={"type": "string"},
                 replace={"type": "string"}, replace_all={"type": "boolean"})},
             dry_run={"type": "boolean"}, expected_version=VERSION),
        PATCH_RESULT, mutating=True, read_state="shown"),
    Method(
        "file.delete", "chorus_tools.tools.delete:delete",
        "Delete a regular file or a symlink (never its target, never a directory).",
        _obj(["path"], path=PATH),
        _obj(["success"], success={"type": "boolean"}), mutating=True, read_state="removed"),
    Method(
        "file.list", "chorus_tools.tools.listing:list_files",
        "List a directory's entries, or the paths matching a glob beneath it.",
        _obj([], path=PATH, pattern={"type": "string"}, recursive={"type": "boolean"},
             depth=POSITIVE, exclude=GLOBS,
             include_hidden={"type": "boolean"}, include_ignored={"type": "boolean"},
             sort={"enum": ["path", "modified", "size"]}, max_results=POSITIVE),
        _obj(["files", "truncated"], files={"type": "array", "items": FILE_ENTRY},
             truncated={"type": "boolean"}),
        stoppable=True),
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
        stoppable=True),
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
        stoppable=True),
    Method(
        "file.move", "chorus_tools.tools.move:move",
        "Move or rename a file or directory (one atomic rename inside the workspace).",
        _obj(["source", "destination"], source=PATH, destination=PATH,
             overwrite={"type": "boolean"}, create_dirs={"type": "boolean"}),
        _obj(["success", "version"], success=_SUCCESS, version=VERSION),
        mutating=True, destructive=True, path_params=("source", "destination")),
    Method(
        "dir.create", "chorus_tools.tools.dirs:create",
        "Create a directory (and its missing parents, like mkdir -p).",
        _obj(["path"], path=PATH, parents={"type": "boolean"}),
        _obj(["success", "created"], success=_SUCCESS, created={"type": "boolean"}),
        mutating=True, idempotent=True),
    Method(
        "dir.delete", "chorus_tools.tools.dirs:delete",
        "Delete an empty directory, or with recursive: true a whole tree (never the root).",
        _obj(["path"], path=PATH, recursive={"type": "boolean"}),
        _obj(["success", "removed"], success=_SUCCESS, removed=NON_NEGATIVE),
        mutating=True, destructive=True),
    Method(
        "workspace.watch", "chorus_tools.tools.watch:prepare",
        "Watch a directory: workspace/didChange notifications carry its changes.",
        _obj([], path=PATH, pattern={"type": "string"},
             include_ignored={"type": "boolean"}),
        _obj(["watch_id"], watch_id={"type": "string"})),
    Method(
        "workspace.unwatch", None,
        "Stop a watch started by workspace.watch.",
        _obj(["watch_id"], watch_id={"type": "string"}),
        _obj(["success"], success=_SUCCESS), path_params=()),
]}


DIALECTS: tuple[Method, ...] = (*claude_table.METHODS, *scope_table.METHODS,
                                *shadow_table.METHODS)
ALL_METHODS: tuple[Method, ...] = (*METHODS.values(), *DIALECTS)
TOOLSETS = ("native", "claude", "scope", "shadow")


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
    the mutating ones under `--read-only` (the worker refuses them anyway)."""
    return [m for m in ALL_METHODS
            if m.toolset in toolsets and not (read_only and m.mutating)]
