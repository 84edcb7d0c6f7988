"""The `gemini` tool set's methods (docs/protocol.md, Tool sets): Gemini CLI's file tools
with their current names and parameters (gemini-cli v0.56.0-nightly.20260822, the Gemini 3
declarations); adapters in gemini.py and gemini_search.py. `read_file`, `write_file` and
`list_directory` share their names with the `scope` set: the two cannot be combined."""

from __future__ import annotations

from typing import Any

from chorus_tools.tools.errors import SINGLE_LINE_WORDS
from chorus_tools.tools.method import (DIAGNOSTICS, NON_NEGATIVE, NULLABLE_STR, POSITIVE, Method,
                                      obj)

_ADAPTERS = "chorus_tools.tools.dialects.gemini:"
_SEARCH = "chorus_tools.tools.dialects.gemini_search:"
_TEXT = {"type": "string"}
_BOOL = {"type": "boolean"}
_STRINGS = {"type": "array", "items": _TEXT}
_FILE = {**_TEXT, "description": "The file (workspace-relative, or absolute inside it)"}
_DIR = {**_TEXT, "description": "Directory (default: the workspace root)"}
_FILTERING = obj([], respect_git_ignore=_BOOL, respect_gemini_ignore=_BOOL)
_VERSION = NULLABLE_STR


# the core's names in these tools' words (tools/errors.in_words)
_TOOLS = {"file.info or file.read": "read_file", "file.patch": "replace",
          "file.write": "write_file", "file.read": "read_file", "file.list": "list_directory"}
_FILE_WORDS = {"'path'": "'file_path'", **_TOOLS}
_DIR_WORDS = {"'path'": "'dir_path'", **_TOOLS}
REPLACE_WORDS = {"patches[0].find": "old_string", "patches[0].replace_all": "allow_multiple",
                 "patches[0].count": "expected_replacements",
                 "patches[0].replace": "new_string", "patches[0]": "the edit", **_FILE_WORDS}


def _result(*required: str, **props: Any) -> dict[str, Any]:
    return obj(["output", *required], output=_TEXT, **props)


def _method(name: str, target: str, title: str, params: dict[str, Any],
            result: dict[str, Any], description: str, **kw: Any) -> Method:
    return Method(name, target, title, params, result, toolset="gemini", title=title,
                  description=description, shown_as="output", **kw)


