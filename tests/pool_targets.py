"""Misbehaving tool functions for the pool's tests: slow, crashing, buggy."""

from __future__ import annotations

import faulthandler
import os
import signal
import time


def echo(ctx, **kwargs):
    return {"pid": os.getpid(), **kwargs}


def sleep(ctx, seconds: float):
    time.sleep(seconds)
    return {"slept": seconds, "pid": os.getpid()}


def segfault(ctx):
    """Die by SIGSEGV, on purpose. pytest's faulthandler (inherited by the forked worker)
    would print "Fatal Python error: Segmentation fault" and a traceback for this expected
    death, which reads as a real crash in the suite's output: it is turned off first."""
    faulthandler.disable()
    os.kill(os.getpid(), signal.SIGSEGV)


def bug(ctx):
    raise ValueError("a bug in a tool")


def crash_logged(ctx, log: str):
    """Note this worker's pid in `log`, then die: a poison input."""
    with open(log, "a") as f:
        f.write(f"{os.getpid()}\n")
    os.kill(os.getpid(), signal.SIGKILL)


def append_and_hang(ctx, path: str):
    """A mutation caught half-way: its change is made, then its worker hangs until killed.
    One write(2) on an O_APPEND descriptor, no buffer: the file never holds half of it."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, b"applied\n")
    finally:
        os.close(fd)
    time.sleep(3600)


def _refuse_to_load():
    raise ValueError("this outcome cannot be unpickled")


class _Unloadable:
    def __reduce__(self):
        return _refuse_to_load, ()


def unpicklable_outcome(ctx):
    """An outcome that pickles in the worker but fails to unpickle in the pool."""
    return {"value": _Unloadable()}
