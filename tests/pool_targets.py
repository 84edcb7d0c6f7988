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
