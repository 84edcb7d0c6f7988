"""The warm tree: every directory of the workspace with its entries' kinds and lstat data,
built once and then kept exact from inotify events (tools/warm/events.py).

Exact, not hopeful: an event only says *where* to look. `sync` re-reads every entry an event
named (lstat through its directory opened from the root one name at a time, O_NOFOLLOW)
until nothing is left to look at, so the order or merging of events cannot matter. A
directory is watched before it is listed: what changes after the listing raises an event,
what changed before is in it. Entries --deny names and our temporary files are never kept,
and denied directories never opened. A queue overflow makes the tree unknown until it is
built again.

What the kernel does not report is looked at on every sync: files with more than one link
(another link may be written) and ignore files that are symlinks (their target may change).
"""

from __future__ import annotations

import os
import stat
from typing import Callable, Iterator

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.confine.reserved import is_temp_name
from chorus_tools.tools.walk.globs import RuleSet
from chorus_tools.tools.walk.ignore import IGNORE_FILES, load_dir_rules
from chorus_tools.tools.walk.source import CHILD_FLAGS, DIR, FILE, OTHER, SYMLINK, kind_of
from chorus_tools.tools.warm.entry import KINDS, kind, lstat, pack, same_object, size
from chorus_tools.tools.warm.events import IGNORED, MODIFY, OVERFLOW, Event, Events

Stat = os.stat_result | None  # None: listed, but its lstat failed (as the disk walk sees it)


class Node:
    """One directory: its entries (name -> packed kind and lstat: tools/warm/entry.py) and
    its ignore files' rules."""

    __slots__ = ("entries", "rules", "wd")

    def __init__(self, wd: int) -> None:
        self.entries: dict[str, bytes] = {}
        self.rules: dict[str, RuleSet] = {}
        self.wd = wd


