"""Folds rg's `--json` messages into the reply's file results, and says when the reply
can no longer change so that rg is stopped (the ordering it relies on is described in
tools.search.ripgrep).

A file's matches are held until rg's `end` message for it (a NUL met makes it binary: it
contributes nothing); of them, only what the reply can show is kept, and as it shows it
(results.Spans, lines cut to max_line_chars), so memory follows the reply, not the lines
searched. A message too long to hold arrives as a `Long` (tools.search.rg_messages) whose
lines are read from the file itself.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterable
from functools import cached_property
from typing import Any

import orjson

from chorus_tools.tools.confine.sandbox import ROOT
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.search.results import (
    Shape,
    Spans,
    cut_line,
    file_result,
    have,
    items,
    lines_without_endings,
)
from chorus_tools.tools.search.rg_messages import Long, read_lines


class Reader:
    """Folds rg's JSON messages into file results; says when to stop reading."""

    def __init__(self, ctx: ToolContext, rel: str, target_fd: int, shape: Shape,
                 sort: bool) -> None:
        self.ctx = ctx
        self.shape = shape
        self.wants_text = shape.wants_text
        self.rel = rel
        self.file_arg = f"/proc/self/fd/{target_fd}"
        self.target_fd = target_fd
        self.needed = shape.max_results + 1
        self.sorted = sort  # rg runs with --sort=path (else unsorted, read to the end)
        self.done: list[dict[str, Any]] = []
        self.count = 0  # reply items in `done`
        self.finished = self.stopped = False
        self.searches: int | None = None  # files rg searched: its summary says
        self._siblings: dict[str, list[str]] = {}
        self._start_file()

    def _start_file(self) -> None:
        self.spans = Spans(self.shape.merge_adjacent, self.needed, self.shape.after)
        self.lines: dict[int, str] = {}  # as shown: cut to max_line_chars

    def feed(self, raw: bytes | Long) -> bool:
        """Take one message; True when the reply can no longer change."""
        if isinstance(raw, Long):
            self._lines(raw.line_number, self._read(raw), raw.kind == "match")
            return False
        if raw.startswith(b'{"type":"begin"'):
            return False  # nothing to take from it: spare the parse
        msg = orjson.loads(raw)
        kind, data = msg["type"], msg["data"]
        if kind == "match" or kind == "context":
            self._lines(data["line_number"], lines_without_endings(_text(data["lines"])),
                        kind == "match")
        elif kind == "end":
            if data["binary_offset"] is None:
                self._finish_file(_path(data["path"]))
            self._start_file()
            if not self.sorted:
                self.prune()
                return False
            return self.count >= self.needed and self._settled()
        elif kind == "summary":
            self.finished = True
            self.searches = data["stats"]["searches"]
        return False

    def _lines(self, first: int, texts: list[str], is_match: bool) -> None:
        """One message's lines from `first` on; their text kept only while the reply
        can show it, and only as much of it as it shows."""
        spans = self.spans
        if is_match:
            spans.add((first, first + max(len(texts), 1) - 1))
        if not self.wants_text or not spans.wanted(first):
            return
        keep = self.shape.max_line_chars
        if len(texts) == 1:  # the usual message: one line
            self.lines[first] = cut_line(texts[0], keep)
            return
        for offset, text in enumerate(texts):
            self.lines[first + offset] = cut_line(text, keep)

    def _read(self, message: Long) -> list[str]:
        """The lines of a message too long to hold, read from the file itself (see
        tools.search.rg_messages); a file gone since shows one empty line."""
        last = message.offset + max(message.last_end - 1, 0)
        try:
            fd, _ = self.ctx.ws.open_regular(self._name(_path(message.path)))
        except ToolError:
            return [""]
        try:
            return read_lines(fd, message.offset, last, self.shape.max_line_chars)
        finally:
            os.close(fd)

    def _name(self, path: str) -> str:
        """A path as rg prints it, workspace-relative."""
        if path == self.file_arg:
            return self.rel
        return path.removeprefix("./")

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

    def _finish_file(self, path: str) -> None:
        path = self._name(path)
        if self.denied(path):
            return
        self.add([file_result(path, self.spans.kept, self.lines, self.shape, self.needed,
                              self.spans.more_lines)])

    def add(self, results: Iterable[dict[str, Any] | None]) -> None:
        """File results into the reply (a file rg finished, or the fallback's)."""
        for found in results:
            if found is not None:
                self.done.append(found)
                self.count += items(found, self.shape)

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
    def _real_rel(self) -> str:
        return self.ctx.ws.where(self.target_fd, self.rel)

    def prune(self) -> None:
        """Keep no more files than the reply can show (after rg ran: see _keep_first)."""
        if self.count > 2 * self.needed:
            self._keep_first()

    def _keep_first(self) -> None:
        """Unsorted: drop the files past the first `needed` items in path order, which no
        later file can bring back into the reply (memory stays bounded)."""
        self.done.sort(key=lambda r: r["path"])
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
        ordered = sorted(self.done, key=lambda r: r["path"])
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


def _path(field: dict[str, str]) -> str:
    """A path as the walker names it: bytes that are not UTF-8 kept as surrogates."""
    if "text" in field:
        return field["text"]
    return os.fsdecode(base64.b64decode(field["bytes"]))


def _text(field: dict[str, str]) -> str:
    """rg's {"text": ...} or {"bytes": base64} as the client sees it."""
    if "text" in field:
        return field["text"]
    return base64.b64decode(field["bytes"]).decode("utf-8", "replace")
