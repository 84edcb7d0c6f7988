"""Where a server keeps its history (docs/protocol.md, History: where it lives), and the
histories of other workspaces tidied away.

- `--history 0`: none. `--history DIR`: DIR; inside the workspace or unusable, the start
  fails (`StartError`, exit 2) with a message that suggests `--history 0`.
- By default, `history/<key>` (a digest of the workspace's real path) in the first of
  the default places that works (rpc/dispatch/state_places.py: the user's state
  directory, a private one beside the temporary files, memory), each fallback said in
  one warning line naming `--history DIR|0`; none ends the start.
- When a server starts on a default place, the other histories there are tidied: those
  of workspaces that no longer exist, and those that hold nothing, are dropped; then the
  least recently used go until all together fit `--history-total-bytes`. A history a
  running server holds (its shared flock) is never touched.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
from dataclasses import dataclass
from typing import Any

from chorus_tools.rpc.dispatch.history import History
from chorus_tools.rpc.dispatch.records import inside
from chorus_tools.rpc.dispatch.state_places import StartError, first_place

WORKSPACE_FILE = "workspace"


def workspace_key(workspace: str) -> str:
    return hashlib.sha256(os.fsencode(os.path.realpath(workspace))).hexdigest()[:16]


def open_history(given: str | None, workspace: str, budget: int,
                 total: int) -> History | None:
    """The server's history (None: --history 0)."""
    if given == "0":
        return None
    if given:
        if inside(given, workspace):
            raise StartError(f"--history {given!r} lies inside the workspace; the history "
                             "must be out of the agent's reach (choose a directory outside "
                             "it, or --history 0 to run without a history)")
        try:
            return _noted(History(given, budget), workspace)
        except OSError as exc:
            raise StartError(f"--history {given!r}: {exc.strerror} ({exc.filename or given}); "
                             "choose a directory this user can write, or --history 0 to run "
                             "without a history") from None
    history, root = first_place(
        os.path.join("history", workspace_key(workspace)), workspace,
        lambda directory: _noted(History(directory, budget), workspace), "the history",
        "choose with --history DIR, or turn it off with --history 0")
    if history is None:
        return History(None, budget)
    assert root is not None and history.directory is not None
    tidy(root, history.directory, total)
    return history


def _noted(history: History, workspace: str) -> History:
    """Write the workspace's path into its history once, so a later start can tell when
    the workspace is gone."""
    assert history.directory is not None
    try:
        fd = history.folder.open(WORKSPACE_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    except FileExistsError:
        return history
    try:
        os.write(fd, os.fsencode(os.path.realpath(workspace)))
    finally:
        os.close(fd)
    return history


def give_history(directory: str, user: Any) -> None:
    """Hand the history directory to the user a root server drops to (--user)."""
    for top, dirs, files in os.walk(directory):
        for name in [top, *(os.path.join(top, n) for n in dirs + files)]:
            os.chown(name, user.pw_uid, user.pw_gid, follow_symlinks=False)


@dataclass
class _Other:
    path: str
    size: int
    used: float  # when it last changed
    useless: bool  # its workspace is gone, or it holds nothing


def tidy(root: str, own: str, total: int) -> None:
    """Drop the histories under `root` that serve nothing, then the least recently used
    while all of them (ours included) exceed `total`. Best effort: a history another
    process is removing, or cannot be read, is skipped."""
    others, size = [], 0
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for entry in entries:
        if not entry.is_dir(follow_symlinks=False):
            continue
        try:
            other = _measure(entry.path)
        except OSError:
            continue
        size += other.size
        if entry.path != own:
            others.append(other)
    for other in sorted(others, key=lambda o: (not o.useless, o.used)):
        if not other.useless and size <= total:
            break
        if _drop(other.path):
            size -= other.size


def _measure(path: str) -> _Other:
    size, used = 0, os.stat(path).st_mtime
    for top, _, files in os.walk(path):
        for name in files:
            st = os.stat(os.path.join(top, name), follow_symlinks=False)
            size += st.st_blocks * 512
            used = max(used, st.st_mtime)
    try:
        with open(os.path.join(path, WORKSPACE_FILE), "rb") as f:
            gone = not os.path.isdir(os.fsdecode(f.read()))
    except FileNotFoundError:
        gone = False  # made before histories named their workspace: judged by use only
    try:
        empty = os.stat(os.path.join(path, "log.jsonl")).st_size == 0
    except FileNotFoundError:
        empty = True
    return _Other(path, size, used, gone or empty)


def _drop(path: str) -> bool:
    """Remove a history no server holds (it takes the exclusive flock, or leaves it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False  # in use
    try:
        shutil.rmtree(path, ignore_errors=True)
        return True
    finally:
        os.close(fd)
