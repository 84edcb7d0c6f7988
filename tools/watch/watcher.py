"""The watcher: one watchfiles watch over the workspace, its batches turned into each
watch's changes. It runs in a process of its own beside the worker pool
(rpc/process/watch_service.py), so a burst of changes never delays a request.

watchfiles (inotify underneath) says which paths changed; what a change *is* comes from
the tree itself. The watcher remembers the entries beneath every watched directory (read
once when a watch starts, through descriptors, never following a symlink), and for each
path in a batch looks at what is there now: present and new is `added`, present, known and
changed is `modified`, gone and known is `deleted` (with whatever was known beneath it),
gone and never known (a temporary file born and removed within one batch) is nothing;
an event that changed neither mtime, size nor inode (a close after a create) says nothing.
So an atomic replace (temp file, rename over) is one `modified`, and a directory moved
in reports every entry it brings. A directory's own change is reported by its entries.

Filtered as every other result: nothing reached through a symlink (inotify follows
links, even out of the workspace; only real paths beneath the root count), no temporary
file of atomic writes, no `--deny`'d path or link to one, and unless `include_ignored`,
nothing the ignore files leave out. Hidden paths are reported (a watch has no
include_hidden; a pattern or `--deny` narrows it). Batches: a change is reported once
`STEP_MS` pass without another, or after `DEBOUNCE_MS` of continuous changes.
"""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import watchfiles

from chorus_tools.tools.mutate.atomic import split_parent
from chorus_tools.tools.confine.reserved import beneath_temp, is_temp_name
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.globs import IGNORE, ListPattern
from chorus_tools.tools.walk.ignore import IGNORE_FILES, IgnoreStack, load_dir_rules
from chorus_tools.tools.confine.sandbox import ROOT
from chorus_tools.tools.walk.source import DIR, FILE, SYMLINK
from chorus_tools.tools.walk.walk import denied_entry
from chorus_tools.tools.walk.fdwalk import fwalk

STEP_MS = 50  # quiet time that ends a batch
DEBOUNCE_MS = 500  # the longest a batch grows under continuous changes
IDLE_MS = 200  # how often an idle watch looks at its stop flag
Emit = Callable[[str, list[dict[str, str]]], None]
Signature = tuple[int, int, int]  # mtime_ns, size, inode: a change of any is `modified`


@dataclass
class _Watch:
    path: str  # real, workspace-relative ('.' for the root)
    pattern: ListPattern | None
    include_ignored: bool

    def covers(self, rel: str) -> bool:
        return self.path == ROOT or rel == self.path or rel.startswith(self.path + "/")

    def wants(self, rel: str) -> bool:
        if self.pattern is None:
            return True
        inner = rel if self.path == ROOT else rel[len(self.path) + 1:]
        return bool(inner) and self.pattern.matches(inner)


