"""Giving up root: a server started as root with `--user NAME` serves as that user.

The workspace root and the records file are opened first (as root), then the process
takes the user's groups, group and user id for good, before the first worker is forked.
From then on the kernel's permission bits apply to every tool call, as they would to
that user: a root-only file in the workspace is `permission_denied`.
"""

from __future__ import annotations

import codecs
import ctypes
import importlib
import os
import pkgutil
import pwd

import chorus_tools
from chorus_tools.tools.code.symbols import queries
from chorus_tools.tools.patch import syntax

_PR_SET_DUMPABLE = 4
# every encoding a tool decodes or writes: codecs are imported on first use
_ENCODINGS = ("utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "latin-1", "ascii",
              "unicode-escape")
# what the standard library imports only when first used: forking a worker, --version
_LAZY_STDLIB = ("multiprocessing.popen_fork", "importlib.metadata", "email.parser")


def preload() -> None:
    """Import every module of the package (and the codecs the tools use) while the Python
    installation is still readable: it may lie where the user cannot read (/root)."""
    for module in pkgutil.walk_packages(chorus_tools.__path__, "chorus_tools."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    for name in _LAZY_STDLIB:
        importlib.import_module(name)
    for encoding in _ENCODINGS:
        codecs.lookup(encoding)
    syntax.preload()  # the patch guard's parsers: their grammars are shared libraries
    queries.preload()  # the symbols' queries: tags.scm files in the grammar packages


def drop_to(user: pwd.struct_passwd) -> None:
    """Become `user` (its supplementary groups, its group, then its uid: real, effective
    and saved, so root cannot be taken back)."""
    os.setgroups(os.getgrouplist(user.pw_name, user.pw_gid))
    os.setresgid(user.pw_gid, user.pw_gid, user.pw_gid)
    os.setresuid(user.pw_uid, user.pw_uid, user.pw_uid)
    # changing ids made the process non-dumpable, which hands /proc/self/fd to root; the
    # tools reopen files through it, and this process holds no secret root could lose
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)
