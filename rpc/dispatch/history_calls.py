"""The invoker's seam to the history (docs/protocol.md, History), beside the audit records:
one call before a job runs (`prepare`) and one after it (`finish`), both inside the call's
path order (rpc/dispatch/invoker.py), so a rewind sees every change that arrived before
it and a change after it waits.

- every mutation: `finish` keeps what the worker handed back (tools/mutate/keep.py)
  before the call is answered;
- every mutation: `prepare` first makes sure the history can take what it replaces (its
  pack open: a directory gone or unwritable refuses the change before it); the worker
  reserves room on the history's disk (tools/mutate/reserve.py); a change whose old
  content could not be kept after all (`--history-full write`) is answered with its
  result and a `history` member saying so;
- file.history: the worker checks the path (confinement, --deny, no symlink); the answer
  comes from the store;
- file.restore: `prepare` has a worker judge the path first (docs/protocol.md, Paths:
  a symlink leading outside is path_outside_workspace, whatever the version), then finds
  the version and hands its content to the worker; str_replace_editor's undo_edit the
  same, the version being the one before the path's last edit
  (rpc/dispatch/history_undo.py); `finish` logs it as an undo;
- workspace.checkpoint: the worker checks the options; `finish` logs the checkpoint;
- workspace.rewind: `prepare` first completes a journal left by a killed rewind, then
  plans this one, writes its journal and hands the content over; `finish` clears it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from chorus_tools.rpc.dispatch import rewind
from chorus_tools.rpc.dispatch.history import History, checkpoint_id, parse_id
from chorus_tools.rpc.dispatch.history_room import Lost, errno_name
from chorus_tools.rpc.dispatch.history_undo import is_undo, logged_as, undo_target
from chorus_tools.tools.dialects.anthropic_table import UNDO_PARAM
from chorus_tools.tools.confine.sandbox import normalize
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.method import Method
from chorus_tools.tools.task import Task

HISTORY, RESTORE = "file.history", "file.restore"
CHECKPOINT, REWIND = "workspace.checkpoint", "workspace.rewind"
REWIND_TARGET = "chorus_tools.tools.mutate.rewind:rewind"
LOCATE_TARGET = "chorus_tools.tools.mutate.restore:locate"
_UNFINISHED = ("worker_crashed", "timeout")  # the worker may have stopped half way
log = logging.getLogger("chorus.history")

Run = Callable[[Task], Awaitable[tuple[bool, Any, Any]]]  # one more job of the call


class HistoryCalls:
    """With `history` None (--history 0) file.history lists nothing and the other three
    methods are refused as invalid_params, saying so."""

    def __init__(self, history: History | None, roots: tuple[str, ...],
                 read_only: bool, full: str = "refuse") -> None:
        self._store = history
        self.on = history is not None  # mutations hand back what they replace
        self._journaled = False  # the running rewind wrote a journal (rewinds run alone)
        # what completing a stopped rewind's journal changed: the result and the audit
        # record of the rewind that completed it say so too
        self._completed: dict[str, Any] | None = None
        self._roots = roots
        self._read_only = read_only
        self._full = full  # --history-full: refuse | write

    async def prepare(self, method: Method, params: dict[str, Any],
                      run: Run) -> dict[str, Any]:
        """The params the worker runs with."""
        judged = None
        if method.name == RESTORE or is_undo(method, params):
            judged = await self._judge(params["path"], run)  # before anything else
        if self._read_only and method.mutating:
            return params  # the worker refuses it before anything happens
        if self._store is None:
            if method.name in (RESTORE, CHECKPOINT, REWIND):
                raise ToolError("invalid_params", "The history is off (--history 0): "
                                "there is nothing to restore or rewind.", param="method")
            return params
        if method.mutates(params):
            self._ready()
        if method.name == RESTORE:
            return {**params, **self._version(params, judged)}
        if is_undo(method, params):
            return {**params, UNDO_PARAM: self._undo_to(judged, params["path"])}
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
        reserved = (audit or {}).pop("reserved", None)
        lost = []
        if ok and kept:
            lost = await self.history.keep(logged_as(method, params), kept, reserved)
        elif kept or reserved:
            self.history.discard(kept or [], reserved)
        if method.name == REWIND and self._completed is not None:
            done, self._completed = self._completed, None
            if audit is not None:
                audit["files"] = done["files"] + audit.get("files", [])
                audit["bytes"] = sum(f["bytes"] for f in audit["files"])
            if ok:
                payload = {**payload, **{key: sorted({*done[key], *payload[key]})
                                         for key in ("restored", "deleted")}}
        if method.name == REWIND and self._journaled:
            self._journaled = False
            if ok or getattr(payload, "code", None) not in _UNFINISHED:
                rewind.clear_journal(self.history)  # done, or undone by the worker
            else:
                payload = _unfinished(payload)
        if not ok:
            return payload
        if method.name == HISTORY:
            return self.history.versions(payload["path"], params.get("limit", 20))
        if method.name == CHECKPOINT:
            return {"checkpoint": checkpoint_id(self._checkpoint(params.get("label", "")))}
        return not_kept(payload, lost) if lost else payload

    def _ready(self) -> None:
        """The history can take what a change replaces, or the change is refused."""
        try:
            self.history.ready()
        except OSError as exc:
            if self._full != "write":
                raise history_error(exc, "nothing was changed") from None

    def _checkpoint(self, label: str) -> int:
        try:
            return self.history.checkpoint(label)
        except OSError as exc:
            raise history_error(exc, "no checkpoint was made") from None

    async def _judge(self, path: str, run: Run) -> str:
        """The path as a worker judges it (confinement, --deny, no symlink on the way):
        its error, if any, is the call's, before the version is even looked at."""
        paths = {}
        try:
            paths[path] = normalize(path, allow_empty=True, roots=self._roots)
        except ToolError:
            pass  # the worker refuses it with this same error
        ok, payload, _ = await run(Task(LOCATE_TARGET, {"path": path}, paths))
        if not ok:
            raise payload
        return payload["path"]

    @property
    def history(self) -> History:
        assert self._store is not None  # only reached with the history on
        return self._store

    def _version(self, params: dict[str, Any], path: str | None) -> dict[str, Any]:
        """The content and mode of the version a restore names (`path` as judged)."""
        offset = parse_id(params["version"], "h-")
        entry = self.history.entry(offset) if offset is not None else None
        if entry is None or entry.path != path:
            raise ToolError("invalid_params", f"{params['version']!r} is not a version of "
                            f"{params['path']}. Take one from file.history for this path.",
                            param="version")
        if entry.sha256 is None:
            return {"content": None}
        content = self.history.read(entry.sha256)
        if content is None:
            raise ToolError("invalid_params", f"Version {params['version']} of "
                            f"{params['path']} is no longer kept (the history's byte budget, "
                            "--history-bytes, dropped it, or its disk was full when it "
                            "changed); restore a newer one.", param="version",
                            evicted=True)
        return {"content": content, "mode": entry.mode}

    def _undo_to(self, path: str | None, given: str) -> dict[str, Any] | None:
        return None if path is None else undo_target(self.history, path, given)

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
            try:
                rewind.write_journal(self.history, name, items, force)
            except OSError as exc:
                raise history_error(exc, "nothing was changed") from None
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
            mutating=True, record=True, keep=True))
        kept = (audit or {}).pop("kept", None)
        reserved = (audit or {}).pop("reserved", None)
        if not ok:
            self.history.discard(kept or [], reserved)
            raise payload
        self._completed = {"files": (audit or {}).get("files", []),
                           "restored": payload["restored"], "deleted": payload["deleted"]}
        if kept and (lost := await self.history.keep(REWIND, kept, reserved)):
            log.warning("the rewind a killed server left is complete, but the history could "
                        "not keep what it replaced in %s (%s)",
                        ", ".join(x.path for x in lost), lost[0].errno)
        rewind.clear_journal(self.history)



