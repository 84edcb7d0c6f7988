"""Where the server keeps what it remembers between processes by default (the history,
the claude set's reads), so that it starts wherever it can run (docs/protocol.md,
History: where it lives).

The first place that works, in order: the user's state directory (`$XDG_STATE_HOME`,
else ~/.local/state, then `chorus-tools/`); a private directory beside the temporary
files, `$TMPDIR/chorus-tools-<uid>/` (a service user whose HOME does not exist, or a
workspace that holds the home directory); memory (a workspace that holds them all, `/`).
A place inside the workspace is never used: the agent could read or forge what is kept
there. Each fallback is said in one warning line naming the option that chooses.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
import tempfile
from collections.abc import Callable
from typing import TypeVar

from chorus_tools.rpc.dispatch.records import inside

T = TypeVar("T")
log = logging.getLogger("chorus.cli")


class StartError(Exception):
    """A place given explicitly cannot be used: the server must not start (exit 2)."""


def state_base() -> str:
    """The user's state directory for chorus-tools, as XDG asks."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "chorus-tools")


def _user_state() -> str:
    """state_base, refused (OSError) when it lies in a home directory that does not
    exist: making it would make the home too (root may; a service user's is often
    /nonexistent)."""
    if not os.environ.get("XDG_STATE_HOME"):
        home = os.path.expanduser("~")
        if not os.path.isdir(home):
            raise OSError(errno.ENOENT, "the home directory does not exist", home)
    return state_base()


def private_base() -> str:
    """This user's own directory beside the temporary files: made 0700, and refused
    (OSError) unless it is a real directory owned by this user that no one else can
    enter (another user could have made it first, or planted a link)."""
    path = os.path.join(tempfile.gettempdir(), f"chorus-tools-{os.geteuid()}")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
        raise OSError(errno.EPERM, "not a private directory of this user", path)
    return path


def first_place(leaf: str, workspace: str, open_at: Callable[[str], T], what: str,
                choose: str) -> tuple[T | None, str | None]:
    """`open_at(<base>/<leaf>)` at the first default base where it works, and that base;
    (None, None) for memory. `what` and `choose` word the warning of a fallback."""
    refused = None  # why the first place was passed over
    for base in (_user_state, private_base):
        try:
            directory = os.path.join(base(), leaf)
        except OSError as exc:
            refused = refused or f"{exc.filename}: {exc.strerror}"
            continue
        if inside(directory, workspace):
            refused = refused or f"{directory} would lie inside the workspace"
            continue
        try:
            opened = open_at(directory)
        except OSError as exc:
            refused = refused or f"{directory}: {exc.strerror}"
            continue
        if refused:
            log.warning("%s cannot be kept in its usual place (%s): keeping it in %s "
                        "instead (%s)", what, refused, directory, choose)
        return opened, os.path.dirname(directory)
    log.warning("%s cannot be kept on disk outside the workspace (%s): keeping it in "
                "memory for this process only (%s)", what, refused, choose)
    return None, None
