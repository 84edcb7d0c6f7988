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
OFFSET = {"type": "integer", "not": {"const": 0},
          "description": "First line, 1-based; negative counts from the end (-20: the last "
                         "20 lines, numbered as in the file)"}


def _obj(required: list[str], **props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required,
            "additionalProperties": False}


@dataclass(frozen=True)
class Method:
    name: str
    target: str  # "module:function"
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

    @property
    def tool_name(self) -> str:
        """The MCP tool name: `^[a-zA-Z0-9_-]{1,64}$`, so `file.read` is `file_read`."""
        return self.name.replace(".", "_")

    def mutates(self, params: dict[str, Any]) -> bool:
        """Whether this call changes files (and so is audited): a dry run does not."""
        return self.mutating and params.get("dry_run") is not True  # "yes" is refused: audited

    @cached_property
    def func(self) -> Callable[..., Any]:
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

_GLOBS = {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}

METHODS: dict[str, Method] = {m.name: m for m in [
    Method(
        "file.read", "chorus_tools.tools.read:read",
        "Read a text file as numbered lines (paged), or an image as base64.",
        _obj(["path"], path=PATH, offset=OFFSET, limit=POSITIVE,
             raw={"type": "boolean"}),
        _READ_RESULT, stoppable=True),
    Method(
        "file.write", "chorus_tools.tools.write:write",
        "Create or replace a file atomically with UTF-8 content.",
        _obj(["path", "content"], path=PATH, content={"type": "string"},
             create_dirs={"type": "boolean"}, overwrite={"type": "boolean"},
             expected_version=VERSION),
        _obj(["success", "bytes_written", "created", "version"],
             success={"type": "boolean"}, bytes_written=NON_NEGATIVE,
             created={"type": "boolean"}, version=VERSION),
        mutating=True),
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
        mutating=True),
    Method(
        "file.delete", "chorus_tools.tools.delete:delete",
        "Delete a regular file or a symlink (never its target, never a directory).",
        _obj(["path"], path=PATH),
        _obj(["success"], success={"type": "boolean"}),
        mutating=True),
    Method(
        "file.list", "chorus_tools.tools.listing:list_files",
        "List a directory's entries, or the paths matching a glob beneath it.",
        _obj([], path=PATH, pattern={"type": "string"},
             include_hidden={"type": "boolean"}, include_ignored={"type": "boolean"},
             sort={"enum": ["path", "modified", "size"]}, max_results=POSITIVE),
        _obj(["files", "truncated"], files={"type": "array", "items": _FILE_ENTRY},
             truncated={"type": "boolean"}),
        stoppable=True),
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
]}


TOOLSETS = ("native", "claude", "scope", "shadow")


def callable_methods(toolsets: tuple[str, ...]) -> dict[str, Method]:
    """The methods plain JSON-RPC accepts under `--tools`: the native ones always, plus
    every method of the selected sets."""
    return {name: m for name, m in METHODS.items()
            if m.toolset == "native" or m.toolset in toolsets}


def listed_methods(toolsets: tuple[str, ...]) -> list[Method]:
    """The methods `tools/list` shows under `--tools`: those of the selected sets."""
    return [m for m in METHODS.values() if m.toolset in toolsets]
