"""The invoker's seam to the history (docs/protocol.md, History), beside the audit records:
one call before a job runs (`prepare`) and one after it (`finish`), both inside the call's
path order (rpc/dispatch/invoker.py), so a rewind sees every change that arrived before
it and a change after it waits.

- every mutation: `finish` keeps what the worker handed back (tools/mutate/keep.py)
  before the call is answered;
- file.history: the worker checks the path (confinement, --deny, no symlink); the answer
  comes from the store;
- file.restore: `prepare` finds the version and hands its content to the worker;
  str_replace_editor's undo_edit the same, the version being the one before the path's
  last edit (rpc/dispatch/history_undo.py); `finish` logs it as an undo;
- workspace.checkpoint: the worker checks the options; `finish` logs the checkpoint;
- workspace.rewind: `prepare` first completes a journal left by a killed rewind, then
  plans this one, writes its journal and hands the content over; `finish` clears it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from chorus_tools.rpc.dispatch import rewind
from chorus_tools.rpc.dispatch.history import History, checkpoint_id, parse_id
from chorus_tools.rpc.dispatch.history_undo import is_undo, logged_as, undo_target
from chorus_tools.tools.dialects.anthropic_table import UNDO_PARAM
from chorus_tools.tools.confine.sandbox import normalize
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.method import Method
from chorus_tools.tools.task import Task

HISTORY, RESTORE = "file.history", "file.restore"
CHECKPOINT, REWIND = "workspace.checkpoint", "workspace.rewind"
REWIND_TARGET = "chorus_tools.tools.mutate.rewind:rewind"
_UNFINISHED = ("worker_crashed", "timeout")  # the worker may have stopped half way

Run = Callable[[Task], Awaitable[tuple[bool, Any, Any]]]  # one more job of the call


class HistoryCalls:
    """With `history` None (--history 0) file.history lists nothing and the other three
    methods are refused as invalid_params, saying so."""

    def __init__(self, history: History | None, roots: tuple[str, ...],
                 read_only: bool) -> None:
        self._store = history
        self.on = history is not None  # mutations hand back what they replace
        self._journaled = False  # the running rewind wrote a journal (rewinds run alone)
        self._roots = roots
        self._read_only = read_only

    async def prepare(self, method: Method, params: dict[str, Any],
                      run: Run) -> dict[str, Any]:
        """The params the worker runs with."""
        if self._read_only and method.mutating:
            return params  # the worker refuses it before anything happens
        if self._store is None:
            if method.name in (RESTORE, CHECKPOINT, REWIND):
                raise ToolError("invalid_params", "The history is off (--history 0): "
                                "there is nothing to restore or rewind.", param="method")
            return params
        if method.name == RESTORE:
            return {**params, **self._version(params)}
        if is_undo(method, params):
            return {**params, UNDO_PARAM: self._undo_to(params["path"])}
        if method.name == REWIND:
            return await self._plan(params, run)
        return params

    async def finish(self, method: Method, params: dict[str, Any], ok: bool,
                     payload: Any, audit: dict[str, Any] | None) -> Any:
        """Keep what the call replaced; the result the client gets."""
        if self._store is None:
            return ({"versions": [], "total": 0, "truncated": False, "evicted": 0}
                    if ok and method.name == HISTORY else payload)
        kept = (audit or {}).pop("kept", None)
        if kept:
            if ok:
                await self.history.keep(logged_as(method, params), kept)
            else:
                self.history.discard(kept)
        if method.name == REWIND and self._journaled:
            self._journaled = False
            if ok or getattr(payload, "code", None) not in _UNFINISHED:
                rewind.clear_journal(self.history)  # done, or undone by the worker
        if not ok:
            return payload
        if method.name == HISTORY:
            return self.history.versions(payload["path"], params.get("limit", 20))
        if method.name == CHECKPOINT:
            return {"checkpoint": checkpoint_id(self.history.checkpoint(
                params.get("label", "")))}
        return payload

    @property
    def history(self) -> History:
        assert self._store is not None  # only reached with the history on
        return self._store

    def _version(self, params: dict[str, Any]) -> dict[str, Any]:
        """The content and mode of the version a restore names."""
        self.history.load()
        offset = parse_id(params["version"], "h-")
        entry = self.history.entries.get(offset) if offset is not None else None
        try:
            path = normalize(params["path"], roots=self._roots)
        except ToolError:
            return {}  # the worker refuses the path with this same error
        if entry is None or entry.path != path:
            raise ToolError("invalid_params", f"{params['version']!r} is not a version of "
                            f"{params['path']}. Take one from file.history for this path.",
                            param="version")
        if entry.sha256 is None:
            return {"content": None}
        if not self.history.kept(entry.sha256):
            raise ToolError("invalid_params", f"Version {params['version']} of "
                            f"{params['path']} was dropped by the history's byte budget "
                            "(--history-bytes); restore a newer one.", param="version",
                            evicted=True)
        return {"content": self.history.read(entry.sha256), "mode": entry.mode}

    def _undo_to(self, given: str) -> dict[str, Any] | None:
        try:
            path = normalize(given, roots=self._roots)
        except ToolError:
            return None  # the worker refuses the path with its own error
        return undo_target(self.history, path, given)

    async def _plan(self, params: dict[str, Any], run: Run) -> dict[str, Any]:
        dry_run = params.get("dry_run") is True
        force = params.get("force") is True
        name = params["checkpoint"]
        self.history.load()
        since = parse_id(name, "cp-")
        if since is None or since not in self.history.checkpoints:
            raise ToolError("invalid_params", f"No checkpoint {name!r}. Pass one that "
                            "workspace.checkpoint returned.", param="checkpoint")
        if not dry_run:
            await self._complete(run)
        items = rewind.plan(self.history, since)
        loaded = rewind.with_content(self.history, items, name)
        if not dry_run:
            rewind.write_journal(self.history, name, items, force)
            self._journaled = True
        return {"checkpoint": name, "items": loaded, "force": force, "dry_run": dry_run}

    async def _complete(self, run: Run) -> None:
        """Finish the rewind a killed server left in its journal."""
        journal = rewind.read_journal(self.history)
        if journal is None:
            return
        items = rewind.with_content(self.history, journal["items"], journal["checkpoint"])
        ok, payload, audit = await run(Task(REWIND_TARGET, {
            "checkpoint": journal["checkpoint"], "items": items, "force": journal["force"]},
            mutating=True, keep=True))
        kept = (audit or {}).pop("kept", None)
        if not ok:
            if kept:
                self.history.discard(kept)
            raise payload
        if kept:
            await self.history.keep(REWIND, kept)
        rewind.clear_journal(self.history)