class WarmTree:
    def __init__(self, ctx: ToolContext, events: Events,
                 on_file: Callable[[str, Stat], None]) -> None:
        self.ctx = ctx
        self.events = events
        self.on_file = on_file  # a file appeared, changed (its new lstat) or went (None)
        self.dirs: dict[str, Node] = {}
        self.by_wd: dict[int, str] = {}
        self.dirty: set[tuple[str, str]] = set()  # (directory, name) to look at again
        self.volatile: set[tuple[str, str]] = set()  # looked at on every sync (module doc)
        self.written: set[tuple[str, str]] = set()  # of `dirty`: files written (IN_MODIFY)
        self.generation = 0  # bumped by every change applied
        self.shape = 0  # bumped by a change of names, kinds or ignore rules
        self.files = 0
        self.building: Iterator[None] | None = self._scan("")
        self.lost = False  # events were lost: the tree must be built again

    @property
    def ready(self) -> bool:
        return self.building is None and not self.lost

    def build_step(self) -> bool:
        """Scan one more directory of the first build; False once there is none."""
        if self.building is None:
            return False
        if next(self.building, StopIteration) is StopIteration:
            self.building = None
        return self.building is not None

    def note(self, events: list[Event]) -> None:
        """Remember where events say to look; applied by `sync`."""
        for event in events:
            if event.mask & OVERFLOW:
                self.lost = True
            elif event.mask & IGNORED:
                self.by_wd.pop(event.wd, None)
            elif event.name and (path := self.by_wd.get(event.wd)) is not None:
                self.dirty.add((path, event.name))
                if event.mask & MODIFY:
                    self.written.add((path, event.name))
                if path:  # its own time and size changed too, unreported in its parent
                    parent, _, name = path.rpartition("/")
                    self.dirty.add((parent, name))

    def sync(self) -> None:
        """Look again at everything an event named, until nothing is left."""
        self.dirty |= self.volatile
        while self.dirty:
            batch = sorted(self.dirty, key=lambda item: item[0].count("/"))
            self.dirty.clear()
            for directory, name in batch:
                self._refresh(directory, name)
        self.written.clear()

    def lookup(self, rel: str) -> Node | None:
        """The node of directory `rel` ('' for the root) when every step to it is a
        directory of the tree (no symlink on the way), else None."""
        node = self.dirs.get("")
        if not rel or node is None:
            return node
        path = ""
        for name in rel.split("/"):
            entry = node.entries.get(name)
            path = f"{path}/{name}" if path else name
            if entry is None or kind(entry) != DIR or (node := self.dirs.get(path)) is None:
                return None
        return node

    def usage(self) -> dict[str, int]:
        """The quota's figures (tools/mutate/quota.py, measured as its disk walk does):
        the bytes of regular files, and every entry but the root counted as a file."""
        total = count = 0
        file_code = KINDS.index(FILE)
        for node in self.dirs.values():
            count += len(node.entries)
            total += sum(size(e) for e in node.entries.values() if e[0] == file_code)
        return {"bytes": total, "files": count}

    def close(self) -> None:
        for node in self.dirs.values():
            self.events.unwatch(node.wd)
        self.dirs.clear()
        self.by_wd.clear()

    def _refresh(self, directory: str, name: str) -> None:
        node = self.dirs.get(directory)
        if node is None or is_temp_name(name):
            return
        path = f"{directory}/{name}" if directory else name
        fd = self._open(directory)
        if fd is None:  # the directory itself changed: its parent's entry says how
            if directory:
                parent, _, base = directory.rpartition("/")
                self.dirty.add((parent, base))
            return
        try:
            self._update(node, directory, fd, name, path)
        finally:
            os.close(fd)

    def _update(self, node: Node, directory: str, fd: int, name: str, path: str) -> None:
        packed = node.entries.get(name)
        old = kind(packed) if packed is not None else None
        try:
            st: Stat = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        except OSError:  # kept as listed, lstat failing
            st = lstat(packed) if packed is not None else None
        new = _kind_of_mode(st) if st is not None else None
        if new is None or (new != SYMLINK and self.ctx.ws.deny.matches(path)):
            if old is not None:
                self._forget(node, name, path, old)
            return
        entry = pack(new, st)
        if old == DIR and (new != DIR or not self._same_directory(path, packed, entry)):
            self._forget(node, name, path, DIR)
            old = packed = None
        if entry == packed and not (new == SYMLINK and name in IGNORE_FILES):
            if new == FILE and (directory, name) in self.written:
                self.on_file(path, st)  # rewritten within the clock's tick: same lstat
            return  # looked at for nothing (an ignore symlink's target may have changed)
        node.entries[name] = entry
        self.generation += 1
        if old != new:
            self.shape += 1
            self.files += (new == FILE) - (old == FILE)
        if new == DIR and path not in self.dirs:
            for _ in self._scan(path):
                pass
        self._watch_links(directory, name, new, st)
        if name in IGNORE_FILES:
            self._reload_rules(directory, node)
        if new == FILE:
            self.on_file(path, st)
        elif old == FILE:
            self.on_file(path, None)

    def _same_directory(self, path: str, packed: bytes | None, entry: bytes) -> bool:
        """Whether the directory at `path` is still the one its node lists. Its inode number
        is not enough: a directory removed and another made at its name often gets the
        same one at once. But a watched inode is pinned until its watch is removed, which
        queues IN_IGNORED before the number can be reused (so before the barrier): the
        node's watch still alive and the same inode prove the same directory."""
        held = self.dirs.get(path)
        return (held is not None and self.by_wd.get(held.wd) == path
                and same_object(packed or b"", entry))

    def _forget(self, node: Node, name: str, path: str, was: str) -> None:
        del node.entries[name]
        self.generation += 1
        self.shape += 1
        self.volatile.discard((path.rpartition("/")[0], name))
        if was == FILE:
            self.files -= 1
            self.on_file(path, None)
        if was == DIR:
            self._drop_subtree(path)
        if name in IGNORE_FILES:
            self._reload_rules(path.rpartition("/")[0], node)

    def _drop_subtree(self, path: str) -> None:
        prefix = path + "/"
        for directory in [d for d in self.dirs if d == path or d.startswith(prefix)]:
            gone = self.dirs.pop(directory)
            if self.by_wd.get(gone.wd) == directory:  # else: moved here, watched again
                self.by_wd.pop(gone.wd, None)
                self.events.unwatch(gone.wd)
            for name, entry in gone.entries.items():
                self.volatile.discard((directory, name))
                if kind(entry) == FILE:
                    self.files -= 1
                    self.on_file(f"{directory}/{name}", None)

    def _reload_rules(self, directory: str, node: Node) -> None:
        node.rules = load_dir_rules(self.ctx, directory, set(node.entries))
        self.shape += 1
        self.generation += 1

    def _watch_links(self, directory: str, name: str, found: str, st: Stat) -> None:
        if (found == FILE and st is not None and st.st_nlink > 1) or (
                found == SYMLINK and name in IGNORE_FILES):
            self.volatile.add((directory, name))
        else:
            self.volatile.discard((directory, name))

    def _scan(self, top: str) -> Iterator[None]:
        """Watch, list and stat `top` and every directory beneath it, one directory per
        step, depth first (each directory's descriptor is opened from its parent's)."""
        first = self._open(top)
        if first is None:
            return
        stack = [(top, first)]
        try:
            while stack:
                path, fd = stack.pop()
                try:
                    for name in self._scan_one(path, fd):
                        try:
                            child = os.open(name, CHILD_FLAGS, dir_fd=fd)
                        except OSError:
                            continue
                        stack.append((f"{path}/{name}" if path else name, child))
                finally:
                    os.close(fd)
                yield
        finally:
            for _, fd in stack:
                os.close(fd)

    def _scan_one(self, path: str, fd: int) -> list[str]:
        """Watch and list one directory into the tree; the names of its subdirectories."""
        wd = self.events.watch(fd)
        node = self.dirs[path] = Node(wd)
        self.by_wd[wd] = path
        if path:  # its time may have changed since its parent was listed, unwatched
            parent, _, name = path.rpartition("/")
            self.dirty.add((parent, name))
        self.generation += 1
        self.shape += 1
        prefix = f"{path}/" if path else ""
        try:
            with os.scandir(fd) as it:
                listed = [(e.name, kind_of(e)) for e in it if not is_temp_name(e.name)]
        except OSError:
            listed = []
        subdirs = []
        for name, found in listed:
            if found != SYMLINK and self.ctx.ws.deny.matches(prefix + name):
                continue
            try:
                st: Stat = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                st = None
            node.entries[name] = pack(found, st)
            self._watch_links(path, name, found, st)
            if found == DIR:
                subdirs.append(name)
            elif found == FILE:
                self.files += 1
                self.on_file(prefix + name, st)
        node.rules = load_dir_rules(self.ctx, path, set(node.entries))
        return sorted(subdirs, reverse=True)

    def _open(self, directory: str) -> int | None:
        """`directory` opened from the root one name at a time, never through a symlink."""
        try:
            fd = os.open(".", CHILD_FLAGS, dir_fd=self.ctx.ws.root_fd)
        except OSError:
            return None
        for name in directory.split("/") if directory else ():
            try:
                child = os.open(name, CHILD_FLAGS, dir_fd=fd)
            except OSError:
                return None
            finally:
                os.close(fd)
            fd = child
        return fd


def _kind_of_mode(st: os.stat_result) -> str:
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return FILE
    if stat.S_ISDIR(mode):
        return DIR
    return SYMLINK if stat.S_ISLNK(mode) else OTHER
