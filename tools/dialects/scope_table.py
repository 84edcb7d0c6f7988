"""The `scope` tool set's methods (`--tools scope` in docs/protocol.md, Starting the
server): the seed's (002) names and camelCase params; adapters in scope.py. Its errors carry
`data.code` (SCOPE_VIOLATION, INVALID_INPUT, FILESYSTEM_ERROR) and a message starting with
it: `scope_error`, applied by the dispatcher to every error of these methods (refused params
included)."""

from __future__ import annotations

from typing import Unpack

from chorus_tools.tools.errors import BINARY_ADVICE, SINGLE_LINE_WORDS, ToolError
from chorus_tools.tools.method import DIAGNOSTICS
from chorus_tools.tools.method import (ENCODINGS, ENTRY_TYPE, NON_NEGATIVE, NULLABLE_STR, PATH,
                                      POSITIVE, READ_ENCODINGS, TIME, Method, Options, nullable,
                                      obj)

_ADAPTERS = "chorus_tools.tools.dialects.scope:"
_STYLE = "chorus_tools.tools.dialects.scope_table:scope_error"
_PATH = {**PATH, "description": "Relative path from scope root"}
_INPUT_ERRORS = ("invalid_params", "invalid_pattern")


def scope_error(err: ToolError) -> ToolError:
    """The error (docs/protocol.md, Errors) with the seed's code beside `data.error`, its
    message led by it."""
    code = ("SCOPE_VIOLATION" if err.code == "path_outside_workspace" else
            "INVALID_INPUT" if err.code in _INPUT_ERRORS else "FILESYSTEM_ERROR")
    if err.details.get("code") == code:
        return err
    styled = err.saying(f"{code}: {err.message}")
    styled.details["code"] = code
    return styled


# the core's names in these tools' words (tools/errors.in_words)
_TOOLS = {BINARY_ADVICE: "read_file reads text files only; get_file_info gives its metadata.",
          "file.list": "list_directory", "file.read": "read_file", "file.info": "get_file_info"}


def _method(name: str, summary: str, params: dict, result: dict, description: str,
            **kw: Unpack[Options]) -> Method:
    return Method(name, _ADAPTERS + name, summary, params, result, toolset="scope",
                  title=summary, description=description, error_style=_STYLE, **kw)


METHODS = (
    _method("read_file", "Read a text file",
            obj(["path"], path=_PATH,
                startLine={**POSITIVE, "description": "First line to read (1-based)"},
                endLine={**POSITIVE, "description": "Last line to read (1-based)"}),
            obj(["content", "lines", "truncated", "encoding"], content={"type": "string"},
                lines=NON_NEGATIVE, truncated={"type": "boolean"},
                encoding={"enum": READ_ENCODINGS}),
            "Read a text file, optionally lines startLine..endLine. content is their exact "
            "text; lines is the file's line count; truncated is true when the size limit cut "
            "the range short (continue from the next line). Binary files are "
            "FILESYSTEM_ERROR.", stoppable=True, idempotent=True, words=_TOOLS),
    _method("write_file", "Write a file atomically",
            obj(["path", "content"], path=_PATH, content={"type": "string"},
                encoding={"enum": ENCODINGS},
                createDirs={"type": "boolean",
                            "description": "Create parent directories"}),
            obj(["path", "bytes"], path={"type": "string"}, bytes=NON_NEGATIVE,
                diagnostics=DIAGNOSTICS),
            "Write a file atomically (temp file + rename), replacing it if it exists. "
            "UTF-16 encodings write a BOM. Parent directories must exist unless createDirs.",
            mutating=True, idempotent=True, destructive=True,
            words={"file.write with create_dirs: true": "write_file with createDirs: true",
                   **_TOOLS}),
    _method("list_directory", "List a directory",
            obj(["path"], path=_PATH, recursive={"type": "boolean"},
                depth={**POSITIVE, "description": "Levels below path (1: its entries)"},
                glob={"type": "string", "description": "Glob filter for entries"},
                includeHidden={"type": "boolean"}),
            obj(["entries", "total", "truncated"],
                entries={"type": "array", "items": obj(
                    ["name", "path", "type", "size"], name={"type": "string"},
                    path={"type": "string"}, type=ENTRY_TYPE, size=NON_NEGATIVE)},
                total=NON_NEGATIVE, truncated={"type": "boolean"}),
            "List directory entries, optionally recursively (directories included) to a "
            "depth, filtered by a glob. Capped at 5,000 entries; total counts them all. "
            "Hidden entries only with includeHidden; git-ignored ones are left out.",
            stoppable=True, idempotent=True,
            words={"'pattern'": "'glob'", **_TOOLS}),
    _method("search_files", "Search file contents",
            obj(["pattern"], pattern={"type": "string", "description": "Search pattern "
                                      "(literal unless regex)"},
                path={**_PATH, "description": "Directory to search (default: scope root)"},
                regex={"type": "boolean"},
                caseSensitive={"type": "boolean"},
                contextLines={**NON_NEGATIVE},
                glob={"type": "string", "description": "Glob filter for files"}),
            obj(["matches", "totalMatches", "filesSearched", "truncated"],
                matches={"type": "array", "items": obj(
                    ["file", "line", "content", "context"], file={"type": "string"},
                    line=POSITIVE, content={"type": "string"},
                    context=obj(["before", "after"],
                                before={"type": "array", "items": {"type": "string"}},
                                after={"type": "array", "items": {"type": "string"}}))},
                totalMatches=NON_NEGATIVE, filesSearched=NON_NEGATIVE,
                truncated={"type": "boolean"}),
            "Search files for a pattern (ripgrep-style): a literal string unless regex is "
            "true. Each match has its file, line, content and context lines before and "
            "after. At most 5,000 matches (truncated says when there were more).",
            stoppable=True, idempotent=True,
            words={"context_lines": "contextLines", "literal: true": "regex: false",
                   **SINGLE_LINE_WORDS}),
    _method("get_file_info", "Return file metadata",
            obj(["path"], path=_PATH),
            obj(["name", "path", "type", "size", "modified", "mime", "lines", "isSymlink",
                 "symlinkTarget"], name={"type": "string"}, path={"type": "string"},
                type=ENTRY_TYPE, size=nullable({"type": "integer"}),
                modified=nullable(TIME),
                mime=NULLABLE_STR, lines=nullable({"type": "integer"}),
                isSymlink={"type": "boolean"}, symlinkTarget=NULLABLE_STR),
            "Return a path's metadata: type, size, modification time, mime type, line "
            "count (text files), and whether it is a symlink and to what.",
            stoppable=True, idempotent=True),
)
