"""One ripgrep run, confined: its argv, its process, its output folded by a Reader and its
stderr read so that no failure passes for an empty result (tools/search/rg_errors.py).

rg runs with the workspace root as its working directory (`/proc/self/fd/N` of the pinned
root) under Landlock (tools/confine/landlock.py), so it reads only beneath the search path
and the ignore files above it, and dies with its worker (a cancelled or timed-out call
kills the worker, and so rg at once).
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from chorus_tools.tools import pipes
from chorus_tools.tools.confine import launcher
from chorus_tools.tools.confine.sandbox import ROOT
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.confine.reserved import TEMP_PREFIX
from chorus_tools.tools.search.rg_errors import (SHOWN_FALLBACKS, PathError, path_errors,
                                                 raise_failure, unread_directory,
                                                 whole_failure)
from chorus_tools.tools.search.rg_output import Output
from chorus_tools.tools.search.rg_reader import Reader
from chorus_tools.tools.walk.ignore import IGNORE_FILES
from chorus_tools.tools.walk.walk import RG_WALK_FLAGS

_WALK_FLAGS = tuple(f for f in RG_WALK_FLAGS if f != "--no-ignore-parent")
Fallback = Callable[[list[str]], list[dict[str, Any]]]  # the python engine on some files
# what rg prints: each line (-n), a count per file (-c) or names (-l)
KIND_FLAGS = {"lines": "--line-number", "counts": "--count", "names": "--files-with-matches"}


@dataclass(frozen=True)
class Query:
    """What one search asks of every rg it runs."""

    pattern: str
    literal: bool
    needs_pcre2: bool
    case_sensitive: bool
    multiline: bool
    globs: list[str]
    types: tuple[str, ...]
    include_hidden: bool
    include_ignored: bool


@dataclass
class Failures:
    """Files rg could not search, searched by the python engine instead (`fallback`)."""

    count: int = 0
    named: list[PathError] | None = None


# rg refuses a context count past 64 bits; any larger one means the same (no file has
# that many lines), so it reaches rg as this
RG_MAX_CONTEXT = 2**64 - 1


def walk_args(query: Query, rel: str, excludes: list[str]) -> list[str]:
    """The files rg visits (the same for a search and for counting), ending in the path."""
    argv = [*_WALK_FLAGS]
    if query.include_hidden:
        argv.append("--hidden")
    if query.include_ignored:
        argv.append("--no-ignore")
    argv += [f"--type={t}" for t in query.types]
    argv += [f"--glob={g}" for g in query.globs]
    argv += excludes  # --deny, after the client's globs: the last matching glob wins in rg
    return argv + [f"--glob=!{TEMP_PREFIX}*", "--", rel]


def search_args(rg: str, query: Query, *, pcre2: bool, kind: str,
                context: tuple[int, int], sort: bool) -> list[str]:
    """A search's options, before the files (`walk_args`, or names after `--`)."""
    argv = [rg, KIND_FLAGS[kind], "--null", "--with-filename", "--stats", "--no-config",
            "--no-mmap", "--no-context-separator",
            "--case-sensitive" if query.case_sensitive else "--ignore-case"]
    if sort:
        argv.append("--sort=path")
    if query.literal:
        argv.append("--fixed-strings")
    elif pcre2:
        argv.append("--engine=auto")
    # line by line, CRLF is the line terminator: `$` matches before `\r\n` (docs/protocol.md)
    argv.append("--multiline" if query.multiline else "--crlf")
    before, after = (min(lines, RG_MAX_CONTEXT) for lines in context)
    if before:
        argv.append(f"--before-context={before}")
    if after:
        argv.append(f"--after-context={after}")
    return argv + [f"--regexp={query.pattern}"]


def ignore_files_above(ctx: ToolContext, rel: str) -> list[int]:
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


def run(ctx: ToolContext, argv: list[str], reader: Reader, kind: str, ruleset: int | None,
        needs_pcre2: bool, fallback: Fallback, failures: Failures, *,
        wide: bool = True) -> None:
    """Run rg and fold its output into `reader` until it ends or the reply is settled;
    a file rg could not search goes through `fallback` (counted in `failures`)."""
    # in memory: a worker under Landlock may create no file outside the workspace
    with os.fdopen(os.memfd_create("rg-stderr"), "w+b") as errors:
        proc, output = start(ctx, argv, reader.target_fd, ruleset, errors, wide=wide)
        try:
            reader.take(Output(output.fileno(), patient=not reader.sorted), kind)
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
            failures.named = (failures.named or []) + [error][:SHOWN_FALLBACKS - len(
                failures.named or [])]
        failures.count += failed
        if not failed and proc.returncode == 2 and not reader.stopped:
            raise_failure("rg exited with status 2 without saying why", needs_pcre2)


def _kind(ctx: ToolContext, rel: str) -> str:
    """'gone', 'dir' or 'file' (any other entry, a denied one included)."""
    try:
        return "dir" if stat.S_ISDIR(ctx.ws.lstat(rel).st_mode) else "file"
    except ToolError as err:
        return "gone" if err.code == "file_not_found" else "file"


def count_files(ctx: ToolContext, argv: list[str], target_fd: int,
                ruleset: int | None, denied: Callable[[str], bool]) -> int:
    """How many files `rg --files --null` lists (a name may hold a newline), leaving out
    those --deny's root-anchored rules deny (rg cannot apply them: tools.confine.deny),
    judged by `denied` where they really are (the search may start at a symlink); the
    list itself is never stored."""
    proc, output = start(ctx, argv, target_fd, ruleset, subprocess.DEVNULL)
    with output:
        if ctx.ws.deny.all_in_rg():
            count = sum(chunk.count(b"\0") for chunk in iter(lambda: output.read(1 << 16), b""))
        else:
            count = sum(not denied(os.fsdecode(name).removeprefix("./"))
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


def start(ctx: ToolContext, argv: list[str], target_fd: int, ruleset: int | None,
          errors: Any, *, wide: bool = True) -> tuple[subprocess.Popen, BinaryIO]:
    """rg confined (see the module doc), writing into a pipe: a wide one lets it run ahead
    while its output is folded; a search that will stop early keeps the kernel's 64 KiB,
    so that rg has done little past what the reply needs when it is stopped.

    Launched through perl when it is there (tools/confine/launcher.py: a vfork, not a fork
    of the worker), else confined by a `preexec_fn`."""
    read_end, write_end = pipes.wide_pipe() if wide else os.pipe2(os.O_CLOEXEC)
    try:
        proc = launcher.popen(argv, ruleset, (target_fd,), cwd=f"/proc/self/fd/"
                              f"{ctx.ws.root_fd}", stdin=subprocess.DEVNULL,
                              stdout=write_end, stderr=errors, env={})
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    return proc, os.fdopen(read_end, "rb")
