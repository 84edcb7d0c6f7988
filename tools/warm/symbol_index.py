"""The symbol index: for every code file the warm tree holds, the names it defines, the
words it mentions (tools/code/rank.py's summary) and where each identifier is used
(tools/warm/refs.py), from one parse of each file, read in the background, niced, as the
tree reports files appearing and changing (the same events as the content index's).

A file is *unknown* from the moment the tree reports it until it is parsed, and for good
when the index cannot rely on its bytes (more than one link: another link may write it
unseen; over MAX_FILE_BYTES): an unknown file is always a candidate, parsed by whoever
asks, so what the index holds only ever leaves out files that cannot match. Files that
are no code (by their name, their first line, or binary) are kept apart, never candidates.
"""

from __future__ import annotations

import os
import time
import zlib
from collections import OrderedDict
from array import array
from typing import Callable, NamedTuple

import numpy as np

from chorus_tools.tools.code.bounds import Budget, Skipped
from chorus_tools.tools.code.codemap import parse_summary
from chorus_tools.tools.code.parse import give_back
from chorus_tools.tools.code.source import read_candidate
from chorus_tools.tools.code.symbols import Symbol, maybe_code, supported, symbols
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.warm.refs import Local, Record, local
from chorus_tools.tools.warm.symbol_helpers import BATCH, SLOW, Helpers

MAX_FILE_BYTES = 2 * 1024 * 1024  # parsed here; a bigger file is parsed by the asker
# a file whose parse takes longer is left to the askers too: tree-sitter's error recovery
# on 700 KiB of junk C++ took 45 s, and every answer of the warm process waited for it.
# Only files from BOUNDED_FROM bytes are timed (a timed parse costs ~10% more; the
# recovery's cost grows with the square of the junk: 60 KiB of it took 0.3 s)
PARSE_SECONDS = 2.0
BOUNDED_FROM = 32 * 1024
SYMBOLS_SHARE = 16  # whole symbols kept may take 1/16 of the budget (replies: client.py)
SYMBOL_BYTES = 500  # what a kept Symbol costs, its strings included (measured: ~440)
# files parsed before the index estimates whether the rest fits the room it has: at 200k
# files the default budget ran out only after a minute of parsing
ESTIMATE_AFTER = 2000
FEED_EVERY = 4  # files parsed here between two looks at the helpers
# records kept between two returns of freed memory to the system: each parse leaves holes
# between the records that stay (a tree is ~50 times its text), which held RSS at twice
# what the records take (2.5 KiB a generated file instead of 1.2 KiB)
TRIM_EVERY = 256
PRUNE_AFTER = 1000  # records added to --index-cache between two prunes, once built


class Entry(NamedTuple):
    """A file's summary as code.map reads it from the index (a Record: tools/warm/refs.py)
    or from a file parsed for the map alone (this)."""

    names: tuple[str, ...]  # the names it defines, in file order (Summary.names)
    words: array  # ids of the words it mentions (Summary.words, in that order)
    refs: Record | None  # None: a map's own
    stamp: int