class Watcher:
    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self._watches: dict[str, _Watch] = {}
        self._tree: dict[str, dict[str, Signature]] = {}  # known dir -> its entries
        self._ignores: dict[str, IgnoreStack] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ready = threading.Event()

    def add(self, watch_id: str, spec: dict[str, Any]) -> None:
        """Start reporting to `watch_id` (spec from tools/watch/checks.py:prepare); returns once the
        watch is live, so a change made after the client's reply is never missed."""
        pattern = spec["pattern"]
        watch = _Watch(spec["path"], ListPattern(pattern.removeprefix("./")) if pattern
                       else None, spec["include_ignored"])
        with self._lock:
            if not any(w.covers(watch.path) for w in self._watches.values()):
                self._remember_tree(watch.path)
            self._watches[watch_id] = watch
        self._ready.wait()

    def remove(self, watch_id: str) -> None:
        with self._lock:
            self._watches.pop(watch_id, None)

    def stop(self) -> None:
        self._stop.set()
        self._ready.set()

    def run(self, emit: Emit) -> None:
        """Watch until `stop`: each batch's changes go to `emit(watch_id, changes)`.

        watchfiles fails a whole batch, and ends its watch, on an event whose path is not
        UTF-8 (`bad\xff.txt` created or removed): its watcher process died, every watch
        with it. The watch starts again, and once it is live the tree says what the lost
        batch changed (each path known or present now, settled as any event's)."""
        root = f"/proc/self/fd/{self.ctx.ws.root_fd}"
        lost = False
        while True:
            try:
                for batch in watchfiles.watch(root, watch_filter=None, debounce=DEBOUNCE_MS,
                                              step=STEP_MS, rust_timeout=IDLE_MS,
                                              yield_on_timeout=True, stop_event=self._stop,
                                              raise_interrupt=False):
                    self._ready.set()
                    paths = {p[len(root) + 1:] for _, p in batch if p.startswith(root + "/")}
                    with self._lock:
                        if lost:
                            paths |= self._known_and_present()
                            lost = False
                        for watch_id, changes in self._changes(sorted(paths)).items():
                            emit(watch_id, changes)
                return
            except RuntimeError as exc:  # watchfiles' WatchfilesRustInternalError
                if "decode path" not in str(exc):
                    raise
                lost = True

    def _known_and_present(self) -> set[str]:
        """Every path the tree knows, and every entry now in a directory it knows."""
        found = set()
        for directory, entries in list(self._tree.items()):
            prefix = "" if directory == ROOT else f"{directory}/"
            found.update(prefix + name for name in entries)
            try:
                fd = self.ctx.ws.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
            except ToolError:
                continue  # gone: its known entries settle as deleted
            try:
                with os.scandir(fd) as it:
                    found.update(prefix + entry.name for entry in it)
            except OSError:
                pass
            finally:
                os.close(fd)
        return found

    def _changes(self, paths: list[str]) -> dict[str, list[dict[str, str]]]:
        if any(p.rpartition("/")[2] in IGNORE_FILES for p in paths):
            self._ignores.clear()  # rules changed: read them again
        out: dict[str, list[dict[str, str]]] = {}
        parents: dict[str, int | None] = {}
        try:
            for rel in paths:
                watches = [(wid, w) for wid, w in self._watches.items() if w.covers(rel)]
                if not watches or self._hidden_from_all(rel):
                    continue
                for kind, path in self._settle(rel, parents):
                    for watch_id, watch in watches:
                        if watch.wants(path) and (watch.include_ignored
                                                  or not self._ignored(path)):
                            out.setdefault(watch_id, []).append({"type": kind,
                                                                 "path": path})
        finally:
            for fd in parents.values():
                if fd is not None:
                    os.close(fd)
        return out

    def _hidden_from_all(self, rel: str) -> bool:
        return beneath_temp(rel) or self.ctx.ws.deny.denies(rel)

    def _settle(self, rel: str, parents: dict[str, int | None]
                ) -> Iterator[tuple[str, str]]:
        """What happened to `rel`, judged by what is there now against what was known."""
        kind, sig = self._kind(rel, parents)
        if kind is None:
            return
        parent, name = split_parent(rel)
        entries = self._tree.get(parent, {})
        known = name in entries
        if kind == "gone":
            if known:
                for gone in self._forget(rel):
                    yield "deleted", gone
        elif not known:
            if kind == DIR:
                yield from (("added", p) for p in self._remember_tree(rel))
            else:
                self._tree.setdefault(parent, {})[name] = sig
                yield "added", rel
        elif kind != DIR and entries[name] != sig:  # events with no change say nothing
            entries[name] = sig
            yield "modified", rel

    def _kind(self, rel: str, parents: dict[str, int | None]
              ) -> tuple[str | None, Signature]:
        """file/dir/symlink/other for a real entry beneath the root (with its
        signature), "gone" when nothing is there, None for what must not be reported
        (reached through a symlink, out of the workspace, or a symlink to a denied
        path). `parents` holds this batch's directories, opened and checked once each."""
        parent, name = split_parent(rel)
        if parent not in parents:
            parents[parent] = self._real_dir(parent)
        dir_fd = parents[parent]
        if dir_fd is None:
            return ("gone" if parent in self._tree else None), _NO_SIGNATURE
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            return "gone", _NO_SIGNATURE
        mode = st.st_mode
        kind = DIR if stat.S_ISDIR(mode) else FILE if stat.S_ISREG(mode) else (
            SYMLINK if stat.S_ISLNK(mode) else "other")
        if kind == SYMLINK and denied_entry(self.ctx, rel, kind, rel):
            return None, _NO_SIGNATURE
        return kind, _signature(st)

    def _real_dir(self, rel: str) -> int | None:
        """A descriptor of directory `rel` when that path is real (no symlink on the way,
        inside the workspace, allowed), else None."""
        try:
            fd = self.ctx.ws.open(rel, os.O_PATH | os.O_DIRECTORY)
        except ToolError:
            return None
        if self.ctx.ws.where(fd, rel) != ("" if rel == ROOT else rel):
            os.close(fd)
            return None  # an alias through a symlinked directory
        return fd

    def _remember_tree(self, top: str) -> list[str]:
        """Learn the entries of directory `top` and beneath (`top` included unless it is
        the root), walked through descriptors; returns those that were new."""
        new = []
        if top != ROOT:
            parent, name = split_parent(top)
            if name not in self._tree.setdefault(parent, {}):
                self._tree[parent][name] = _NO_SIGNATURE
                new.append(top)
        self._tree.setdefault(top, {})
        try:
            fd = self.ctx.ws.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except ToolError:
            return new
        try:
            for here, dirs, files, here_fd in fwalk(fd):
                base = top if here == "." else here[2:] if top == ROOT else f"{top}/{here[2:]}"
                known = self._tree.setdefault(base, {})
                for name in sorted(dirs + files):
                    path = name if base == ROOT else f"{base}/{name}"
                    if is_temp_name(name) or self.ctx.ws.deny.matches(path):
                        if name in dirs:
                            dirs.remove(name)
                        continue
                    if name not in known:
                        known[name] = _NO_SIGNATURE if name in dirs else _stat_signature(
                            here_fd, name)
                        new.append(path)
        except OSError:
            pass  # changed or unreadable meanwhile: its entries are learnt as they change
        finally:
            os.close(fd)
        return new

    def _forget(self, rel: str) -> list[str]:
        """Drop `rel` and everything known beneath it; the paths dropped, in path order."""
        parent, name = split_parent(rel)
        self._tree.get(parent, {}).pop(name, None)
        gone, stack = [], [rel]
        while stack:
            path = stack.pop()
            gone.append(path)
            stack.extend(f"{path}/{child}" for child in self._tree.pop(path, ()))
        return sorted(gone)

    def _ignored(self, rel: str) -> bool:
        """Whether the ignore files leave `rel` out: it, or a directory above it."""
        parts = rel.split("/")
        stack = IgnoreStack()
        for depth in range(len(parts)):
            directory = "/".join(parts[:depth])
            stack = self._stack(directory, stack)
            if stack and stack.match("/".join(parts[:depth + 1]),
                                     depth < len(parts) - 1 or rel in self._tree) == IGNORE:
                return True
        return False

    def _stack(self, directory: str, above: IgnoreStack) -> IgnoreStack:
        if directory not in self._ignores:
            self._ignores[directory] = above.child(directory,
                                                   load_dir_rules(self.ctx, directory))
        return self._ignores[directory]


_NO_SIGNATURE: Signature = (0, 0, 0)


def _signature(st: os.stat_result) -> Signature:
    return st.st_mtime_ns, st.st_size, st.st_ino


def _stat_signature(dir_fd: int, name: str) -> Signature:
    try:
        return _signature(os.stat(name, dir_fd=dir_fd, follow_symlinks=False))
    except OSError:
        return _NO_SIGNATURE  # gone meanwhile: its own event will say so
