"""The `anthropic` tool set's methods (docs/protocol.md, Tool sets): Anthropic's text editor
tool under its two trained names, `str_replace_based_edit_tool` (text_editor_20250728) and
`str_replace_editor` (text_editor_20250124, with undo_edit); adapters in anthropic.py.

The private names that carry undo_edit's states between the adapters and the dispatcher
(from the history: rpc/dispatch/history_calls.py; with --history 0, the session's
memory: rpc/dispatch/undo.py) are here, where both can import them cheaply."""

from __future__ import annotations

from typing import Any

from chorus_tools.tools.method import (DIAGNOSTICS, NON_NEGATIVE, NULLABLE_STR, PATH, POSITIVE,
                                      Method, obj)

UNDO_KEY = "undo_state"  # an edit's result: the bytes it replaced (stripped, never sent)
UNDO_PARAM = "undo_to"  # an undo_edit's params: what to restore (never from a client)

_ADAPTERS = "chorus_tools.tools.dialects.anthropic:"
_TEXT = {"type": "string"}
_COMMON: dict[str, Any] = {
    "path": {**PATH, "description": "File or directory (workspace-relative, or absolute "
             "inside it)"},
    "file_text": {**_TEXT, "description": "create: the new file's content"},
    "view_range": {"type": "array", "items": {"type": "integer"}, "minItems": 2,
                   "maxItems": 2, "description": "view: [start, end] lines, 1-based; end "
                   "-1 means to the end"},
    "old_str": {**_TEXT, "description": "str_replace: exact text, occurring once"},
    "new_str": {**_TEXT, "description": "str_replace: its replacement (default empty); "
                "insert: the text"},
    "insert_line": {**NON_NEGATIVE, "description": "insert: after this line (0: at the "
                    "top)"},
}
_RESULT = obj(["output", "path"], output=_TEXT, path=_TEXT,
              version=NULLABLE_STR, diagnostics=DIAGNOSTICS)
# the core's names in this tool's words (tools/errors.in_words)
WORDS = {"use file.info for its metadata": "it cannot be shown as text",
         "patches[0].find": "old_str", "patches[0].replace": "new_str",
         "patches[0]": "the edit", "file.info or file.read": "view",
         "file.patch": "str_replace", "file.write": "create", "file.read": "view",
         "file.list": "view"}


def _method(name: str, target: str, commands: list[str], title: str, description: str,
            **extra: Any) -> Method:
    return Method(
        name, _ADAPTERS + target, title,
        obj(["command", "path"], command={"enum": commands}, **_COMMON, **extra),
        _RESULT, mutating=True, destructive=True, toolset="anthropic", title=title,
        description=description, shown_as="output", read_commands=frozenset({"view"}),
        read_state="shown", words=WORDS)


METHODS = (
    _method(
        "str_replace_based_edit_tool", "text_editor_tool",
        ["view", "create", "str_replace", "insert"], "Text editor",
        "View, create and edit files. view: a file numbered like `cat -n` (view_range to "
        "window it) or a directory two levels deep. create: a new file (never overwrites). "
        "str_replace: replace old_str, which must occur exactly once, with new_str. "
        "insert: add insert_text after insert_line. A failed str_replace names the "
        "closest text or every line it occurs on; nothing is changed.",
        insert_text={**_TEXT, "description": "insert: the text"},
        max_characters={**POSITIVE, "description": "view: cut the shown text at this "
                        "many characters"}),
    _method(
        "str_replace_editor", "str_replace_editor_tool",
        ["view", "create", "str_replace", "insert", "undo_edit"], "Text editor (undo)",
        "View, create and edit files. view: a file numbered like `cat -n` (view_range to "
        "window it) or a directory two levels deep. create: a new file (never overwrites). "
        "str_replace: replace old_str, which must occur exactly once, with new_str. "
        "insert: add new_str after insert_line. undo_edit: revert the last edit of path "
        "made through this server."),
)
