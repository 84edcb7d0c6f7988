"""`str_replace_editor`'s undo_edit from the history (docs/protocol.md: Tool set
`anthropic`, History): what the file held before the last edit made to it through the
`anthropic` set's editors, found in the log, so an undo works after a server restart as
the history itself does.

An undo is a restore (tools/mutate/restore.py, handed its content by
rpc/dispatch/history_calls.py like file.restore), kept in the history like any change
but logged under its own method name, `str_replace_editor.undo_edit` (`UNDO_LOGGED`):
walking the path's log newest first, each undo met skips one edit beneath it, so
repeated undos step back through the edits as the reference's per-file stack does, and
an edit made after an undo is undone first. Other changes of the path (file.write, a
restore, another set's edits) are neither undone nor skipped: if one came after the
last edit, the file is no longer at the version that edit (or the last undo) left, and
the worker refuses with `conflict`, as it does for a change made outside the server.
"""

from __future__ import annotations

from typing import Any

from chorus_tools.rpc.dispatch.history import History
from chorus_tools.tools.dialects.anthropic_table import METHODS
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.method import Method

UNDO_COMMAND = "undo_edit"
EDITORS = frozenset(m.name for m in METHODS)  # whose changes undo_edit undoes
UNDO_LOGGED = "str_replace_editor.undo_edit"  # the one editor with undo_edit


def is_undo(method: Method, params: dict[str, Any]) -> bool:
    return method.name in EDITORS and params.get("command") == UNDO_COMMAND


def logged_as(method: Method, params: dict[str, Any]) -> str:
    """The method name the history logs a call's changes under."""
    return UNDO_LOGGED if is_undo(method, params) else method.name


def undo_target(history: History, path: str, shown: str) -> dict[str, Any] | None:
    """What undo_edit of `path` (normalised; `shown` as given) puts back: `content` (None:
    remove the file a create made), `mode`, and `expected_version`, the version the last
    edit or undo of the path left; None when there is no edit left to undo."""
    skip, expected, newest = 0, None, True
    for entry in history.entries_of(path):
        if entry.method not in EDITORS and entry.method != UNDO_LOGGED:
            continue
        if newest:
            expected, newest = entry.after, False
        if entry.method == UNDO_LOGGED:
            skip += 1
        elif skip:
            skip -= 1
        elif entry.sha256 is None:
            return {"content": None, "expected_version": expected}
        elif (content := history.read(entry.sha256)) is None:
            raise ToolError("invalid_params", f"The content {shown} held before its last "
                            "edit is no longer kept (dropped by the history's byte budget, "
                            "--history-bytes, or not kept on a full disk), so it cannot be "
                            "undone.", param="command", path=shown, evicted=True)
        else:
            return {"content": content, "mode": entry.mode, "expected_version": expected}
    return None
