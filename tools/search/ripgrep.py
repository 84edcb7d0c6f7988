"""The ripgrep engine: `rg --json` on a fixed argv, confined, stopped as soon as it can be.

rg runs with the workspace root as its working directory (`/proc/self/fd/N` of the pinned
root) and the search path as a relative argument after `--`, with the walker's flags
(tools.walk.RG_WALK_FLAGS) except `--no-ignore-parent`: ignore files in the workspace
directories above the search path must apply, as the walker applies them; those above the
workspace are out of Landlock's reach, so rg cannot read them. Landlock
(tools.search.landlock) lets it read only beneath the search path (pinned by descriptor,
so a directory swapped for a symlink leads nowhere) and those ignore files.

rg prints files with `--sort path`, ordered by name within each directory; the reply is
ordered by the whole path as a string, as the walker orders it. The two differ only where
a directory `d` has a sibling named `d` + a character below '/' (`d.py`, `d-old`), so rg
is stopped once the first `max_results` items, in string order, can no longer change:
everything up to the last file rg finished is final unless one of that file's directories
has such a sibling, in which case only what sorts before that directory is. When nearly
every match is wanted (`UNSORTED_FROM`), rg runs unsorted on all its threads instead (it
still prints each file's messages together), everything is read, and the files are sorted
at the end, keeping only the first `max_results` items as it goes.

Stopped early, rg never says how many files it would have searched (`files_searched`): a
second rg, `--files` with the same walk, confined the same way, counts them.

A file containing a NUL anywhere contributes nothing: matches are held per file until
rg's `end` message, which reports a NUL it met (`--no-mmap`, so rg reads the whole file).
"""

from __future__ import annotations

import base64
import os
import subprocess
from typing import Any, BinaryIO

import orjson

from chorus_tools.tools import pipes
from chorus_tools.tools.mutate.atomic import TEMP_PREFIX
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.ignore import IGNORE_FILES
from chorus_tools.tools.confine.sandbox import ROOT
from chorus_tools.tools.confine import landlock
from chorus_tools.tools.search.results import (Shape, assemble, file_result, have, items,
                                               lines_without_endings)
from chorus_tools.tools.search.syntax import invalid_pattern
from chorus_tools.tools.search.target import Target, open_target
from chorus_tools.tools.walk.walk import RG_WALK_FLAGS

_WALK_FLAGS = tuple(f for f in RG_WALK_FLAGS if f != "--no-ignore-parent")
_SWAP_RETRIES = 3
# From this max_results on ("every match"), rg runs unsorted on all its threads and the
# reply is sorted at the end: measured 10-20% faster on the stdlib than --sort=path, which
# is single-threaded but can stop early, far better when few results are wanted.
UNSORTED_FROM = 100_000
_PATTERN_ERRORS = ("regex parse error", "the literal", "PCRE2", "error parsing glob",
                   "unclosed", "invalid")


class NeedsPcre2(Exception):
    """ripgrep's default engine refused a PCRE-only feature and it has no PCRE2."""


def search(ctx: ToolContext, rel: str, shown: str, target: Target, pattern: str, *,
           literal: bool, needs_pcre2: bool, case_sensitive: bool, multiline: bool,
           globs: list[str], types: tuple[str, ...], include_hidden: bool,
           include_ignored: bool, shape: Shape) -> dict[str, Any]:
    """Run rg over `rel` (`target`, opened by the caller: a directory or a file) and shape
    its output. A directory swapped away under rg is opened again, a few times."""
    rg = ctx.rg_path
    assert rg is not None, "the caller runs ripgrep only when it was found"
    for attempt in range(_SWAP_RETRIES):
        current = target if attempt == 0 else open_target(ctx, rel, shown)
        try:
            return _search_once(ctx, rg, rel, current, pattern, literal=literal,
                                needs_pcre2=needs_pcre2, case_sensitive=case_sensitive,
                                multiline=multiline, globs=globs, types=types,
                                include_hidden=include_hidden,
                                include_ignored=include_ignored, shape=shape)
        except ToolError as err:
            if not _lost_root(err, rel):
                raise
        finally:
            if current is not target:
                os.close(current.fd)
    os.close(open_target(ctx, rel, shown).fd)  # still gone or leading out: that error
    raise ToolError("file_not_found", f"The directory kept being moved or replaced while "
                    f"searching it: {shown}. Retry when it stays in place.", path=shown)


def _lost_root(err: ToolError, rel: str) -> bool:
    """rg could not open the directory it was given (by name, beneath the root): it was
    renamed away or swapped for a symlink (refused by Landlock) after we opened it."""
    return err.code == "internal_error" and str(err.details.get("reason", "")).startswith(
        f"{rel}: ")


