"""Misbehaving tool functions for the pool's tests: slow, crashing, buggy."""

from __future__ import annotations

import os
import signal
import time


def echo(ctx, **kwargs):
    return {"pid": os.getpid(), **kwargs}


def sleep(ctx, seconds: float):
    time.sleep(seconds)
    return {"slept": seconds, "pid": os.getpid()}


def segfault(ctx):
    os.kill(os.getpid(), signal.SIGSEGV)


def bug(ctx):
    raise ValueError("a bug in a tool")


def crash_logged(ctx, log: str):
    """Note this worker's pid in `log` (outside the workspace), then die: a poison input."""
    with open(log, "a") as f:
        f.write(f"{os.getpid()}\n")
    os.kill(os.getpid(), signal.SIGKILL)


def append_and_hang(ctx, path: str):
    """A mutation caught half-way: its change is made, then its worker hangs until killed."""
    with open(path, "a") as f:
        f.write("applied\n")
    time.sleep(3600)