METHODS = (
    _method("read_file", _ADAPTERS + "read_file_tool", "Read file",
            obj(["file_path"], file_path=_FILE,
                start_line={**POSITIVE, "description": "First line, 1-based"},
                end_line={**POSITIVE, "description": "Last line, inclusive"}),
            _result("path", path=_TEXT, start_line=POSITIVE, end_line=NON_NEGATIVE,
                    total_lines=NON_NEGATIVE, image=_TEXT, mime_type=_TEXT,
                    version=_VERSION),
            "Reads a file: its text (2000 lines unless start_line/end_line say which), or "
            "an image. Read only the lines you need.",
            stoppable=True, idempotent=True, path_params=("file_path",), read_state="shown",
            words=_FILE_WORDS),
    _method("write_file", _ADAPTERS + "write_file_tool", "Write file",
            obj(["file_path", "content"], file_path=_FILE,
                content={**_TEXT, "description": "The complete content"}),
            _result("path", path=_TEXT, created=_BOOL, version=_VERSION,
                    diagnostics=DIAGNOSTICS),
            "Writes the complete content to a file, creating missing parent directories; "
            "overwrites an existing file. Use replace for targeted edits.",
            mutating=True, idempotent=True, destructive=True, path_params=("file_path",),
            read_state="shown", words=_FILE_WORDS),
    _method("replace", _ADAPTERS + "replace_tool", "Replace text",
            obj(["file_path", "old_string", "new_string"], file_path=_FILE,
                instruction={**_TEXT, "description": "What the change is for"},
                old_string={**_TEXT, "description": "Exact literal text to replace, with "
                            "context; empty creates a new file"},
                new_string={**_TEXT, "description": "Exact literal replacement"},
                allow_multiple={**_BOOL, "description": "Replace every occurrence"},
                expected_replacements={**POSITIVE, "description": "Exactly this many "
                                       "occurrences must be found and replaced (default 1)"}),
            _result("path", path=_TEXT, replacements=NON_NEGATIVE, diff=_TEXT,
                    version=_VERSION, diagnostics=DIAGNOSTICS),
            "Replaces text in a file: exactly one occurrence of old_string unless "
            "allow_multiple (every one) or expected_replacements (exactly that many). "
            "Include enough surrounding lines to be unique. A failed replace changes "
            "nothing and names the closest text or the lines it occurs on.",
            mutating=True, destructive=True, path_params=("file_path",), read_state="shown",
            words=REPLACE_WORDS),
    _method("glob", _ADAPTERS + "glob_tool", "Find files",
            obj(["pattern"], pattern={**_TEXT, "description": "e.g. **/*.py, docs/*.md"},
                dir_path=_DIR, case_sensitive=_BOOL, respect_git_ignore=_BOOL,
                respect_gemini_ignore=_BOOL),
            _result("files", "truncated", files=_STRINGS, truncated=_BOOL),
            "Finds files matching a glob, newest first. Case-insensitive unless "
            "case_sensitive.",
            stoppable=True, idempotent=True, path_params=("dir_path",),
            words=_DIR_WORDS),
    _method("grep_search", _SEARCH + "grep_search_tool", "Search file contents",
            obj(["pattern"], pattern={**_TEXT, "description": "A regex (Rust syntax)"},
                dir_path=_DIR,
                include_pattern={**_TEXT, "description": "Glob of files to search"},
                exclude_pattern={**_TEXT, "description": "Regex of lines to leave out"},
                names_only=_BOOL, case_sensitive=_BOOL, fixed_strings=_BOOL,
                context=NON_NEGATIVE, after=NON_NEGATIVE, before=NON_NEGATIVE,
                no_ignore=_BOOL, max_matches_per_file=POSITIVE, total_max_matches=POSITIVE),
            _result("files", "matches", "truncated", files=_STRINGS, matches=NON_NEGATIVE,
                    truncated=_BOOL, engine={"enum": ["ripgrep", "python"]}),
            "Searches file contents for a regex (ripgrep), case-insensitive unless "
            "case_sensitive; at most 100 matches unless total_max_matches.",
            stoppable=True, idempotent=True, path_params=("dir_path",),
            words={"'glob'": "'include_pattern'", "pass literal: true": "pass fixed_strings: true",
                   **_DIR_WORDS, **SINGLE_LINE_WORDS}),
    _method("list_directory", _ADAPTERS + "list_directory_tool", "List directory",
            obj(["dir_path"], dir_path={**_TEXT, "description": "The directory"},
                ignore={**_STRINGS, "description": "Globs of entries to leave out"},
                file_filtering_options=_FILTERING),
            _result("path", "entries", "truncated", path=_TEXT, truncated=_BOOL,
                    entries={"type": "array", "items": obj(
                        ["name", "type", "size"], name=_TEXT,
                        type={"enum": ["file", "dir"]}, size=NON_NEGATIVE)}),
            "Lists the files and subdirectories directly in a directory.",
            stoppable=True, idempotent=True, path_params=("dir_path",),
            words=_DIR_WORDS),
    _method("read_many_files", _SEARCH + "read_many_files_tool", "Read many files",
            obj(["include"], include={"type": "array", "minItems": 1,
                                      "items": {**_TEXT, "minLength": 1},
                                      "description": "Globs or paths, e.g. src/**/*.ts"},
                exclude=_STRINGS, recursive=_BOOL, useDefaultExcludes=_BOOL,
                file_filtering_options=_FILTERING),
            _result("files", "skipped", files=_STRINGS, skipped={"type": "array",
                    "items": obj(["path", "reason"], path=_TEXT, reason=_TEXT)}),
            "Reads the text files matching globs, each under a '--- path ---' line. "
            "node_modules, .git and binary files are skipped.",
            stoppable=True, idempotent=True, path_params=(), words=_TOOLS),
)
