"""Folds rg's output (tools/search/rg_output.py) into the reply's file results, and says
when the reply can no longer change so that rg is stopped (the ordering it relies on is
described in tools.search.ripgrep).

A file's lines are held until its records end (a binary note after them drops it); of
them, only what the reply can show is kept, and as it shows it (results.Spans, lines cut
to max_line_chars), so memory follows the reply, not the lines searched.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Iterable
from functools import cached_property
from typing import Any

from chorus_tools.tools.confine.sandbox import ROOT
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.search.results import (Shape, Spans, cut_line, file_result, have,
                                               items)
from chorus_tools.tools.search.rg_output import Long, Output, counts, groups, names


_AT_COLON = operator.methodcaller("partition", ":")  # "12:line" -> ("12", ":", "line")
_PATH = operator.itemgetter("path")


class Reader:
    """Folds rg's records into file results; says when to stop reading."""

    def __init__(self, ctx: ToolContext, rel: str, target_fd: int, shape: Shape,
                 sort: bool) -> None:
        self.ctx = ctx
        self.shape = shape
        self.wants_text = shape.wants_text
        # each record is one entry: content without context, matches on one line each
        self.plain = shape.wants_text and not (shape.before or shape.after
                                               or shape.merge_adjacent)
        self.rel = rel
        self.file_arg = f"/proc/self/fd/{target_fd}"
        self.target_fd = target_fd
        self.needed = shape.max_results + 1
        self.sorted = sort  # rg prints files in order (else unsorted, read to the end)
        self.done: list[dict[str, Any]] = []
        self.count = 0  # reply items in `done`
        self.finished = self.stopped = False
        self.searches: int | None = None  # files rg searched: its stats say
        self._siblings: dict[str, list[str]] = {}

    # what rg printed ------------------------------------------------------------------

    def take(self, out: Output, kind: str) -> bool:
        """Read rg's output of `kind` (lines, counts or names) to its end, or until the
        reply can no longer change (True)."""
        if kind == "lines":
            found = self._lines(out)
        else:
            blocks = counts(out) if kind == "counts" else (
                [(name, "1") for name in block] for block in names(out))
            found = any(self._whole(block) for block in blocks)
        if not found:  # rg's stats at the end say it searched everything
            self.finished = out.searched is not None
            self.searches = out.searched
        return found

    def _lines(self, out: Output) -> bool:
        """rg -n's records folded a file at a time (a file's records come together; a
        search may print a hundred thousand files of a few records each, so the work per
        file is kept to a few calls)."""
        fold = self._plain if self.plain else self._spans
        path: str | None = None
        held: Any = None
        binary = False
        for name, records in groups(out, self.shape.max_line_chars, self.wants_text):
            if name != path:
                if path is not None and not binary and self._file(path, held):
                    return True
                path, binary = name, False
                held = ([], 0) if self.plain else (
                    Spans(self.shape.merge_adjacent, self.needed, self.shape.after), {})
            if records is None:  # BINARY
                binary = True
            else:
                held = fold(held, records)
        return path is not None and not binary and self._file(path, held)

    def _plain(self, held: tuple[list[tuple[int, str]], int],
               records: list[str] | Long) -> tuple[list[tuple[int, str]], int]:
        """Match lines of one file, each one entry: only those the reply can show are
        read, as it shows them. `held`: (entries, matching lines)."""
        entries, matched = held
        if isinstance(records, Long):
            if len(entries) < self.needed:
                entries.append((records.number, records.text))
            return entries, matched + 1
        room = self.needed - len(entries)
        if room > 0:
            taken = records[:room] if room < len(records) else records
            keep = self.shape.max_line_chars
            # tuples: lists are tracked by the garbage collector, whose passes over
            # millions of them cost more than building them
            if max(map(len, taken)) <= keep:  # no line to cut: at C speed
                entries += [(int(number), line) for number, _, line in map(_AT_COLON, taken)]
            else:
                for number, _, line in map(_AT_COLON, taken):
                    entries.append((int(number), cut_line(line, keep)))
        return entries, matched + len(records)

    def _spans(self, held: tuple[Spans, dict[int, str]],
               records: list[str] | Long) -> tuple[Spans, dict[int, str]]:
        """Records of one file with context or multiline matches: their spans, and the
        text of the lines the reply can show. `held`: (spans, lines)."""
        if isinstance(records, Long):
            self._record(held, records.number, records.is_match, records.text)
            return held
        for record in records:
            digits, sep, line = record.partition(":")
            if not digits.isdigit():
                digits, sep, line = record.partition("-")
            self._record(held, int(digits), sep == ":", line)
        return held

    def _record(self, held: tuple[Spans, dict[int, str]], number: int, is_match: bool,
                line: str) -> None:
        spans, lines = held
        if is_match:
            spans.add((number, number))
        if self.wants_text and spans.wanted(number):
            lines[number] = cut_line(line, self.shape.max_line_chars)

    def _whole(self, block: list[tuple[str, str]]) -> bool:
        """Files rg reported whole (-c, -l: path and count), a block of them; True when the
        reply can no longer change. Unsorted, at C speed: every one is read anyway."""
        if self.sorted:
            return any(self._file(path, ([], int(count))) for path, count in block)
        found = [{"path": path.removeprefix("./"), "entries": (), "count": int(count)}
                 for path, count in block]
        if self._deny:  # what rg's own excludes missed
            found = [f for f in found if not self.denied(f["path"])]
        self.done += found
        self.count += len(found)
        self.prune()
        return False

    def _file(self, path: str, held: Any) -> bool:
        """A file whose records are complete (and not binary) into the reply; True when
        the reply can no longer change."""
        name = self.rel if path == self.file_arg else path.removeprefix("./")
        if self._deny and self.denied(name):  # what rg's own excludes missed
            return False
        if isinstance(held[0], list):  # plain, or a file rg counted whole
            entries, count = held
            if not count:
                return False
            found: dict[str, Any] | None = {"path": name, "entries": entries, "count": count}
        else:
            spans, lines = held
            found = file_result(name, spans.kept, lines, self.shape, self.needed,
                                spans.more_lines)
        self.add([found])
        return self._enough()

    def _enough(self) -> bool:
        if not self.sorted:
            self.prune()
            return False
        return self.count >= self.needed and self._settled()

    # paths --------------------------------------------------------------------------

    def beneath(self, printed: str) -> str | None:
        """A path rg printed on stderr, workspace-relative when it lies beneath the
        search (the file searched, for a file); None for the search's own directory
        and for what names no path of the search."""
        if printed == self.file_arg:
            return self.rel
        if self.rel == ROOT:
            return printed[2:] if printed.startswith("./") and len(printed) > 2 else None
        return printed if printed.startswith(f"{self.rel}/") else None

    def denied(self, path: str) -> bool:
        """--deny, as named or resolved: whatever rg's own excludes missed never reaches
        the reply."""
        return bool(self.ctx.ws.deny) and (self.ctx.ws.deny.denies(path)
                                           or self.ctx.ws.deny.denies(self._resolved(path)))

    def _resolved(self, path: str) -> str:
        """Where a file rg names really is: the search path may be reached through a
        symlink ('seclink' -> 'secrets'), and --deny judges the resolved path."""
        if self.rel == ROOT:
            return path
        if path == self.rel:
            return self._real_rel
        beneath = path[len(self.rel) + 1:]
        return f"{self._real_rel}/{beneath}" if self._real_rel else beneath

    @cached_property
    def _deny(self) -> bool:
        return bool(self.ctx.ws.deny)

    @cached_property
    def _real_rel(self) -> str:
        return self.ctx.ws.where(self.target_fd, self.rel)

    # the reply ----------------------------------------------------------------------

    def add(self, results: Iterable[dict[str, Any] | None]) -> None:
        """File results into the reply (a file rg finished, or the fallback's)."""
        for found in results:
            if found is not None:
                self.done.append(found)
                self.count += items(found, self.shape)

    def prune(self) -> None:
        """Keep no more files than the reply can show (after rg ran: see _keep_first)."""
        if self.count > 2 * self.needed:
            self._keep_first()

    def _keep_first(self) -> None:
        """Unsorted: drop the files past the first `needed` items in path order, which no
        later file can bring back into the reply (memory stays bounded)."""
        self.done.sort(key=_PATH)
        count = 0
        for i, result in enumerate(self.done):
            if count >= self.needed:
                del self.done[i:]
                break
            count += items(result, self.shape)
        self.count = count

    def bound(self) -> str | None:
        """After an early stop, the last path that is final (None: every one is)."""
        return None if self.finished or not self.done else self._bound()

    def results(self, bound: str | None) -> list[dict[str, Any]]:
        """The files in the reply's order, up to `bound`."""
        ordered = sorted(self.done, key=_PATH)
        return ordered if bound is None else [r for r in ordered if r["path"] <= bound]

    def _settled(self) -> bool:
        bound = self._bound()
        self.stopped = have([r for r in self.done if r["path"] <= bound],
                            self.shape) >= self.needed
        return self.stopped

    def _bound(self) -> str:
        """No file rg prints later sorts before this path (see the module doc)."""
        last = self.done[-1]["path"]
        root = "" if self.rel == ROOT else self.rel + "/"
        parts = last[len(root):].split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            directory = root + "/".join(parts[:depth])
            parent, _, name = directory.rpartition("/")
            if any(s.startswith(name) and len(s) > len(name) and s[len(name)] < "/"
                   for s in self._names(parent or ROOT)):
                return directory
        return last

    def _names(self, directory: str) -> list[str]:
        if directory not in self._siblings:
            try:
                fd = self.ctx.ws.open_dir(directory)
            except ToolError:
                self._siblings[directory] = []
            else:
                try:
                    self._siblings[directory] = os.listdir(fd)
                finally:
                    os.close(fd)
        return self._siblings[directory]