def _search_once(ctx: ToolContext, rg: str, rel: str, target: Target, pattern: str, *,
                 literal: bool, needs_pcre2: bool, case_sensitive: bool, multiline: bool,
                 globs: list[str], types: tuple[str, ...], include_hidden: bool,
                 include_ignored: bool, shape: Shape) -> dict[str, Any]:
    walk = _walk_args(rel, globs=globs, types=types, include_hidden=include_hidden,
                      include_ignored=include_ignored, excludes=ctx.ws.deny.rg_excludes())
    argv = _argv(rg, pattern, literal=literal, pcre2=ctx.rg_has_pcre2,
                 case_sensitive=case_sensitive, multiline=multiline,
                 context=(shape.before, shape.after) if shape.wants_text else (0, 0),
                 sort=_sorted(shape)) + walk
    if not target.is_dir:
        argv[-1] = f"/proc/self/fd/{target.fd}"  # rg reads it through our descriptor
    ignore_files = _ignore_files_above(ctx, rel)
    try:
        ruleset = landlock.ruleset([target.fd, *ignore_files], rg)
        try:
            found = _run(ctx, argv, rel, target.fd, ruleset, shape, needs_pcre2)
            if found["files_searched"] is None:
                found["files_searched"] = _count_files(
                    ctx, [rg, "--files", "--no-config", *walk], target.fd,
                    ruleset) if target.is_dir else 1
            return found
        finally:
            if ruleset is not None:
                os.close(ruleset)
    finally:
        for fd in ignore_files:
            os.close(fd)


def _sorted(shape: Shape) -> bool:
    """Whether rg runs with --sort=path (and may stop early) rather than on all threads."""
    return shape.max_results < UNSORTED_FROM


def _walk_args(rel: str, *, globs: list[str], types: tuple[str, ...], include_hidden: bool,
               include_ignored: bool, excludes: list[str]) -> list[str]:
    """The files rg visits (the same for a search and for counting), ending in the path."""
    argv = [*_WALK_FLAGS]
    if include_hidden:
        argv.append("--hidden")
    if include_ignored:
        argv.append("--no-ignore")
    argv += [f"--type={t}" for t in types]
    argv += [f"--glob={g}" for g in globs]
    argv += excludes  # --deny, after the client's globs: the last matching glob wins in rg
    return argv + [f"--glob=!{TEMP_PREFIX}*", "--", rel]


def _argv(rg: str, pattern: str, *, literal: bool, pcre2: bool, case_sensitive: bool,
          multiline: bool, context: tuple[int, int], sort: bool) -> list[str]:
    """A search's options, before the walk's (`_walk_args`)."""
    argv = [rg, "--json", "--no-config", "--no-mmap",
            "--case-sensitive" if case_sensitive else "--ignore-case"]
    if sort:
        argv.append("--sort=path")
    if literal:
        argv.append("--fixed-strings")
    elif pcre2:
        argv.append("--engine=auto")
    if multiline:
        argv.append("--multiline")
    if context[0]:
        argv.append(f"--before-context={context[0]}")
    if context[1]:
        argv.append(f"--after-context={context[1]}")
    return argv + [f"--regexp={pattern}"]


def _ignore_files_above(ctx: ToolContext, rel: str) -> list[int]:
    """O_PATH descriptors of the ignore files in the workspace directories above `rel`."""
    fds = []
    parts = [] if rel == ROOT else rel.split("/")[:-1]
    for depth in range(len(parts) + 1):
        directory = "/".join(parts[:depth]) or ROOT
        for name in IGNORE_FILES:
            try:
                fds.append(ctx.ws.open(f"{directory}/{name}", os.O_PATH))
            except ToolError:
                continue
    return fds


def _run(ctx: ToolContext, argv: list[str], rel: str, target_fd: int,
         ruleset: int | None, shape: Shape, needs_pcre2: bool) -> dict[str, Any]:
    # in memory: a worker under Landlock may create no file outside the workspace
    with os.fdopen(os.memfd_create("rg-stderr"), "w+b") as errors:
        proc, output = _start(ctx, argv, target_fd, ruleset, errors)
        reader = _Reader(ctx, rel, target_fd, shape)
        try:
            for line in output:
                if reader.feed(line):
                    break
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            output.close()
        errors.seek(0)
        stderr = errors.read().decode("utf-8", "replace")
        if not reader.finished and not reader.stopped:
            ctx.ws.ensure_present()  # rg cannot start in a deleted directory
            _raise_failure(stderr, needs_pcre2)
        lost = [ln for ln in stderr.splitlines() if ln.startswith(f"rg: {rel}: ")]
        if lost:  # rg could not open its root, yet says it finished: not an empty result
            _raise_failure(lost[0], needs_pcre2)
    return assemble(reader.results(), shape, "ripgrep", reader.searches)


