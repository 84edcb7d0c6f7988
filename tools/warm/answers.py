"""What the warm process answers, and when it may: only right after a barrier has shown
the tree current (tools/warm/events.py), else None, and the worker walks the disk.

- `list`: file.list's reply, computed by file.list's own code over the tree in memory;
- `select`: the files a search covers (its walk: path, hidden, ignore files, globs, types,
  --deny), their count, and, when the pattern's grams narrow it, only the candidates
  (for ripgrep a page of them, and a key to the rest: `page`);
- `page`: more of a selection's candidates, from the snapshot its `select` kept (None
  once the tree has changed since: the worker walks instead);
- `status`: workspace.status;
- `usage`: the quota's figures, the bytes of regular files and the count of entries;
- `code_symbols`, `code_references`, `code_map`: from the symbol index
  (tools/warm/code_answers.py);
- `stamp`: the tree's state now (Warm.stamp), which the server compares with a whole code
  reply's (rpc/process/warm_replies.py).

The budget (--index-memory) bounds what the tree, the index and the replies kept add to
this process's resident memory over its baseline, measured once its imports are done (the
interpreter and numpy: no budget lowers them): a tree that outgrows it turns off, an index
that does not fit in what the tree and the replies' room (KEPT_SHARE) leave stays off, and
kept replies stay within their room (tools/warm/kept.py).

Replies are cached per question until the tree changes: `list` until any change (sizes and
times are in it), `select` until a change of names, kinds or ignore rules. A selection is
kept as the files' ids (numpy), not their paths, so a 200k-file one costs 1 MB, not 35.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import os
import pickle
import time
from typing import Any, Iterator, NamedTuple

import numpy as np

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.search.filetypes import FileTypes
from chorus_tools.tools.walk.listing import list_files
from chorus_tools.tools.walk.walk import walk_files
from chorus_tools.tools.warm import code_answers
from chorus_tools.tools.warm.client import KEPT_SHARE, Pickled
from chorus_tools.tools.warm.code_replies import ByName
from chorus_tools.tools.warm.content import Content
from chorus_tools.tools.warm.events import Event, Events, WatchLimit
from chorus_tools.tools.warm.kept import Kept
from chorus_tools.tools.warm.line_table import LineTables
from chorus_tools.tools.warm.memory import MemorySource, NotWarm
from chorus_tools.tools.warm.symbol_index import SymbolIndex
from chorus_tools.tools.warm.tree import Stat, WarmTree

log = logging.getLogger("chorus.warm")
BARRIER_SECONDS = 5.0
LINES_SHARE = 64  # where files' lines start, kept for code.references: 4 MiB of the default
MEMORY_CHECK = 256  # directories built between two looks at the memory used


ARGV_SLOT = 9  # argv bytes a name costs besides its own: its NUL and its pointer


class Snapshot(NamedTuple):
    """A selection's candidates, kept for its next pages while the tree is unchanged."""

    places: np.ndarray  # each candidate's place among the files covered
    fids: np.ndarray  # the candidates, in path order


