"""The `anthropic` set's `undo_edit` memory (docs/protocol.md, Tool set `anthropic`), per
session, used only with the history off (`--history 0`; with it on, undo_edit comes from
the history: rpc/dispatch/history_undo.py, and the dispatcher makes no memory): what each
file held before the edits made through the set's editors, so `undo_edit` can put it back.

Two calls the invoker makes around every `anthropic` call:
- `prepare(method, params)`: an `undo_edit` call gets `undo_to`, the newest remembered
  state of its file as the history would hand it (`content`, `expected_version`; None:
  nothing to undo);
- `note(method, params, result)`: an edit's result carries, under `UNDO_KEY`, the bytes it
  replaced (None: it created the file) and the version it left; they are remembered and
  taken out of the result the client sees. A successful undo forgets its state, and the
  state beneath it is now expected at the version the undo left.

The memory lives in the dispatcher (outside the workspace, beyond the agent's reach), only
as long as the server, and is bounded: past `MAX_BYTES` of remembered content or
`MAX_ENTRIES` states, the oldest are dropped first. Paths are keyed as the invoker
normalised them, once, for the path order and the read-before-write memory alike.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from chorus_tools.tools.dialects.anthropic_table import UNDO_KEY, UNDO_PARAM
from chorus_tools.tools.method import Method

MAX_BYTES = 64 * 1024 * 1024
MAX_ENTRIES = 4096
TOOLSET = "anthropic"


@dataclass(eq=False)
class _State:
    key: str
    before: bytes | None  # None: the edit created the file
    after: str  # the version the edit left


class UndoEdits:
    def __init__(self, max_bytes: int = MAX_BYTES, max_entries: int = MAX_ENTRIES) -> None:
        self._max_bytes, self._max_entries = max_bytes, max_entries
        self._stacks: dict[str, list[_State]] = {}
        self._order: deque[_State] = deque()  # oldest first, for eviction
        self._bytes = 0

    def prepare(self, method: Method, params: dict[str, Any],
                key: str | None) -> dict[str, Any]:
        """The params an undo_edit runs with: plus the state to restore, or None. `key`
        is the file's path as the invoker normalised it (None: no usable path)."""
        if method.toolset != TOOLSET or params.get("command") != "undo_edit":
            return params
        stack = self._stacks.get(key or "")
        top = stack[-1] if stack else None
        return {**params, UNDO_PARAM: None if top is None else
                {"content": top.before, "expected_version": top.after}}

    def note(self, method: Method, params: dict[str, Any], result: Any,
             key: str | None) -> Any:
        """Remember what an edit replaced, or forget what an undo restored; the result
        as the client sees it."""
        if method.toolset != TOOLSET or not isinstance(result, dict):
            return result
        if params.get("command") == "undo_edit":
            if key is not None:
                self._restored(key, result.get("version"))
            return result
        state = result.get(UNDO_KEY)
        if state is None:
            return result
        if key is not None:
            self._push(_State(key, state["before"], state["after"]))
        return {k: v for k, v in result.items() if k != UNDO_KEY}

    def _restored(self, key: str, version: Any) -> None:
        stack = self._stacks.get(key)
        if not stack:
            return
        self._forget(stack.pop())
        if stack and isinstance(version, str):
            stack[-1].after = version
        if not stack:
            del self._stacks[key]

    def _push(self, state: _State) -> None:
        self._stacks.setdefault(state.key, []).append(state)
        self._order.append(state)
        self._bytes += _size(state)
        while self._order and (self._bytes > self._max_bytes
                               or len(self._order) > self._max_entries):
            oldest = self._order.popleft()
            self._bytes -= _size(oldest)
            stack = self._stacks[oldest.key]
            stack.remove(oldest)  # the bottom of its stack: the oldest of its file
            if not stack:
                del self._stacks[oldest.key]

    def _forget(self, state: _State) -> None:
        self._order.remove(state)
        self._bytes -= _size(state)


def _size(state: _State) -> int:
    return len(state.before or b"")
