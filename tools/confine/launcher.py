"""Starting ripgrep without forking the worker: a few lines of perl between the vfork and
rg's exec do what a `preexec_fn` did, so Python can use vfork.

A `preexec_fn` makes Python fork the whole worker (its page tables copied, every page of
its heap made copy-on-write until rg's exec, the child scheduled on its own) to run three
system calls; docs/benchmarks.md measured that at 3-8 ms an rg start against ~1 ms by
vfork. Those calls cannot be made from the parent: the parent-death signal is asked for
by the child itself, and entering Landlock is for good. So the worker vforks the
system's perl (`/usr/bin/perl`: Debian's `perl-base`, which is essential there), which,
in order:

1. asks for SIGKILL when its parent dies (PR_SET_PDEATHSIG), kept across the exec;
2. exits if the worker died before that (its parent is no longer the worker's pid);
3. enters rg's Landlock domain from the ruleset descriptor it was given (no_new_privs
   first, as the kernel requires) and closes that descriptor;
4. execs rg.

rg ends up in the same domain, with the same death signal, as with the `preexec_fn`
(tools/confine/landlock.py `confine`); the workers' domain adds only the right to run
perl (tools/confine/workers.py). Without perl, or on an architecture whose system call
numbers are not in the table, rg starts as before (`available()` is None).
"""

from __future__ import annotations

import os
import platform
import subprocess
from functools import cache
from typing import Any

from chorus_tools.tools.confine import landlock

# prctl and close differ by architecture; Landlock's calls are 444-446 on every one
_SYSCALLS = {"x86_64": (157, 3), "aarch64": (167, 57)}
# the system's perl only: its libraries are in the directories the workers may load from
# (a perl of one's own, under /usr/local or a home, may need libraries they cannot read)
SYSTEM_PERL = ("/usr/bin/perl", "/bin/perl")
_SCRIPT = (
    "syscall({prctl}, 1, 9);"  # PR_SET_PDEATHSIG, SIGKILL
    "getppid() == shift or exit 1;"  # the worker died before the line above
    "$r = shift;"  # rg's ruleset descriptor, "-" for none (no Landlock)
    # (+ 0: syscall passes a string argument as a pointer)
    "$r eq '-' or (syscall({prctl}, 38, 1, 0, 0, 0) == 0 and syscall(446, $r + 0, 0) == 0"
    " and syscall({close}, $r + 0) == 0) or die \"cannot confine ripgrep: $!\\n\";"
    "exec {{$ARGV[0]}} @ARGV or die \"cannot run $ARGV[0]: $!\\n\"")
NO_RULESET = "-"


@cache
def available() -> str | None:
    """The perl binary that launches rg (its real path, which Landlock rules name), or
    None when there is none this process can run, or no table entry for this machine."""
    if platform.machine() not in _SYSCALLS:
        return None
    for candidate in SYSTEM_PERL:
        path = os.path.realpath(candidate)
        try:
            with open(path, "rb") as f:
                if f.read(4) != b"\x7fELF":  # a wrapper script would need its interpreter
                    continue
        except OSError:
            continue
        if os.access(path, os.X_OK):
            return path
    return None


def argv(perl: str, child: list[str], parent: int, ruleset: int | None) -> list[str]:
    """The command that starts `child` from process `parent` (the caller's pid, which
    must stay the caller's thread for as long as the child runs: the death signal follows
    the thread that forked), entering `ruleset` (a descriptor the child inherits)."""
    prctl, close = _SYSCALLS[platform.machine()]
    script = _SCRIPT.format(prctl=prctl, close=close)
    return [perl, "-e", script, str(parent), NO_RULESET if ruleset is None else str(ruleset),
            *child]


def popen(child: list[str], ruleset: int | None, pass_fds: tuple[int, ...] = (),
          **io: Any) -> subprocess.Popen:
    """`child` started confined to `ruleset` and killed with this process: through perl
    when there is one (a vfork), else by a `preexec_fn` (a fork of this process). The one
    way every binary a worker runs (ripgrep, oxlint) is started."""
    parent = os.getpid()
    if (perl := available()) is not None:
        keep = pass_fds if ruleset is None else (*pass_fds, ruleset)
        return subprocess.Popen(argv(perl, child, parent, ruleset), **io, pass_fds=keep)
    return subprocess.Popen(child, **io, pass_fds=pass_fds,
                            preexec_fn=lambda: landlock.confine(ruleset, parent))