class Warm:
    def __init__(self, ctx: ToolContext, budget: int, events: Events, memory: Memory) -> None:
        self.ctx = ctx
        self.budget = budget
        self.events = events
        self.rss = memory
        self.baseline = memory()  # before any tree: the budget counts what comes after
        self.content = Content(ctx)
        self.symbols = SymbolIndex(ctx, budget)
        self.tree: WarmTree | None = None
        self.reason: str | None = None
        self.built_at: float | None = None
        self._kept = Kept(budget // KEPT_SHARE)
        # where a warm code.references's files' lines start, code.symbols's names by file
        self.lines = LineTables(budget // LINES_SHARE)
        self.by_name = ByName(self.symbols.kept_limit)
        self._keys = itertools.count()
        self._trees = 0
        self._new_tree()

    def has_work(self) -> bool:
        tree = self.tree
        return tree is not None and (tree.building is not None or self.content.due_in() == 0
                                     or self._parsing())

    def wait(self) -> float | None:
        """How long the loop may wait for a socket or an event: 0 with work to do, else
        until a changed file is due to be read (None: no limit)."""
        if self.has_work():
            return 0.0
        return self.content.due_in() if self.tree is not None else None

    def work(self, seconds: float) -> None:
        """Build the tree, then read files into the index, for about `seconds`."""
        tree = self.tree
        if tree is None:
            return
        until = time.monotonic() + seconds
        try:
            steps = 0
            while tree.build_step() and time.monotonic() < until:
                steps += 1
                if steps % MEMORY_CHECK == 0 and self.used() > self.budget:
                    return self._over_budget()
        except WatchLimit as exc:
            return self._off(str(exc))
        if tree.building is None and self.built_at is None:
            if self.used() > self.budget:  # a tree too small to reach a MEMORY_CHECK
                return self._over_budget()
            self.built_at = time.monotonic()
            self.content.start(tree.files, self.budget - self.used() - self._kept.limit)
            self.symbols.start()
        # idle, nothing is stepped: a look at the memory reads a /proc file
        if self._parsing():
            self.symbols.feed()  # the helpers parse while the content index reads
        if time.monotonic() < until and self.content.due_in() == 0:
            self.content.step(until - time.monotonic())
            if self.content.index is not None and self.used() > self.budget:
                self.content.drop("the index outgrew --index-memory; searches run unindexed")
        if time.monotonic() < until and self._parsing():
            self.symbols.step(until - time.monotonic(), lambda: self.used() > self.budget,
                              lambda: self.budget - self.used())

    def _parsing(self) -> bool:
        symbols = self.symbols
        return symbols.started and bool(symbols.queue or symbols.handed)

    def note(self, events: list[Event] | None = None) -> None:
        """Take in what inotify queued (or `events`); a lost queue means a new build."""
        if self.tree is None:
            return
        self.tree.note(self.events.read() if events is None else events)
        if self.tree.lost:
            log.warning("inotify's queue overflowed: the warm tree is built again")
            self._new_tree()

    def current(self) -> bool:
        """Bring the tree up to every change made before now; False when it cannot say."""
        if self.tree is None or not self.tree.ready:
            return False
        before = self.events.barrier(BARRIER_SECONDS)
        if before is None:
            return False
        self.note(before)
        tree = self.tree
        if not tree.ready:
            return False
        try:
            tree.sync()
        except WatchLimit as exc:
            self._off(str(exc))
            return False
        return True

    def answer(self, op: str, kwargs: dict[str, Any], current: bool) -> Any:
        if op == "status":
            return self.status()
        if op == "page":
            return self.page(**kwargs)
        if not current or self.tree is None:
            return None
        if op == "usage":  # the quota's account (tools/mutate/quota.py)
            return self.tree.usage() if self.tree.ready else None
        if op == "stamp":
            return self.stamp()
        try:
            if op in _CODE:
                return _CODE[op](self, **kwargs)
            return self.select(**kwargs) if op == "select" else self.listing(kwargs)
        except (NotWarm, ToolError):  # the disk walk says it (or raises the same error)
            return None

    def stamp(self) -> tuple[int, int, int]:
        """The tree's state: equal stamps, the same files (a reply kept until the tree
        changes is valid while the stamp is the same). This process, a new tree's count
        (a lost inotify queue builds another) and the changes applied to it."""
        assert self.tree is not None
        return os.getpid(), self._trees, self.tree.generation

    def listing(self, kwargs: dict[str, Any]) -> Pickled:
        """file.list's reply, pickled once (as the worker passes it on: client.Pickled)."""
        assert self.tree is not None
        key = ("list", tuple(sorted((k, _frozen(v)) for k, v in kwargs.items())))
        hit = self._kept.get(key, self.tree.generation)
        if hit is not None:
            return hit
        reply = list_files(self._memory_ctx(), **kwargs)
        assert isinstance(reply, dict), "a walk in memory is never shared out"
        pickled = Pickled(pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL))
        self._kept.put(key, self.tree.generation, pickled)  # unless larger than the room
        return pickled

    def select(self, rel: str, include_hidden: bool, include_ignored: bool,
               globs: list[str], types: tuple[str, ...], grams: list[int] | None,
               want_files: bool, page: int | None = None, max_bytes: int = 0,
               share: float = 1.0) -> dict[str, Any]:
        """The files covered, in path order: all of them (`want_files`), or the index's
        candidates with each one's place among them; for ripgrep (`page`) only the first
        `page` candidates and the key to the others, when they are at most `share` of
        the files covered (else none: rg walks)."""
        fids = self.selected(rel, include_hidden, include_ignored, globs, types)
        paths = self.content.paths
        places = self.content.narrow(fids, grams) if grams is not None else None
        if places is None or len(places) > share * len(fids):
            return {"total": len(fids), "narrowed": False,
                    "files": [paths[f] for f in fids.tolist()] if want_files else None}
        chosen = fids[places]
        if want_files:
            return {"total": len(fids), "narrowed": True, "positions": places.tolist(),
                    "files": [paths[f] for f in chosen.tolist()]}
        assert self.tree is not None
        snapshot = next(self._keys)
        self._kept.put(("snapshot", snapshot), self.tree.generation, Snapshot(places, chosen))
        return {"total": len(fids), "narrowed": True, "files": None, "key": snapshot,
                "page": self.page(snapshot, 0, page or 0, max_bytes)}

    def page(self, key: int, start: int, count: int, max_bytes: int) -> dict[str, Any] | None:
        """Candidates `start` to `start + count` of a selection (fewer when their names
        pass `max_bytes` of argv), or None once the tree has changed since."""
        snapshot = None if self.tree is None else self._kept.get(("snapshot", key),
                                                                 self.tree.generation)
        if snapshot is None:
            return None
        fids = snapshot.fids[start:start + count]
        paths, files, size = self.content.paths, [], 0
        for fid in fids.tolist():
            path = paths[fid]
            assert path is not None, "a snapshot is used only while the tree is unchanged"
            size += (len(path) if path.isascii() else len(os.fsencode(path))) + ARGV_SLOT
            if size > max_bytes and files:
                break
            files.append(path)
        return {"files": files, "positions": snapshot.places[start:start + len(files)].tolist(),
                "clean": self.content.clean(fids[:len(files)]).tobytes()}

    def selected(self, rel: str, include_hidden: bool, include_ignored: bool,
                 globs: list[str], types: tuple[str, ...] = ()) -> np.ndarray:
        """The ids of the files a search of `rel` covers, in walk order (kept until a
        change of names, kinds or ignore rules)."""
        assert self.tree is not None
        key = ("select", rel, include_hidden, include_ignored, tuple(globs), types)
        hit = self._kept.get(key, self.tree.shape)
        if hit is not None:
            return hit
        fids = self.content.fids(_selection(self._memory_ctx(), rel, include_hidden,
                                            include_ignored, globs, types))
        self._kept.put(key, self.tree.shape, fids)
        return fids

    def status(self) -> dict[str, Any]:
        tree, content = self.tree, self.content
        reason = self.reason or content.reason or self.symbols.reason
        index = ("off" if tree is None else "building" if not tree.ready
                 else "off" if content.index is None
                 else "building" if content.queue else "ready")
        symbols = self.symbols
        found = {"tree": "off" if tree is None else "ready" if tree.ready else "building",
                 "index": index,
                 "symbols": "off" if tree is None or not symbols.on else "building"
                 if not tree.ready or not symbols.started or symbols.queue or symbols.handed
                 else "ready",
                 "symbol_files": len(symbols.files), "symbols_indexed": symbols.symbols,
                 "files": tree.files if tree else 0,
                 "directories": len(tree.dirs) if tree else 0,
                 "indexed_files": content.indexed_files,
                 "indexed_bytes": content.indexed_bytes, "memory_bytes": self.used(),
                 "memory_budget": self.budget}
        if reason:
            found["reason"] = reason
        return found

    def used(self) -> int:
        """Bytes of resident memory over the baseline: what the budget bounds."""
        return max(0, self.rss() - self.baseline)

    def _over_budget(self) -> None:
        self._off(f"the tree alone needs more than --index-memory ({self.used()} bytes "
                  f"over the warm process's baseline, for a budget of {self.budget}); "
                  "every call walks the disk")

    def _memory_ctx(self) -> ToolContext:
        assert self.tree is not None
        return dataclasses.replace(self.ctx, source=MemorySource(self.tree), warm=None,
                                   workers=1)

    def kept(self, key: Any, make: Any, whole: Any = None) -> Any:
        """`make()`'s reply to a question, kept until any change of the tree (an answer is
        a function of the files: the same tree, the same answer); `whole(reply)` says
        whether it may be kept (not one that leaves files for the worker to parse)."""
        assert self.tree is not None
        hit = self._kept.get(key, self.tree.generation)
        if hit is not None:
            return hit
        value = make()
        if value is not None and (whole is None or whole(value)):
            self._kept.put(key, self.tree.generation, value)
        return value

    def _new_tree(self) -> None:
        if self.tree is not None:
            self.tree.close()
        self.content = Content(self.ctx)
        self.symbols.close()
        self.symbols = SymbolIndex(self.ctx, self.budget)
        self._kept.clear()
        self.lines.clear()
        self.by_name.clear()
        self.built_at = None
        self.tree = WarmTree(self.ctx, self.events, self._file_changed)
        self._trees += 1

    def _file_changed(self, path: str, st: Stat) -> None:
        """Both indexes hear of every file the tree sees appear, change or go."""
        self.content.changed(path, st)
        self.symbols.changed(path, st)

    def _off(self, reason: str) -> None:
        log.warning("the warm tree is off: %s", reason)
        self.reason = reason
        if self.tree is not None:
            self.tree.close()
        self.tree = None
        self.content.drop(reason)
        self.symbols.drop(reason)
        self._kept.clear()
        self.lines.clear()
        self.by_name.clear()


def _selection(ctx: ToolContext, rel: str, include_hidden: bool, include_ignored: bool,
               globs: list[str], types: tuple[str, ...]) -> Iterator[str]:
    return (p for p, _ in walk_files(ctx, rel, include_hidden=include_hidden,
                                     include_ignored=include_ignored, globs=globs,
                                     types=FileTypes(types) if types else None, strict=True))


_CODE = {"code_symbols": code_answers.code_symbols,
         "code_references": code_answers.code_references,
         "code_mentions": code_answers.code_mentions,
         "code_map": code_answers.code_map}


def _frozen(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


class Memory:
    """This process's resident memory, in bytes, from a /proc file opened before Landlock."""

    def __init__(self) -> None:
        self._fd = os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC)
        self._page = os.sysconf("SC_PAGE_SIZE")

    def __call__(self) -> int:
        return int(os.pread(self._fd, 128, 0).split()[1]) * self._page
