"""What a search runs over: the path opened once, as a descriptor, and whether it is a
directory or one regular file; both engines take it from here, so the kind is looked at
once and the engine searches the very object that was looked at."""

from __future__ import annotations

import os
import stat
from typing import NamedTuple

from chorus_tools.tools.confine.sandbox import names_directory, not_a_directory
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError, from_os_error


class Target(NamedTuple):
    fd: int  # O_PATH descriptor of the searched path; the opener closes it
    is_dir: bool  # a directory; otherwise a regular file


def open_target(ctx: ToolContext, rel: str, shown: str) -> Target:
    """Open `rel` for a search: a directory or a regular file; other kinds are refused.
    One the server may not read is `permission_denied` here: neither engine could search
    it, and an empty answer would say it holds no match."""
    fd = ctx.ws.open(rel, os.O_PATH, shown=shown)
    mode = os.fstat(fd).st_mode
    if names_directory(shown) and not stat.S_ISDIR(mode):  # 'f/': never the file f
        os.close(fd)
        raise not_a_directory(shown)
    if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
        try:  # through the descriptor just looked at: the very object, no second lookup
            os.close(os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC))
        except PermissionError as exc:
            os.close(fd)
            raise from_os_error(exc, shown) from None
        return Target(fd, stat.S_ISDIR(mode))
    os.close(fd)
    raise ToolError("not_a_regular_file",
                    f"Cannot search {shown}: it is a FIFO, socket or device. Search a "
                    "directory or a regular file.", path=shown)
