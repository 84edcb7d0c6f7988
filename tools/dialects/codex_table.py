"""The `codex` tool set's methods (docs/protocol.md, Tool set `codex`): the names,
parameters and descriptions of the tools OpenAI's Codex harness declares (openai/codex
codex-rs: apply-patch and the core's tool specs), adapters in codex.py. apply_patch's paths
live in its patch text: `paths_in` names them for ordering, records and --deny."""

from __future__ import annotations

from typing import Any

from chorus_tools.tools.errors import BINARY_ADVICE, SINGLE_LINE_WORDS
from chorus_tools.tools.method import DIAGNOSTICS, NON_NEGATIVE, VERSION, Method, nullable, obj

_ADAPTERS = "chorus_tools.tools.dialects.codex:"
_TEXT = {"type": "string"}
_INT = {"type": "integer"}
_OUTPUT = {"type": "string", "description": "The text Codex's harness shows the model"}
_STRINGS = {"type": "array", "items": _TEXT}
# the core's names in these tools' words (tools/errors.in_words): Codex's read_file reads
# text only, list_dir lists
_TOOLS = {BINARY_ADVICE: "read_file reads text files only.",
          "file.info or file.read": "read_file", "file.list": "list_dir",
          "file.read": "read_file", "file.info": "list_dir"}

APPLY_PATCH_DESCRIPTION = (
    "Edit files with a patch in this format (paths relative to the workspace):\n"
    "*** Begin Patch\n"
    "*** Add File: path        (then every line of the new file, prefixed +)\n"
    "*** Delete File: path\n"
    "*** Update File: path     (then optional *** Move to: new/path)\n"
    "@@ def enclosing():      (optional anchor line above the change)\n"
    " context line\n"
    "-removed line\n"
    "+added line\n"
    "*** End of File           (optional: the hunk ends the file)\n"
    "*** End Patch\n"
    "Give about 3 unchanged lines above and below each change; a hunk that fits more "
    "than one place is refused (find_not_unique: add context or an @@ anchor). A hunk "
    "found nowhere is refused with the file's closest lines. All files "
    "change or none do.")


def _method(name: str, title: str, params: dict[str, Any], result: dict[str, Any], description: str,
            **kw: Any) -> Method:
    return Method(name, f"{_ADAPTERS}{name}", title, params, result, toolset="codex",
                  title=title, description=description, shown_as="output", **kw)


METHODS = (
    _method("apply_patch", "Apply a V4A patch",
            obj(["input"], input={**_TEXT, "description": "The entire contents of the "
                                  "apply_patch command"}),
            obj(["output", "files"], output=_OUTPUT, files={"type": "array", "items": obj(
                ["path", "action", "version"], path=_TEXT,
                action={"enum": ["add", "update", "delete"]},
                version=nullable(VERSION), diagnostics=DIAGNOSTICS, **{"from": _TEXT})}),
            APPLY_PATCH_DESCRIPTION, mutating=True, destructive=True, path_params=(),
            read_state="shown", words=_TOOLS, paths_in="chorus_tools.tools.dialects.v4a:paths"),
    _method("read_file", "Read a file",
            obj(["file_path"],
                file_path={**_TEXT, "description": "Path to the file"},
                offset={**_INT, "description": "The line number to start reading from. "
                        "Must be 1 or greater."},
                limit={**_INT, "description": "The maximum number of lines to return."},
                mode={"enum": ["slice", "indentation"], "description": "\"slice\" for "
                      "simple ranges (default) or \"indentation\" to expand around an "
                      "anchor line."},
                indentation=obj(
                    [], anchor_line={**_INT, "description": "Anchor line (default: "
                                     "offset)."},
                    max_levels={**_INT, "description": "How many parent indentation "
                                "levels to include (0: up to the top-level block)."},
                    include_siblings={"type": "boolean"},
                    include_header={"type": "boolean"},
                    max_lines={**_INT, "description": "Hard cap on the lines returned."})),
            obj(["output", "start_line", "end_line", "total_lines", "truncated", "version"],
                output=_OUTPUT, start_line=_INT, end_line=_INT, total_lines=NON_NEGATIVE,
                truncated={"type": "boolean"}, version=VERSION),
            "Reads a local file with 1-indexed line numbers (`L<n>: <line>`), supporting "
            "slice and indentation-aware block modes.",
            stoppable=True, idempotent=True, path_params=("file_path",), read_state="shown",
            words={"'path'": "'file_path'", **_TOOLS}),
    _method("list_dir", "List a directory",
            obj(["dir_path"],
                dir_path={**_TEXT, "description": "Path to the directory to list."},
                offset={**_INT, "description": "The entry number to start listing from. "
                        "Must be 1 or greater."},
                limit={**_INT, "description": "The maximum number of entries to return."},
                depth={**_INT, "description": "The maximum directory depth to traverse. "
                       "Must be 1 or greater."}),
            obj(["output", "path", "entries", "total", "truncated"], output=_OUTPUT,
                path=_TEXT, entries={"type": "array", "items": obj(
                    ["path", "type"], path=_TEXT,
                    type={"enum": ["file", "dir", "symlink", "other"]})},
                total=NON_NEGATIVE, truncated={"type": "boolean"}),
            "Lists entries in a local directory with 1-indexed entry numbers and simple "
            "type labels (/ directory, @ symlink).",
            stoppable=True, idempotent=True, path_params=("dir_path",),
            words={"'path'": "'dir_path'", **_TOOLS}),
    _method("grep_files", "Find files by content",
            obj(["pattern"],
                pattern={**_TEXT, "description": "Regular expression pattern to search "
                         "for."},
                include={**_TEXT, "description": "Optional glob that limits which files are "
                         "searched (e.g. \"*.rs\" or \"*.{ts,tsx}\")."},
                path={**_TEXT, "description": "Directory or file path to search. Defaults "
                      "to the workspace root."},
                limit={**_INT, "description": "Maximum number of file paths to return "
                       "(defaults to 100)."}),
            obj(["output", "files", "truncated"], output=_OUTPUT, files=_STRINGS,
                truncated={"type": "boolean"}),
            "Finds files whose contents match the pattern and lists them by modification "
            "time.", stoppable=True, idempotent=True,
            words={"'glob'": "'include'",
                   "pass literal: true": "escape its special characters with '\\'",
                   **_TOOLS, **SINGLE_LINE_WORDS}),
)
