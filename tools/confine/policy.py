"""What the server's options forbid, checked in the worker before a tool runs: under
`--read-only` every mutating method, under `--deny` every call naming a denied path, as
given or where its symlinks lead.

The same rules hold deeper down, for what no parameter names: Workspace.open refuses a
denied path whatever reaches it (a symlinked parent included), the walker and ripgrep's
reader leave denied entries out, and a move or recursive delete refuses a tree holding one.
"""

from __future__ import annotations

import os

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.confine.deny import denied, read_only
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.task import Task
from chorus_tools.tools.walk.fdwalk import fwalk


def guard(ctx: ToolContext, task: Task) -> None:
    """Raise permission_denied when the options forbid this call. Jobs that are no
    method of their own (fan-out parts, audit hashes) name no path and change nothing:
    they belong to a call checked already."""
    if ctx.read_only and task.mutating:
        raise read_only()
    if ctx.ws.deny:
        for given, rel in task.paths.items():
            _check_path(ctx, given, rel)


def _check_path(ctx: ToolContext, given: str, rel: str) -> None:
    try:
        if ctx.ws.deny.denies(rel) or ctx.ws.deny.denies(real_place(ctx, rel, given)):
            raise denied(given)
    except ToolError as err:
        if err.code == "permission_denied":
            raise
        # a path the tool itself refuses (outside, malformed): its own error says why


def real_place(ctx: ToolContext, rel: str, shown: str) -> str:
    """Where `rel` really is: its deepest existing directory where the kernel reaches it
    (a symlinked directory on the way resolved: `seclink/key.txt` with `seclink` ->
    `secrets` is `secrets/key.txt`), the names after it as given, then a chain of
    symlinks at its last component followed. Opening that directory refuses it if it
    lies beneath a denied one."""
    parts = rel.split("/")
    for cut in range(len(parts) - 1, 0, -1):
        head = "/".join(parts[:cut])
        try:
            fd = ctx.ws.open(head, os.O_PATH | os.O_DIRECTORY, shown=shown)
        except ToolError as err:
            if err.code == "file_not_found":
                continue  # made by the call (create_dirs): judged by the names given
            raise
        try:
            where = ctx.ws.where(fd, head)
        finally:
            os.close(fd)
        rel = "/".join([where, *parts[cut:]] if where else parts[cut:])
        break
    return ctx.ws.resolve_symlinks(rel, shown=shown)


def refuse_denied_entry(ctx: ToolContext, dir_fd: int, name: str, rel: str,
                        shown: str) -> None:
    """Judge entry `name` of the directory a change holds open (the call's `rel`) where
    it really is: the check before the call ran (`guard`) can be overtaken by a symlinked
    parent swapped in afterwards, which would lead the change into a denied place."""
    if ctx.ws.deny and ctx.ws.deny.denies(ctx.ws.real_entry(dir_fd, name, rel)):
        raise denied(shown)


def denied_beneath(ctx: ToolContext, dir_fd: int, rel: str) -> str | None:
    """The first denied path inside the directory open as `dir_fd` (at `rel`), found by
    a walk through descriptors that never follows a symlink; None when there is none."""
    if not ctx.ws.deny:
        return None
    real = ctx.ws.where(dir_fd, rel)  # reached through a symlinked directory: judged there
    for top, dirs, files, _ in fwalk(dir_fd):
        inner = "" if top == "." else f"/{top[2:]}"
        for name in dirs + files:
            if ctx.ws.deny.matches(f"{rel}{inner}/{name}") or (
                    real != rel and ctx.ws.deny.matches(f"{real}{inner}/{name}".lstrip("/"))):
                return f"{rel}{inner}/{name}"
    return None
