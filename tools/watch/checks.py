"""workspace.watch: what a watch is, checked in a worker before the watcher takes it.

The watcher itself (tools/watch/watcher.py) runs in a process of its own beside the pool; this is
the part of a watch request that touches the file system like any other call: the path
must be a directory inside the workspace (its real path, symlinks resolved, is what the
watcher filters on) and the pattern must compile.
"""

from __future__ import annotations

import os
from typing import Any

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.globs import GlobError, ListPattern, invalid_pattern
from chorus_tools.tools.confine.sandbox import ROOT


def prepare(ctx: ToolContext, path: str = ".", pattern: str | None = None,
            include_ignored: bool = False) -> dict[str, Any]:
    """The watch as the watcher needs it: {path (real, workspace-relative), pattern,
    include_ignored}."""
    rel = ctx.ws.rel(path, allow_empty=True)
    try:
        fd = ctx.ws.open(rel, os.O_PATH | os.O_DIRECTORY, shown=path)
    except ToolError as err:
        if err.code == "not_a_directory":
            raise ToolError("not_a_directory", f"Not a directory: {path}. workspace.watch "
                            "watches a directory; watch its parent with a pattern that "
                            "names the file.", path=path) from None
        raise
    try:
        real = ctx.ws.where(fd, rel) or ROOT
    finally:
        os.close(fd)
    pattern = pattern or None
    if pattern is not None:
        try:
            ListPattern(pattern.removeprefix("./"))
        except GlobError as exc:
            raise invalid_pattern(exc, "pattern") from None
    return {"path": real, "pattern": pattern, "include_ignored": include_ignored}
