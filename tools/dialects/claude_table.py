"""The `claude` tool set's methods (`--tools claude` in docs/protocol.md, Starting the
server): names, schemas and descriptions as the seed (001) and the tools agents were trained
on spell them; adapters in claude.py."""

from __future__ import annotations

from chorus_tools.tools.method import (ENTRY_TYPE, INVALID_BYTES, NON_NEGATIVE, PATCH_RESULT, PATH,
                                      POSITIVE, READ_ENCODINGS, SEARCH_RESULT, VERSION,
                                      WRITE_RESULT, Method, nullable, obj)

_ADAPTERS = "chorus_tools.tools.dialects.claude:"
FILE_PATH = {**PATH, "description": "The file's path: workspace-relative, or absolute "
             "inside the workspace"}
_EDIT = {"old_string": {"type": "string", "description": "The exact text to replace"},
         "new_string": {"type": "string", "description": "The text to put in its place"},
         "replace_all": {"type": "boolean",
                         "description": "Replace every occurrence (default: exactly one)"}}
_IMAGE = {"type": "object", "required": ["cell", "output", "mime_type", "image"],
          "properties": {"cell": NON_NEGATIVE, "output": NON_NEGATIVE,
                         "mime_type": {"type": "string"}, "image": {"type": "string"}}}
_READ_RESULT = {"type": "object", "oneOf": [
    obj(["content", "total_lines", "truncated", "start_line", "end_line", "encoding",
         "version"],
        content={"type": "string"}, total_lines=NON_NEGATIVE, truncated={"type": "boolean"},
        start_line=POSITIVE, end_line=NON_NEGATIVE, encoding={"enum": READ_ENCODINGS},
        invalid_bytes=INVALID_BYTES, version=VERSION,
        images={"type": "array", "items": _IMAGE}),
    obj(["image", "mime_type", "size", "version"], image={"type": "string"},
        mime_type={"type": "string"}, size=NON_NEGATIVE, version=VERSION),
]}
_LS_ENTRY = obj(["name", "path", "type", "size", "is_binary"], name={"type": "string"},
                path={"type": "string"}, type=ENTRY_TYPE, size=NON_NEGATIVE,
                is_binary=nullable({"type": "boolean"}))
_GREP_RESULT = {**SEARCH_RESULT, "properties": {
    **SEARCH_RESULT["properties"],
    "matches": {"type": "array", "items": {
        "type": "object", "required": ["path", "content"], "additionalProperties": False,
        "properties": {"path": {"type": "string"}, "line": POSITIVE,
                       "content": {"type": "string"}}}}}}
_CONTEXT = {**NON_NEGATIVE}
# the core's names in these tools' words (tools/errors.in_words)
_TOOLS = {"file.info or file.read": "Read", "file.patch": "Edit", "file.write": "Write",
          "file.list": "LS", "file.read": "Read", "file.info": "LS"}
_FILE_WORDS = {"'path'": "'file_path'", **_TOOLS}
_EDIT_WORDS = {"patches[0].find": "old_string", "patches[0].replace_all": "replace_all",
               "patches[0].replace": "new_string", "patches[0]": "the edit", **_FILE_WORDS}
_MULTI_WORDS = {"patches[{i}].find": "edits[{i}].old_string",
                "patches[{i}].replace_all": "edits[{i}].replace_all",
                "patches[{i}].replace": "edits[{i}].new_string", "patches[{i}]": "edits[{i}]",
                "patches": "edits", **_FILE_WORDS, "file.patch": "MultiEdit"}
_NO_LITERAL = {"pass literal: true": "escape its special characters with '\\'"}

