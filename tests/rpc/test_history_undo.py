"""undo_edit's walk through the history's log (rpc/dispatch/history_undo.py), on a real
store: the newest editor change is the target, each logged undo steps over one edit,
other methods' changes are neither targets nor skipped, and an evicted content is
refused saying so."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chorus_tools.rpc.dispatch.history import History
from chorus_tools.rpc.dispatch.history_undo import UNDO_LOGGED, undo_target
from chorus_tools.tools.errors import ToolError

EDITOR = "str_replace_editor"


def _keep(history: History, method: str, before: bytes | None, after: str | None) -> None:
    item: dict[str, Any] = {"path": "a.py", "bytes": len(before or b""), "mode": 0o640,
                            "data": before, "spool": None, "after": after,
                            "sha256": None if before is None else
                            hashlib.sha256(before).hexdigest()}
    asyncio.run(history.keep(method, [item]))


@pytest.fixture
def history(tmp_path: Path) -> Iterator[History]:
    store = History(str(tmp_path / "history"), 1 << 20)
    yield store
    store.close()


def test_nothing_edited_is_nothing_to_undo(history: History) -> None:
    _keep(history, "file.write", b"w", "v1")
    assert undo_target(history, "a.py", "a.py") is None


def test_undoing_a_create_removes_the_file(history: History) -> None:
    _keep(history, "str_replace_based_edit_tool", None, "v1")
    assert undo_target(history, "a.py", "a.py") == {"content": None,
                                                    "expected_version": "v1"}


def test_each_logged_undo_steps_over_one_edit(history: History) -> None:
    _keep(history, EDITOR, b"0", "v1")
    _keep(history, EDITOR, b"1", "v2")
    _keep(history, UNDO_LOGGED, b"2", "v3")  # 1 is back: the edit to v2 is undone
    assert undo_target(history, "a.py", "a.py") == {"content": b"0", "mode": 0o640,
                                                    "expected_version": "v3"}
    _keep(history, UNDO_LOGGED, b"1", "v4")
    assert undo_target(history, "a.py", "a.py") is None


def test_another_methods_change_is_not_undone_and_the_version_is_the_edits(
        history: History) -> None:
    """The worker then finds the file past `expected_version` and refuses: conflict."""
    _keep(history, EDITOR, b"0", "v1")
    _keep(history, "file.write", b"1", "v2")
    assert undo_target(history, "a.py", "a.py") == {"content": b"0", "mode": 0o640,
                                                    "expected_version": "v1"}


def test_evicted_content_is_refused_saying_so(tmp_path: Path) -> None:
    history = History(str(tmp_path / "history"), 4)
    _keep(history, EDITOR, b"longer than the budget", "v1")
    with pytest.raises(ToolError) as err:
        undo_target(history, "a.py", "a.py")
    history.close()
    assert err.value.code == "invalid_params" and err.value.details["evicted"] is True