def _unfinished(error: ToolError) -> ToolError:
    """A rewind stopped part way (its request timeout, its worker's death): the error
    says so, since some files are back and others not, until the next rewind completes
    its journal first (docs/protocol.md, History)."""
    return ToolError(error.code, f"{error.message} The rewind was stopped part way: some "
                     "files are back as they were at the checkpoint, others not yet. Call "
                     "workspace.rewind again: it completes this one first.",
                     quote=error.quote, **error.details)


def history_error(exc: OSError, outcome: str) -> ToolError:
    """The history's directory cannot be written (docs/protocol.md, History: a full
    history): `write_failed` naming the OS error, and where."""
    name = errno_name(exc)
    return ToolError("write_failed", f"The history cannot be written ({name}: "
                     f"{exc.strerror}), so {outcome}. Free space where the history is "
                     "kept, or have the server started with another --history DIR.",
                     errno=name, where="history")


def not_kept(payload: Any, lost: list[Lost]) -> Any:
    """A change made whose old content the history could not keep: the result says so
    (docs/protocol.md, History: `--history-full`)."""
    if not isinstance(payload, dict):
        return payload
    return {**payload, "history": {
        "kept": False, "errno": lost[0].errno, "paths": [x.path for x in lost],
        "message": f"The change was made, but the history could not keep what it "
                   f"replaced ({lost[0].errno}): it cannot be restored or rewound."}}