def _count_files(ctx: ToolContext, argv: list[str], target_fd: int,
                 ruleset: int | None) -> int:
    """How many files `rg --files` lists: the newlines of its output, never stored."""
    proc, output = _start(ctx, argv, target_fd, ruleset, subprocess.DEVNULL)
    with output:
        count = sum(chunk.count(b"\n") for chunk in iter(lambda: output.read(1 << 16), b""))
    proc.wait()
    return count


def _start(ctx: ToolContext, argv: list[str], target_fd: int, ruleset: int | None,
           errors: Any) -> tuple[subprocess.Popen, BinaryIO]:
    """rg confined (see the module doc), writing into a wide pipe: it runs ahead while
    its output is folded instead of stalling on a full 64 KiB pipe."""
    parent = os.getpid()
    read_end, write_end = pipes.wide_pipe()
    try:
        proc = subprocess.Popen(
            argv, cwd=f"/proc/self/fd/{ctx.ws.root_fd}", stdin=subprocess.DEVNULL,
            stdout=write_end, stderr=errors, env={}, pass_fds=(target_fd,),
            preexec_fn=lambda: landlock.confine(ruleset, parent))
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    return proc, os.fdopen(read_end, "rb")


def _raise_failure(stderr: str, needs_pcre2: bool) -> None:
    reason = "\n".join(ln.removeprefix("rg: ") for ln in stderr.strip().splitlines())
    if "--pcre2" in reason and not needs_pcre2:
        raise NeedsPcre2(reason)
    if any(key in reason for key in _PATTERN_ERRORS):
        raise invalid_pattern(reason)
    raise ToolError("internal_error", f"ripgrep failed: {reason or 'no reason given'}",
                    reason=reason)


class _Reader:
    """Folds rg's JSON messages into file results; says when to stop reading."""

    def __init__(self, ctx: ToolContext, rel: str, target_fd: int, shape: Shape) -> None:
        self.ctx = ctx
        self.shape = shape
        self.wants_text = shape.wants_text
        self.rel = rel
        self.file_arg = f"/proc/self/fd/{target_fd}"
        self.needed = shape.max_results + 1
        self.sorted = _sorted(shape)
        self.done: list[dict[str, Any]] = []
        self.count = 0  # reply items in `done`
        self.finished = self.stopped = False
        self.searches: int | None = None  # files rg searched: its summary says
        self._siblings: dict[str, list[str]] = {}
        self._start_file()

    def _start_file(self) -> None:
        self.spans: list[tuple[int, int]] = []
        self.lines: dict[int, str] = {}

    def feed(self, raw: bytes) -> bool:
        """Take one message; True when the reply can no longer change."""
        if raw.startswith(b'{"type":"begin"'):
            return False  # nothing to take from it: spare the parse
        msg = orjson.loads(raw)
        kind, data = msg["type"], msg["data"]
        if kind == "match" or kind == "context":
            self._lines(data, kind == "match")
        elif kind == "end":
            if data["binary_offset"] is None:
                self._finish_file(_path(data["path"]))
            self._start_file()
            if not self.sorted:
                if self.count > 2 * self.needed:
                    self._keep_first()
                return False
            return self.count >= self.needed and self._settled()
        elif kind == "summary":
            self.finished = True
            self.searches = data["stats"]["searches"]
        return False

    def _lines(self, data: dict[str, Any], is_match: bool) -> None:
        first = data["line_number"]
        texts = lines_without_endings(_text(data["lines"]))
        spans = self.spans
        if is_match:
            spans.append((first, first + max(len(texts), 1) - 1))
        if not self.wants_text or (len(spans) > self.needed and first > spans[
                self.needed - 1][1] + self.shape.after):
            return
        if len(texts) == 1:  # the usual message: one line
            self.lines[first] = texts[0]
            return
        for offset, text in enumerate(texts):
            self.lines[first + offset] = text

    def _finish_file(self, path: str) -> None:
        if path == self.file_arg:
            path = self.rel
        elif path.startswith("./"):
            path = path[2:]
        if self.ctx.ws.deny.denies(path):
            return  # --deny: whatever rg's own excludes missed never reaches the reply
        found = file_result(path, self.spans, self.lines, self.shape, self.needed)
        if found is not None:
            self.done.append(found)
            self.count += items(found, self.shape)

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

    def results(self) -> list[dict[str, Any]]:
        """The files in the reply's order; after an early stop, only the settled ones."""
        ordered = sorted(self.done, key=lambda r: r["path"])
        if self.finished or not self.done:
            return ordered
        bound = self._bound()
        return [r for r in ordered if r["path"] <= bound]

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