METHODS = (
    Method(
        "Read", _ADAPTERS + "read_tool", "Read a file: numbered lines, an image, a notebook.",
        obj(["file_path"], file_path=FILE_PATH,
            offset={**NON_NEGATIVE, "description": "The line to start at (1-based)"},
            limit={**POSITIVE, "description": "How many lines to read"}),
        _READ_RESULT, stoppable=True, toolset="claude", title="Read file", shown_as="read",
        description="Reads a file from the workspace. Text comes back numbered like "
        "`cat -n`; use offset and limit for long files (lines over 2000 characters are "
        "cut). PNG, JPEG, GIF and WebP images come back as images; a Jupyter notebook "
        "(.ipynb) is shown cell by cell (`<cell 0 code>`) with its outputs. PDFs and other "
        "binary files are refused. Read a file before you Write over it or Edit it.",
        idempotent=True, path_params=("file_path",), read_state="shown", words=_FILE_WORDS),
    Method(
        "Write", _ADAPTERS + "write_tool", "Create or overwrite a file.",
        obj(["file_path", "content"], file_path=FILE_PATH,
            content={"type": "string", "description": "The whole new content"}),
        WRITE_RESULT, mutating=True, toolset="claude", title="Write file",
        description="Writes a file atomically, creating parent directories. Overwriting an "
        "existing file requires that this session Read it first (error not_read), and "
        "fails with conflict if it changed since. Prefer Edit for changes to existing files.",
        idempotent=True, destructive=True, path_params=("file_path",), read_state="guarded",
        words=_FILE_WORDS),
    Method(
        "Edit", _ADAPTERS + "edit_tool", "Replace an exact string in a file.",
        obj(["file_path", "old_string", "new_string"], file_path=FILE_PATH, **_EDIT),
        PATCH_RESULT, mutating=True, toolset="claude", title="Edit file",
        description="Replaces old_string with new_string in a file the session has Read. "
        "old_string must occur exactly once unless replace_all is true; line endings and "
        "indentation are matched leniently (and the replacement re-indented), nothing "
        "looser. When old_string is not found, the error shows the closest region of "
        "the file.",
        destructive=True, path_params=("file_path",), read_state="guarded", words=_EDIT_WORDS),
    Method(
        "MultiEdit", _ADAPTERS + "multi_edit_tool", "Several edits to one file, atomically.",
        obj(["file_path", "edits"], file_path=FILE_PATH,
            edits={"type": "array", "minItems": 1,
                   "items": obj(["old_string", "new_string"], **_EDIT),
                   "description": "Applied in order, each to the result of the one before"}),
        PATCH_RESULT, mutating=True, toolset="claude", title="Edit file (several edits)",
        description="Applies several Edit-style replacements to one file in order, all or "
        "nothing. A first edit with an empty old_string creates a new file. The file must "
        "have been Read by this session if it exists.",
        destructive=True, path_params=("file_path",), read_state="guarded", words=_MULTI_WORDS),
    Method(
        "Delete", _ADAPTERS + "delete_tool", "Delete a file.",
        obj(["file_path"], file_path=FILE_PATH),
        obj(["success"], success={"type": "boolean"}), mutating=True, toolset="claude",
        title="Delete file", description="Deletes a file or a symlink (never a directory, "
        "never a symlink's target). Needs no prior Read.",
        destructive=True, path_params=("file_path",), read_state="removed",
        words={**_FILE_WORDS, "file.delete": "Delete"}),
    Method(
        "LS", _ADAPTERS + "ls_tool", "List a directory.",
        obj(["path"], path={**PATH, "description": "The directory (absolute inside the "
                            "workspace, or workspace-relative)"},
            ignore={"type": "array", "items": {"type": "string"},
                    "description": "Globs of entries to leave out"}),
        obj(["path", "entries", "truncated"], path={"type": "string"},
            entries={"type": "array", "items": _LS_ENTRY}, truncated={"type": "boolean"}),
        stoppable=True, toolset="claude", title="List directory",
        description="Lists one directory's entries with type (file, dir, symlink, other), "
        "size and is_binary. Hidden and git-ignored entries are left out. Prefer Glob and "
        "Grep when you know what you are looking for.",
        idempotent=True, words={"exclude": "ignore", **_TOOLS}),
    Method(
        "Glob", _ADAPTERS + "glob_tool", "Find files by glob, newest first.",
        obj(["pattern"], pattern={"type": "string", "description": "e.g. **/*.ts"},
            path={**PATH, "description": "The directory to search in (default: the "
                  "workspace root)"}),
        obj(["files", "truncated"], files={"type": "array", "items": {"type": "string"}},
            truncated={"type": "boolean"}),
        stoppable=True, toolset="claude", title="Find files", shown_as="list",
        description="Fast file pattern matching (`**/*.py`, `src/**/*.{ts,tsx}`). Returns "
        "the matching file paths, most recently modified first, at most 100 (truncated "
        "says when there were more). Ignored and hidden files are left out.",
        idempotent=True, words={**_TOOLS, "narrow path or pattern, or raise max_results.":
                                "narrow path or pattern."}),
    Method(
        "Grep", _ADAPTERS + "grep_tool", "Search file contents (ripgrep).",
        obj(["pattern"], pattern={"type": "string", "description": "A regex in ripgrep's "
                                  "syntax"},
            path={**PATH, "description": "File or directory to search (default: the root)"},
            glob={"type": "string", "description": "Filter files, e.g. *.js or *.{ts,tsx}"},
            type={"type": "string", "description": "ripgrep file type: py, js, rust, ..."},
            output_mode={"enum": ["content", "files_with_matches", "count"]},
            **{"-A": {**_CONTEXT, "description": "Lines after each match (content mode)"},
               "-B": {**_CONTEXT, "description": "Lines before each match (content mode)"},
               "-C": {**_CONTEXT, "description": "Lines around each match (content mode)"},
               "-i": {"type": "boolean", "description": "Ignore case"},
               "-n": {"type": "boolean",
                      "description": "Line numbers in content mode (default true)"}},
            multiline={"type": "boolean",
                       "description": "Let . and classes match across lines"},
            head_limit={**POSITIVE, "description": "At most this many entries (default "
                        "100)"}),
        _GREP_RESULT, stoppable=True, toolset="claude", title="Search file contents",
        shown_as="search",
        description="Searches file contents with ripgrep. output_mode files_with_matches "
        "(default) lists files, content shows matching lines (with -A/-B/-C context, -n "
        "line numbers), count counts per file. Filter with glob or type. Ignored, hidden and "
        "binary files are skipped. Results are capped at head_limit (default 100).",
        idempotent=True, words={**_TOOLS, "max_results": "head_limit", **_NO_LITERAL}),
)
