"""Pipes of 1 MiB instead of the kernel's 64 KiB, where the kernel allows it.

A writer that outruns its reader blocks when the pipe is full: the server's stdout under
pipelined MCP replies (the text goes out twice), and ripgrep's output while the worker
folds it (rg's threads stalled on the full pipe: 37 ms against 31 ms for the stdlib
search). Growing a pipe is refused above /proc/sys/fs/pipe-max-size or the user's pipe
quota; the pipe then stays as it was, which is only slower.
"""

from __future__ import annotations

import fcntl
import os

PIPE_BYTES = 1 << 20


def widen(fd: int) -> None:
    """Grow the pipe `fd` belongs to (either end) to PIPE_BYTES, if allowed."""
    try:
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except OSError:
        pass


def wide_pipe() -> tuple[int, int]:
    """(read end, write end), close-on-exec, widened."""
    read_end, write_end = os.pipe2(os.O_CLOEXEC)
    widen(write_end)
    return read_end, write_end
