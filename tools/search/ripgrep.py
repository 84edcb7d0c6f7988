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

import os
import stat
import subprocess
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from chorus_tools.tools import pipes
from chorus_tools.tools.mutate.atomic import TEMP_PREFIX
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.ignore import IGNORE_FILES
from chorus_tools.tools.confine.sandbox import ROOT
from chorus_tools.tools.confine import landlock
from chorus_tools.tools.search.results import Shape, assemble
from chorus_tools.tools.search.rg_errors import (SHOWN_FALLBACKS, PathError, fallback_note,
                                                 path_errors, raise_failure,
                                                 unread_directory, whole_failure)
from chorus_tools.tools.search.rg_messages import messages
from chorus_tools.tools.search.rg_reader import Reader
from chorus_tools.tools.search.target import Target, open_target
from chorus_tools.tools.walk.walk import RG_WALK_FLAGS
from chorus_tools.tools.warm.selection import Selection

_WALK_FLAGS = tuple(f for f in RG_WALK_FLAGS if f != "--no-ignore-parent")
_SWAP_RETRIES = 3
# From this max_results on ("every match"), rg runs unsorted on all its threads and the
# reply is sorted at the end: measured 10-20% faster on the stdlib than --sort=path, which
# is single-threaded but can stop early, far better when few results are wanted.
UNSORTED_FROM = 100_000
Fallback = Callable[[list[str]], list[dict[str, Any]]]  # the python engine on some files


def search(ctx: ToolContext, rel: str, shown: str, target: Target, pattern: str, *,
           literal: bool, needs_pcre2: bool, case_sensitive: bool, multiline: bool,
           globs: list[str], types: tuple[str, ...], include_hidden: bool,
           include_ignored: bool, shape: Shape, fallback: Fallback,
           only: Selection | None = None) -> dict[str, Any]:
    """Run rg over `rel` (`target`, opened by the caller: a directory or a file) and shape
    its output; a file rg could not search goes to `fallback` (tools.search.rg_errors).
    With `only` (the warm index's candidates) rg searches those files by name instead of
    walking, and the reply counts every file the query covers.
    A directory swapped away under rg is opened again, a few times."""
    if only is not None and not only.files:
        ctx.ws.ensure_present()  # as rg would: it cannot start in a deleted workspace
        return assemble([], shape, "ripgrep", only.total)
    rg = ctx.rg_path
    assert rg is not None, "the caller runs ripgrep only when it was found"
    for attempt in range(_SWAP_RETRIES):
        current = target if attempt == 0 else open_target(ctx, rel, shown)
        try:
            return _search_once(ctx, rg, rel, current, pattern, literal=literal,
                                needs_pcre2=needs_pcre2, case_sensitive=case_sensitive,
                                multiline=multiline, globs=globs, types=types,
                                include_hidden=include_hidden,
                                include_ignored=include_ignored, shape=shape,
                                fallback=fallback, only=only)
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
                 include_ignored: bool, shape: Shape, fallback: Fallback,
                 only: Selection | None) -> dict[str, Any]:
    walk = _walk_args(rel, globs=globs, types=types, include_hidden=include_hidden,
                      include_ignored=include_ignored, excludes=ctx.ws.deny.rg_excludes())
    named = walk if only is None else ["--", *(only.files or ())]
    sort = _sorted(shape)
    argv = _argv(rg, pattern, literal=literal, pcre2=ctx.rg_has_pcre2,
                 case_sensitive=case_sensitive, multiline=multiline,
                 context=(shape.before, shape.after) if shape.wants_text else (0, 0),
                 sort=sort) + named
    if not target.is_dir:
        argv[-1] = f"/proc/self/fd/{target.fd}"  # rg reads it through our descriptor
    ignore_files = _ignore_files_above(ctx, rel)
    try:
        ruleset = landlock.ruleset([target.fd, *ignore_files], rg)
        try:
            found = _run(ctx, argv, Reader(ctx, rel, target.fd, shape, sort), ruleset,
                         needs_pcre2, fallback)
            if only is not None:
                found["files_searched"] = only.total
            elif target.is_dir and (found["files_searched"] is None
                                    or not ctx.ws.deny.all_in_rg()):
                found["files_searched"] = _count_files(
                    ctx, [rg, "--files", "--null", "--no-config", *walk], target.fd,
                    ruleset)
            elif found["files_searched"] is None:
                found["files_searched"] = 1
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


def _run(ctx: ToolContext, argv: list[str], reader: Reader, ruleset: int | None,
         needs_pcre2: bool, fallback: Fallback) -> dict[str, Any]:
    # in memory: a worker under Landlock may create no file outside the workspace
    with os.fdopen(os.memfd_create("rg-stderr"), "w+b") as errors:
        proc, output = _start(ctx, argv, reader.target_fd, ruleset, errors)
        try:
            for message in messages(output):
                if reader.feed(message):
                    break
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            output.close()
        if not reader.finished and not reader.stopped:
            ctx.ws.ensure_present()  # rg cannot start in a deleted directory
            raise_failure(whole_failure(errors), needs_pcre2)
        bound = reader.bound()  # what rg printed past it is not in the reply
        failed = 0
        named: list[PathError] = []
        for error in path_errors(errors, reader.beneath, lambda p: _kind(ctx, p) != "gone"):
            if reader.denied(error.path) or (bound is not None and error.path > bound):
                continue
            if _kind(ctx, error.path) == "dir":
                raise unread_directory(error.path, error.reason)
            reader.add(fallback([error.path]))
            reader.prune()
            failed += 1
            if reader.searches is not None:  # rg counts the searches that succeeded
                reader.searches += 1
            named += [error][:SHOWN_FALLBACKS - len(named)]
        if not failed and proc.returncode == 2 and not reader.stopped:
            raise_failure("rg exited with status 2 without saying why", needs_pcre2)
    found = assemble(reader.results(bound), reader.shape, "ripgrep", reader.searches)
    if failed:
        found["fallback"] = fallback_note(failed, named)
    return found


def _kind(ctx: ToolContext, rel: str) -> str:
    """'gone', 'dir' or 'file' (any other entry, a denied one included)."""
    try:
        return "dir" if stat.S_ISDIR(ctx.ws.lstat(rel).st_mode) else "file"
    except ToolError as err:
        return "gone" if err.code == "file_not_found" else "file"


def _count_files(ctx: ToolContext, argv: list[str], target_fd: int,
                 ruleset: int | None) -> int:
    """How many files `rg --files --null` lists (a name may hold a newline), leaving out
    those --deny's root-anchored rules deny (rg cannot apply them: tools.confine.deny);
    the list itself is never stored."""
    proc, output = _start(ctx, argv, target_fd, ruleset, subprocess.DEVNULL)
    with output:
        if ctx.ws.deny.all_in_rg():
            count = sum(chunk.count(b"\0") for chunk in iter(lambda: output.read(1 << 16), b""))
        else:
            count = sum(not ctx.ws.deny.denies(os.fsdecode(name).removeprefix("./"))
                        for name in _names(output) if name)
    proc.wait()
    return count


def _names(output: BinaryIO) -> Iterator[bytes]:
    """NUL-separated names read in chunks."""
    rest = b""
    for chunk in iter(lambda: output.read(1 << 16), b""):
        *names, rest = (rest + chunk).split(b"\0")
        yield from names
    yield rest


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
