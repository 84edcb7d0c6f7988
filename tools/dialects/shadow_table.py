"""The `shadow` tool set's methods (`--tools shadow` in docs/protocol.md, Starting the
server): the seed's (003) names, aliases and integers-as-strings; adapters in shadow.py,
which settle the aliases (the schema lets either spelling through, the adapter refuses two
that disagree or none at all)."""

from __future__ import annotations

from typing import Unpack

from chorus_tools.tools.errors import SINGLE_LINE_WORDS
from chorus_tools.tools.method import DIAGNOSTICS, NON_NEGATIVE, PATH, Method, Options, obj

_ADAPTERS = "chorus_tools.tools.dialects.shadow:"
_FILE = ("file_path", "filePath")
_PATH = {**PATH, "description": "Workspace-relative path"}
_ALIAS = {**_PATH, "description": "Alias of file_path"}
# an integer, or the same as a decimal string: two schemas of one type each (a type array
# draws the Inspector's --strict portability warning and Gemini's schema subset refuses it)
INT_STR = {"anyOf": [{"type": "integer", "minimum": 0},
                     {"type": "string", "pattern": r"^\s*[0-9]+\s*$"}]}
_TEXT = {"type": "string"}
_STRINGS = {"type": "array", "items": {"type": "string"}}
# the core's names in these tools' words (tools/errors.in_words)
_FILE_WORDS = {"use file.info for its metadata": "it cannot be shown as text",
               "'path'": "'file_path'", "file.read": "Read", "file.patch": "Edit",
               "file.write": "Write", "file.list": "ListDir"}
_EDIT_WORDS = {"patches[{i}].find": "old", "patches[{i}].replace_all": "replace_all",
               "patches[{i}].replace": "new", "patches[{i}].count": "count",
               "patches[{i}]": "the edit", **_FILE_WORDS}
_ROOT_WORDS = {"'path'": "'root'", "file.info or file.read": "Read", "file.list": "Glob"}
NO_LITERAL = {"pass literal: true": "escape its special characters with '\\'"}


def _method(name: str, summary: str, params: dict, result: dict, description: str,
            **kw: Unpack[Options]) -> Method:
    return Method(name, f"{_ADAPTERS}{name.lower()}_tool", summary, params, result,
                  toolset="shadow", title=summary, description=description, **kw)


METHODS = (
    _method("Read", "Read a file",
            obj([], file_path=_PATH, filePath=_ALIAS,
                offset={**INT_STR, "description": "1-based line to start at"},
                limit={**INT_STR, "description": "Number of lines to return"}),
            {"type": "object", "oneOf": [
                obj(["file_path", "content"], file_path=_TEXT, content=_TEXT),
                obj(["file_path", "image", "mime_type", "file_size"], file_path=_TEXT,
                    image=_TEXT, mime_type=_TEXT, file_size=NON_NEGATIVE)]},
            "Reads a file from the workspace: text as numbered lines (offset/limit for a "
            "window), PNG/JPEG/GIF/WebP images as base64.",
            stoppable=True, idempotent=True, path_params=_FILE, words=_FILE_WORDS,
            shown_as="file"),
    _method("Write", "Write a file",
            obj(["content"], file_path=_PATH, filePath=_ALIAS, content=_TEXT,
                overwrite={"type": "boolean",
                           "description": "Replace an existing file"}),
            obj(["file_path", "bytes_written", "message"], file_path=_TEXT,
                bytes_written=NON_NEGATIVE, message=_TEXT, diagnostics=DIAGNOSTICS),
            "Creates a file (and its directories) atomically. An existing file is "
            "already_exists unless overwrite is true.",
            mutating=True, destructive=True, path_params=_FILE, words=_FILE_WORDS),
    _method("Edit", "Replace text in a file",
            obj([], file_path=_PATH, filePath=_ALIAS,
                old={**_TEXT, "description": "Exact text to replace"},
                old_string=_TEXT, oldString=_TEXT,
                new={**_TEXT, "description": "Replacement"}, new_string=_TEXT,
                newString=_TEXT,
                count={**INT_STR, "description": "How many occurrences "
                       "there must be and are replaced; 0 means all"},
                replace_all={"type": "boolean"}, replaceAll={
                    "type": "boolean"},
                before={**_TEXT, "description": "Text that must come just before (only "
                        "whitespace between)"},
                after={**_TEXT, "description": "Text that must come just after (only "
                       "whitespace between)"}),
            obj(["file_path", "replacements", "message"], file_path=_TEXT,
                replacements=NON_NEGATIVE, message=_TEXT, diagnostics=DIAGNOSTICS),
            "Replaces exact text in a file: old must occur exactly count times (default "
            "1; 0 or replace_all: every occurrence, at least one). before/after anchors "
            "pick the occurrences they surround. Nothing changes on any error; a failed "
            "find carries a hint of the closest region.",
            mutating=True, destructive=True, path_params=_FILE, words=_EDIT_WORDS),
    _method("ListDir", "List a directory",
            obj([], path={**_PATH, "description": "Directory (default: workspace root)"}),
            obj(["path", "entries"], path=_TEXT, entries={"type": "array", "items": obj(
                ["name", "type"], name=_TEXT, type={"enum": ["file", "dir"]})}),
            "Lists a directory's entries as file or dir (hidden and ignored ones left "
            "out).", stoppable=True, idempotent=True,
            words={"file.info or file.read": "Read", "file.list": "ListDir",
                   "file.info": "ListDir"}),
    _method("Glob", "Find files by glob",
            obj(["pattern"], pattern={**_TEXT, "description": "*, ? and ** (recursive)"},
                root={**_PATH, "description": "Base directory"},
                path={**_PATH, "description": "Alias of root"},
                max_files={**INT_STR, "description": "Cap on the entries examined"}),
            obj(["matches", "count", "truncated"], matches=_STRINGS, count=NON_NEGATIVE,
                truncated={"type": "boolean"}),
            "Finds files matching a glob beneath root, in path order.",
            stoppable=True, idempotent=True, path_params=("root", "path"), words=_ROOT_WORDS),
    _method("Grep", "Search file contents",
            obj(["query"], query={**_TEXT, "description": "A JavaScript RegExp source"},
                file_glob={**_TEXT},
                root={**_PATH, "description": "Directory to search"},
                path={**_PATH, "description": "Alias of root"},
                case_sensitive={"type": "boolean"},
                mode={"enum": ["content", "files_with_matches"]},
                before_context={**INT_STR},
                after_context={**INT_STR}),
            {"type": "object", "required": ["truncated"], "properties": {
                "matches": {"type": "array", "items": obj(
                    ["file_path", "line", "text", "before_context", "after_context"],
                    file_path=_TEXT, line={"type": "integer", "minimum": 1}, text=_TEXT,
                    before_context=_STRINGS, after_context=_STRINGS)},
                "files": _STRINGS, "truncated": {"type": "boolean"}}},
            "Searches file contents with a JavaScript regex (ignored, hidden and binary "
            "files skipped): matching lines with context, or the files that match.",
            stoppable=True, idempotent=True, path_params=("root", "path"),
            words={"pattern": "query", "glob": "file_glob", **_ROOT_WORDS, **NO_LITERAL,
                   **SINGLE_LINE_WORDS}),
)
