"""A method of the registry (tools/registry.py) and the JSON Schema pieces its tables are
written with; the seed dialects' tables (tools/dialects/*_table.py) use them too."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, TypedDict

from chorus_tools.tools.read.text import ENCODINGS as TEXT_ENCODINGS

PATH = {"type": "string", "description": "Relative to the workspace root"}
VERSION = {"type": "string", "description": "Opaque; changes whenever the file changes"}
TIME = {"type": "string", "description": "ISO 8601 UTC, e.g. 2026-01-31T12:00:00.000000Z"}
POSITIVE = {"type": "integer", "minimum": 1}
NON_NEGATIVE = {"type": "integer", "minimum": 0}


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` or null, spelled as anyOf: one `type` per schema, which clients that map
    tool schemas onto a single-type dialect (Gemini's OpenAPI subset) accept, and which
    the Inspector's --strict passes (a type array draws its portability warning)."""
    return {"anyOf": [schema, {"type": "null"}]}


NULLABLE_STR = nullable({"type": "string"})
ENCODINGS = ["utf-8", "utf-8-sig", "utf-16-le", "utf-16-be", "latin-1"]  # written
READ_ENCODINGS = list(TEXT_ENCODINGS)  # read: those and the legacy ones a detector names
INVALID_BYTES = POSITIVE  # UTF-8 with bytes that are not: how many (only when there are some)


