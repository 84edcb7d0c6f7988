"""The anthropic set's undo_edit memory (rpc/dispatch/undo.py) on its own: what an edit's
result hands over is remembered and stripped, an undo gets the newest state and, once it
succeeds, the state beneath expects the version the undo left; the memory is bounded,
oldest first; other sets and views pass through untouched."""

from __future__ import annotations

from typing import Any

from chorus_tools.rpc.dispatch.undo import UndoEdits
from chorus_tools.tools.dialects.anthropic_table import METHODS, UNDO_KEY, UNDO_PARAM
from chorus_tools.tools.registry import ALL_METHODS

EDITOR = next(m for m in METHODS if m.name == "str_replace_editor")
CLAUDE_WRITE = next(m for m in ALL_METHODS if m.toolset == "claude" and m.name == "Write")


def _edit(memory: UndoEdits, path: str, before: bytes | None, after: str,
          *, normalised: bool = True) -> dict[str, Any]:
    """An edit's result noted under the path as the invoker normalised it (none when it
    could not be: the tool refused that path)."""
    return memory.note(EDITOR, {"command": "str_replace", "path": path},
                       {"output": "edited", "path": path, "version": after,
                        UNDO_KEY: {"before": before, "after": after}},
                       path if normalised else None)


def _undo_to(memory: UndoEdits, path: str) -> Any:
    return memory.prepare(EDITOR, {"command": "undo_edit", "path": path}, path)[UNDO_PARAM]


def _undone(memory: UndoEdits, path: str, version: str) -> None:
    memory.note(EDITOR, {"command": "undo_edit", "path": path},
                {"output": "undone", "path": path, "version": version}, path)


def test_an_edit_is_remembered_and_stripped_from_the_result() -> None:
    memory = UndoEdits()
    shown = _edit(memory, "a.py", b"old", "v1")
    assert UNDO_KEY not in shown and shown["output"] == "edited"
    assert _undo_to(memory, "a.py") == {"content": b"old", "expected_version": "v1"}


def test_nothing_to_undo_is_none() -> None:
    assert _undo_to(UndoEdits(), "a.py") is None


def test_undos_step_back_and_chain_versions() -> None:
    memory = UndoEdits()
    _edit(memory, "a.py", b"v0 text", "v1")
    _edit(memory, "a.py", b"v1 text", "v2")
    assert _undo_to(memory, "a.py") == {"content": b"v1 text", "expected_version": "v2"}
    _undone(memory, "a.py", "v1-again")
    assert _undo_to(memory, "a.py") == {"content": b"v0 text", "expected_version": "v1-again"}
    _undone(memory, "a.py", "v0-again")
    assert _undo_to(memory, "a.py") is None


def test_a_failed_undo_keeps_the_state() -> None:
    """The dispatcher notes only successes: a refused undo leaves the memory as it was."""
    memory = UndoEdits()
    _edit(memory, "a.py", b"old", "v1")
    _undo_to(memory, "a.py")
    assert _undo_to(memory, "a.py") == {"content": b"old", "expected_version": "v1"}


def test_bounded_by_bytes_oldest_first() -> None:
    memory = UndoEdits(max_bytes=10)
    _edit(memory, "a", b"123456", "va")
    _edit(memory, "b", b"1234", "vb")
    _edit(memory, "c", b"12", "vc")  # 12 bytes: a's state goes
    assert _undo_to(memory, "a") is None
    assert _undo_to(memory, "b") == {"content": b"1234", "expected_version": "vb"}
    assert _undo_to(memory, "c") == {"content": b"12", "expected_version": "vc"}


def test_bounded_by_entries_oldest_first_within_a_file() -> None:
    memory = UndoEdits(max_entries=2)
    for n in range(3):
        _edit(memory, "a", f"s{n}".encode(), f"v{n + 1}")
    _undone(memory, "a", "w")
    assert _undo_to(memory, "a") == {"content": b"s1", "expected_version": "w"}
    _undone(memory, "a", "x")
    assert _undo_to(memory, "a") is None  # s0 was dropped when the third edit came


def test_creations_cost_no_bytes_but_count_as_states() -> None:
    memory = UndoEdits(max_bytes=0, max_entries=1)
    _edit(memory, "a", None, "va")
    assert _undo_to(memory, "a") == {"content": None, "expected_version": "va"}
    _edit(memory, "b", None, "vb")
    assert _undo_to(memory, "a") is None


def test_views_other_sets_and_outside_paths_pass_through() -> None:
    memory = UndoEdits()
    view = {"command": "view", "path": "a"}
    assert memory.prepare(EDITOR, view, "a") is view
    result = {"success": True, "version": "v"}
    assert memory.note(CLAUDE_WRITE, {"file_path": "a", "content": ""}, result, "a") is result
    assert memory.prepare(CLAUDE_WRITE, {"file_path": "a"}, "a") == {"file_path": "a"}
    shown = _edit(memory, "../outside", b"x", "v", normalised=False)
    assert UNDO_KEY not in shown
    assert _undo_to(memory, "../outside") is None  # nothing was stored for it