class SymbolIndex:
    def __init__(self, ctx: ToolContext, budget: int = 0) -> None:
        self.ctx = ctx
        # whole symbols of the files code.symbols answered from, the least recently
        # used forgotten: within a share of --index-memory (this process's memory)
        self.kept: OrderedDict[str, list[Symbol]] = OrderedDict()
        self.kept_count = 0
        self.kept_limit = budget // SYMBOLS_SHARE // SYMBOL_BYTES
        self.files: dict[str, Record] = {}  # parsed code files
        self.by_name: dict[str, list[str]] = {}  # a name -> the files defining it
        self.queue: dict[str, None] = {}  # to parse, oldest first (unknown)
        self.unreadable: set[str] = set()  # unknown for good
        self.slow: set[str] = set()  # unknown: their parse ran past PARSE_SECONDS
        self.markdown: set[str] = set()  # parsed, but prose: never in a map
        self.not_code: set[str] = set()  # no language of ours, or binary
        self.word_ids: dict[str, int] = {}
        self.word_list: list[str] = []
        self.symbols = 0  # definitions in the parsed files
        self.started = False
        self.reason: str | None = None
        self.handed: dict[str, None] = {}  # given to helpers, not answered yet (unknown)
        self.helpers: Helpers | None = None
        self._first: tuple[int, int] | None = None  # files done and room at the first step
        self._untrimmed = 0  # records kept since freed memory was last given back
        self._estimated = False
        self._stored = 0  # records the helpers added to --index-cache (by their batches)
        self._pruned_at: int | None = None  # records added when it was last pruned

    @property
    def on(self) -> bool:
        return self.reason is None

    def changed(self, path: str, st: os.stat_result | None) -> None:
        """The tree saw a file appear or change (`st`) or go (None)."""
        self._drop(path)
        if st is None or not self.on:
            return
        if not maybe_code(path):
            self.not_code.add(path)
        elif st.st_nlink > 1 or st.st_size > MAX_FILE_BYTES:
            self.unreadable.add(path)
        else:
            self.queue[path] = None

    def start(self) -> None:
        """The tree is built: parsing begins, on helpers too where there are CPUs."""
        self.started = True
        if self.ctx.index_cache is not None:
            self.ctx.index_cache.prepare()  # its format key, before the helpers fork
        if Helpers.wanted():
            self.helpers = Helpers(self.ctx, Helpers.wanted())

    def step(self, seconds: float, over_budget: Callable[[], bool],
             room: Callable[[], int] | None = None) -> bool:
        """Parse queued files for about `seconds` (here and on the helpers); False once
        none is left. `room`, the bytes the budget still leaves, lets the index give up
        early when the first files say the rest will not fit."""
        if not self.started or not self.on:
            return False
        if room is not None and self._will_not_fit(room()):
            return False
        until = time.monotonic() + seconds
        self.feed()
        parsed = 0
        while self.queue and time.monotonic() < until:
            path = next(iter(self.queue))
            del self.queue[path]
            self.parse(path)
            parsed += 1
            if parsed % FEED_EVERY == 0:
                self.feed()
            if parsed % 256 == 0 and over_budget():
                return self._outgrown()
        if self.helpers is not None:
            if self.handed and not self.queue:
                self.helpers.wait(max(0.0, until - time.monotonic()))
            self._take()
            if not self.queue and not self.handed:
                self.helpers.stop()  # the build is done; a burst of changes starts them
        if over_budget():  # once a step too, whoever parsed: the helpers' files count
            return self._outgrown()
        if not (self.queue or self.handed):
            self._settled()
        return bool(self.queue or self.handed)

    def _settled(self) -> None:
        """Nothing is left to parse: --index-cache is pruned to its bound if this index
        added records to it (here or in a helper), at the first build's end, then after
        every PRUNE_AFTER more (a file edited again and again is filed each time)."""
        cache = self.ctx.index_cache
        if cache is None:
            return
        added = cache.stored + self._stored
        if self._pruned_at is None or added - self._pruned_at >= PRUNE_AFTER:
            if added > (self._pruned_at or 0):
                cache.prune()
            self._pruned_at = added

    def _will_not_fit(self, left: int) -> bool:
        """Once ESTIMATE_AFTER files are parsed: whether the files still queued would take
        more than the room left, at the memory per file the parsed ones took; if so the
        index turns off now, saying why (workspace.status's reason)."""
        done = len(self.files) + len(self.not_code)
        if self._first is None:
            self._first = (done, left)
        if self._estimated or done - self._first[0] < ESTIMATE_AFTER:
            return False
        self._estimated = True
        per_file = max(0, self._first[1] - left) / (done - self._first[0])
        waiting = len(self.queue) + len(self.handed)
        if per_file * waiting <= 2 * left:  # twice: the content index grows meanwhile
            return False
        self.drop(f"the symbol index would not fit --index-memory: the first {done} files "
                  f"took {per_file / 1024:.1f} KiB each, and {waiting} more would need "
                  f"about {per_file * waiting / 2**20:.0f} MiB with "
                  f"{max(0, left) / 2**20:.0f} MiB left; code calls parse the files that "
                  "hold the name")
        return True

    def _outgrown(self) -> bool:
        self.drop("the symbol index outgrew --index-memory; code calls parse the files "
                  "that hold the name")
        return False

    def feed(self) -> None:
        """Apply the answers of the helpers that are done and hand them the next batches:
        often, so that no helper waits for the warm process to finish a slice of its own
        work (its own parses, or the content index's reading before them)."""
        if self.helpers is not None and self.started and self.on:
            self._take()
            self._hand_out()

    def _hand_out(self) -> None:
        """BATCH files to each idle helper; the last of a build's queue shared evenly with
        this process, so that no CPU waits for the others at the end; a few files queued
        while no helper runs are parsed here (starting one costs more)."""
        helpers = self.helpers
        if helpers is None or len(self.queue) < 2 * BATCH and not helpers.running():
            return
        for helper in helpers.idle():
            size = min(BATCH, len(self.queue) // (helpers.count + 1))
            if size == 0:
                return
            batch = [path for path, _ in zip(self.queue, range(size))]
            for path in batch:
                del self.queue[path]
                self.handed[path] = None
            helpers.give(helper, batch)

    def _take(self) -> None:
        """Apply the helpers' answers, but for files reported changed since (they are
        queued again) or lost with a helper (queued again)."""
        assert self.helpers is not None
        for path, found in self.helpers.collect():
            if path not in self.handed:
                continue
            del self.handed[path]
            if found is None:
                self.queue[path] = None
            elif found[0] == SLOW:
                self.slow.add(path)
            else:
                self._stored += found[0] == "stored"
                self._keep(path, found[1])

    def parse(self, path: str) -> None:
        """Parse a queued file into the index (one too slow to parse stays unknown)."""
        try:
            found = read_local(self.ctx, path, PARSE_SECONDS)
        except Skipped:
            self.slow.add(path)
            return
        self._keep(path, found)

    def _keep(self, path: str, found: Local | None) -> None:
        if found is None:
            self.not_code.add(path)
            return
        if found.markdown:
            self.markdown.add(path)
        self._untrimmed += 1
        if self._untrimmed >= TRIM_EVERY:
            self._untrimmed = 0
            give_back()
        word_id = self.word_id
        record = self.files[path] = Record(
            found, np.fromiter(map(word_id, found.names), np.uint32, len(found.names)),
            self.word_list)
        defined = record.defined().tolist()
        words = self.word_list
        for word in dict.fromkeys(defined):
            self.by_name.setdefault(words[word], []).append(path)
        self.symbols += len(defined)

    def symbols_of(self, path: str) -> list[Symbol] | None:
        """A parsed file's whole symbols: kept, or read and parsed now (and kept, least
        recently used first out); None when its text is no longer the one parsed."""
        found = self.kept.get(path)
        if found is not None:
            self.kept.move_to_end(path)
            return found
        entry = self.files.get(path)
        data = read_candidate(self.ctx, path)
        if entry is None or data is None or zlib.crc32(data) != entry.stamp:
            return None
        found = symbols(path, data)
        if len(found) <= self.kept_limit:
            self.kept[path] = found
            self.kept_count += len(found)
        while self.kept_count > self.kept_limit:
            _, gone = self.kept.popitem(last=False)
            self.kept_count -= len(gone)
        return found

    def unknown(self) -> set[str]:
        return {*self.queue, *self.unreadable, *self.slow, *self.handed}

    def close(self) -> None:
        """Stop the helpers (the index is dropped or replaced)."""
        if self.helpers is not None:
            self.helpers.stop()
        self.handed.clear()

    def drop(self, reason: str) -> None:
        """Turn the index off for good (over budget): code calls parse what they need."""
        self.close()
        self.reason = reason
        self.files.clear()
        self.kept.clear()
        self.kept_count = 0
        self.by_name.clear()
        self.queue.clear()
        self.unreadable.clear()
        self.word_ids.clear()
        self.word_list.clear()
        self.symbols = 0

    def _drop(self, path: str) -> None:
        gone = self.kept.pop(path, None)
        self.kept_count -= 0 if gone is None else len(gone)
        self.queue.pop(path, None)
        self.handed.pop(path, None)  # a helper's answer for it is now stale
        self.unreadable.discard(path)
        self.slow.discard(path)
        self.not_code.discard(path)
        self.markdown.discard(path)
        entry = self.files.pop(path, None)
        if entry is None:
            return
        defined = entry.defined().tolist()
        self.symbols -= len(defined)
        for word in dict.fromkeys(defined):
            name = self.word_list[word]
            holders = self.by_name[name]
            holders.remove(path)
            if not holders:
                del self.by_name[name]

    def word_id(self, word: str) -> int:
        """The id of a word in `word_list` (given now if it is new)."""
        found = self.word_ids.get(word)
        if found is None:
            found = self.word_ids[word] = len(self.word_list)
            self.word_list.append(word)
        return found



def read_local(ctx: ToolContext, path: str, seconds: float | None = None) -> Local | None:
    """A code file read and parsed now, as the index keeps it; None when it is no code;
    Skipped when its parse runs past `seconds` (None: no bound; a small file is not
    timed). With --index-cache, a
    record of the same bytes is read instead of parsing them, and what is parsed is kept
    for the next server (tools/warm/record_cache.py)."""
    data = read_candidate(ctx, path)
    grammar = None if data is None else supported(path, data)
    if data is None or grammar is None:
        return None
    cache = ctx.index_cache
    budget = None if seconds is None or len(data) < BOUNDED_FROM else \
        Budget(max(len(data), MAX_FILE_BYTES), seconds)
    if cache is None:
        return local(parse_summary(grammar, path, data, budget))
    key = cache.key(data, grammar)
    kept = cache.get(key)
    if kept is None:
        kept = local(parse_summary(grammar, path, data, budget))
        cache.put(key, kept)
    return kept