def load(target: str) -> Callable[..., Any]:
    """The function a "module:function" target names, its module imported on first use."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def obj(required: list[str], **props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required,
            "additionalProperties": False}


HISTORY_NOTE = obj(["kept", "errno", "paths", "message"],
                   kept={"type": "boolean", "const": False}, errno={"type": "string"},
                   paths={"type": "array", "items": PATH}, message={"type": "string"})


class Options(TypedDict, total=False):
    """How the runtime may treat a method (Method's fields after its schemas, less those
    a dialect's table fills in for all its methods), for the dialects' tables."""

    mutating: bool
    stoppable: bool
    idempotent: bool
    destructive: bool
    path_params: tuple[str, ...]
    read_state: str
    shown_as: str
    mcp_tool: bool
    words: dict[str, str]


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
    # the params naming paths: a path's aliases (the first given is the file it is about)
    # or a move's two ends; ordering, records and --deny follow every one given
    path_params: tuple[str, ...] = ("path",)
    # claude's read-before-write (rpc/dispatch/session.py): shown | guarded | removed
    read_state: str = ""
    error_style: str = ""  # "module:function" giving a ToolError the set's own form
    # the core's names in this tool's own (`'path'` -> `'file_path'`, `patches[{i}].find`
    # -> `old_string`): every error its run raises is said in them (tools/errors.in_words)
    words: dict[str, str] = field(default_factory=dict)
    # MCP content for a model: "read", "file" (a dialect's {content} or image), "search",
    # "list", "json", "output" (its set's text), or the code tools' lines: "outline",
    # "symbols", "references", "map"
    shown_as: str = "json"
    mcp_tool: bool = True  # listed by tools/list (a watch's notifications reach no model)
    # listed too when one of these is selected beside `toolset` (the code.* methods under
    # --code-tools: the pseudo set "code")
    also_in: tuple[str, ...] = ()
    # "module:function" naming the paths a call's text holds (apply_patch's patch):
    # params -> [path]; they follow path_params for ordering, records and --deny
    paths_in: str = ""
    # values of a `command` param that only read (the anthropic editor's `view`): such a
    # call of a mutating method is not ordered, recorded or refused as a change
    read_commands: frozenset[str] = frozenset()
    # a mark (a checkpoint): it changes no file, so it is ordered against changes only
    # (rpc/dispatch/ordering.py), never behind a slow read
    marks: bool = False
    # "module:function" run with the same params, in a job of its own, when a running job
    # of this method was killed (the request timeout, a worker's death): it rolls back
    # what the killed job left half done and says where things stand (rpc/dispatch/recover.py)
    recover: str = ""
    # False: the runtime's own upkeep, no client's change (an expired upload removed): it
    # takes its quota turn as a change does, and is neither ordered, recorded nor kept
    audited: bool = True

    def paths_of(self, params: dict[str, Any]) -> dict[str, Any]:
        """The path params given, by name, in the order the method names them (paths
        found in a param's text are named after it: `input`, `input#2`, ...)."""
        given = {p: params[p] for p in self.path_params if p in params}
        if self.paths_in:
            found = load(self.paths_in)(params)
            given.update((name if i == 0 else f"{name}#{i + 1}", path)
                         for i, (name, path) in enumerate(found))
        return given

    def path_of(self, params: dict[str, Any]) -> Any:
        """The path the call is about (ordering, records, read-before-write), or None."""
        return next(iter(self.paths_of(params).values()), None)

    @property
    def tool_name(self) -> str:
        """The MCP tool name: `^[a-zA-Z0-9_-]{1,64}$`, so `file.read` is `file_read`."""
        return self.name.replace(".", "_")

    def mutates(self, params: dict[str, Any]) -> bool:
        """Whether this call changes files (and so is audited): a dry run does not."""
        return (self.mutating and self.audited
                and params.get("dry_run") is not True  # "yes" is refused: audited
                and not self.only_reads(params))

    def only_reads(self, params: dict[str, Any]) -> bool:
        """Whether this call of a many-command tool runs a command that only reads."""
        return bool(self.read_commands) and params.get("command") in self.read_commands

    @cached_property
    def func(self) -> Callable[..., Any] | None:
        return None if self.target is None else load(self.target)

    @cached_property
    def reply(self) -> dict[str, Any]:
        """The result's schema as answered: a change may add `history`, when the history
        could not keep what it replaced (docs/protocol.md, History: --history-full)."""
        if not self.mutating or "properties" not in self.result:
            return self.result
        return {**self.result, "properties": {**self.result["properties"],
                                              "history": HISTORY_NOTE}}


READ_RESULT = {
    "type": "object",
    "oneOf": [
        obj(["content", "total_lines", "truncated", "start_line", "end_line", "encoding",
             "version"],
            content={"type": "string"}, total_lines=NON_NEGATIVE,
            truncated={"type": "boolean"}, start_line=POSITIVE,
            end_line=NON_NEGATIVE, encoding={"enum": READ_ENCODINGS},
            invalid_bytes=INVALID_BYTES, version=VERSION),
        obj(["image", "mime_type", "size", "version"], image={"type": "string"},
            mime_type={"type": "string"}, size=NON_NEGATIVE, version=VERSION),
        # over MCP only: a PDF, which the model reads as an embedded resource
        obj(["document", "mime_type", "size", "version"], document={"type": "string"},
            mime_type={"type": "string"}, size=NON_NEGATIVE, version=VERSION),
    ],
}

ENTRY_TYPE = {"enum": ["file", "dir", "symlink", "other"]}

FILE_ENTRY = obj(["path", "size", "modified", "type"], path={"type": "string"},
                 size=NON_NEGATIVE, modified=TIME, type=ENTRY_TYPE)

MATCH_REPORT = obj(["patch_index", "tier", "count", "lines"], patch_index=NON_NEGATIVE,
                   tier={"enum": ["exact", "line_endings", "indentation"]},
                   count=POSITIVE, lines={"type": "array", "items": POSITIVE})

GLOBS = {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}

# the syntax errors a change left (docs/protocol.md, Diagnostics), or why none were sought
_SKIPPED = obj(["skipped"], skipped={"type": "string"})
# what the check of a Python, JavaScript or TypeScript file adds (docs/protocol.md,
# Diagnostics): problems_checked is false for every other language
_PROBLEMS = {
    "problems_checked": {"type": "boolean"},
    "problems": {"anyOf": [{"type": "array", "items": obj(
        ["line", "column", "code", "message", "introduced"], line=POSITIVE, column=POSITIVE,
        code={"type": "string"}, message={"type": "string"},
        introduced={"type": "boolean"})}, _SKIPPED]},
    "problems_total": NON_NEGATIVE, "problems_introduced": NON_NEGATIVE,
    "broken_imports": {"type": "array", "items": obj(
        ["path", "line", "name"], path={"type": "string"}, line=POSITIVE,
        name={"type": "string"})},
    "broken_imports_total": NON_NEGATIVE,
}
DIAGNOSTICS = {"description": "The syntax errors and problems the change left (Diagnostics), "
               "or why none were sought", "anyOf": [
    obj(["errors", "total", "introduced"],
        errors={"type": "array", "items": obj(["line", "column", "message"], line=POSITIVE,
                                              column=POSITIVE, message={"type": "string"})},
        total=NON_NEGATIVE, introduced=NON_NEGATIVE, **_PROBLEMS),
    obj(["skipped"], skipped={"type": "string"}, problems_checked={"type": "boolean"},
        problems=_SKIPPED),
]}

WRITE_RESULT = obj(["success", "bytes_written", "created", "version"],
                    success={"type": "boolean"}, bytes_written=NON_NEGATIVE,
                    created={"type": "boolean"}, version=VERSION, diagnostics=DIAGNOSTICS)

PATCH_RESULT = obj(["success", "patches_applied", "replacements", "matches", "diff", "version"],
                    success={"type": "boolean"}, patches_applied=NON_NEGATIVE,
                    replacements=NON_NEGATIVE, matches={"type": "array", "items": MATCH_REPORT},
                    diff={"type": "string"},
                    version=nullable(VERSION), diagnostics=DIAGNOSTICS)

SEARCH_RESULT = {"type": "object", "required": ["truncated", "files_searched", "engine"],
                 "properties": {
                     "matches": {"type": "array", "items": obj(
                         ["path", "line", "content"], path={"type": "string"}, line=POSITIVE,
                         content={"type": "string"})},
                     "files": {"type": "array", "items": {"type": "string"}},
                     "counts": {"type": "array", "items": obj(
                         ["path", "count"], path={"type": "string"}, count=POSITIVE)},
                     "total": NON_NEGATIVE, "truncated": {"type": "boolean"},
                     "files_searched": NON_NEGATIVE,
                     "engine": {"enum": ["ripgrep", "python"]},
                     # files ripgrep could not search, searched by the python engine
                     "fallback": obj(["engine", "files", "paths"],
                                     engine={"enum": ["python"]}, files=POSITIVE,
                                     paths={"type": "array", "items": obj(
                                         ["path", "reason"], path={"type": "string"},
                                         reason={"type": "string"})})}}
