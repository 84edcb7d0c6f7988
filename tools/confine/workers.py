"""The workers' own Landlock domain: a second wall behind openat2, so a bug in path
handling still cannot reach outside the workspace.

The ruleset is built once, in the server, before the first fork; each worker (and the
background sweep) enters it right after fork, before it runs any job. Beneath the pinned
workspace root a worker may read, write, create, rename and remove files and directories
(never make devices, FIFOs or sockets, never execute), and make symlinks: an
archive put in carries them (each checked first to stay inside its directory; a link
that pointed out would still lead a worker nowhere, since Landlock checks where a path
lands, not how it was reached). Elsewhere it may only read
what running Python needs (the interpreter's prefixes, `sys.path`, the package's own
source), run the ripgrep and oxlint binaries, perl (which launches ripgrep:
tools/confine/launcher.py) and the shared libraries, use /dev/null, and write the texts
oxlint reads in its private directory. Nothing else:
no /etc, /root, /home, no sibling of the workspace, no TCP. Audit records are written by
the dispatcher, so workers get no access to them at all.
"""

from __future__ import annotations

import logging
import os
import sys

import chorus_tools
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.confine import landlock, launcher
from chorus_tools.tools.confine.landlock import (EXECUTE, MAKE_DIR, MAKE_REG, MAKE_SYM,
                                                READ_DIR, READ_FILE, REFER, REMOVE_DIR,
                                                REMOVE_FILE, TRUNCATE, WRITE_FILE)

log = logging.getLogger("chorus.confine")

READ = READ_FILE | READ_DIR
WORKSPACE = (READ | WRITE_FILE | TRUNCATE | MAKE_REG | MAKE_DIR | MAKE_SYM | REMOVE_FILE
             | REMOVE_DIR | REFER)


def python_dirs() -> list[str]:
    """Directories a worker imports from: the interpreter's prefixes, `sys.path` (minus the
    current directory that `python -m` puts first) and the package source itself."""
    cwd = os.getcwd()
    top = os.path.dirname(chorus_tools.__file__ or "")
    here = [top, os.path.join(top, "rpc"), os.path.join(top, "tools")]  # symlinks in a checkout
    paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *here,
             *(p for p in sys.path if p and os.path.abspath(p) != cwd)]
    return [p for p in dict.fromkeys(map(os.path.realpath, paths)) if os.path.isdir(p)]


def worker_ruleset(ctx: ToolContext, *, warm: bool = False) -> int | None:
    """The workers' ruleset fd, or None (with one line on stderr) without Landlock. The
    `warm` process's is the same but for --index-cache's directory, which it alone may
    read and write (its records: tools/warm/record_cache.py)."""
    fd = landlock.create()
    if fd is None:
        if not warm:
            log.warning("Landlock is not available on this kernel: workers are confined "
                        "by openat2 alone, ripgrep by its working directory")
        return None
    try:
        landlock.allow(fd, ctx.ws.root_fd, WORKSPACE)
        for directory in python_dirs():
            landlock.allow(fd, directory, READ)
        for lib in filter(os.path.isdir, landlock.LIB_DIRS):
            landlock.allow(fd, lib, READ | EXECUTE)
        if ctx.rg_path is not None:
            landlock.allow(fd, ctx.rg_path, READ_FILE | EXECUTE)
        if (perl := launcher.available()) is not None:  # how rg and oxlint start
            landlock.allow(fd, perl, READ_FILE | EXECUTE)
        landlock.allow(fd, os.devnull, READ_FILE | WRITE_FILE)  # a child's stdin
        if ctx.oxlint is not None:  # its binary, and the texts it reads (tools/patch/oxlint.py)
            landlock.allow(fd, ctx.oxlint.binary, READ_FILE | EXECUTE)
            landlock.allow(fd, ctx.oxlint.fd, READ | WRITE_FILE | TRUNCATE | MAKE_REG
                           | REMOVE_FILE)
        if warm and ctx.index_cache is not None:
            landlock.allow(fd, ctx.index_cache.fd, READ | WRITE_FILE | MAKE_REG | MAKE_DIR
                           | REMOVE_FILE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def enter(ruleset_fd: int | None) -> None:
    """In a freshly forked worker: enter the domain for good and drop the fd."""
    if ruleset_fd is not None:
        landlock.restrict_self(ruleset_fd)
        os.close(ruleset_fd)
