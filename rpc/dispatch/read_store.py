"""The `claude` set's read-before-write memory on disk (docs/protocol.md, Starting the
server: --state): the version each file was last shown or written at, per workspace, so a
Read in one server process lets an Edit in the next one through (clients that spawn a
server per call: the Inspector CLI, langchain-mcp-adapters, llama-index).

Where: `<root>/<key of the workspace>/`, root being `--state DIR`, else the first default
place that works (rpc/dispatch/state_places.py: $XDG_STATE_HOME/chorus-tools, else
~/.local/state/chorus-tools; a private directory beside the temporary files; memory); the
key is a digest of the workspace's real path. It always lies outside the workspace (a
--state inside is refused at start), so no tool call can read or forge it.

How: one entry per remembered path, named by a digest of the path: a symlink whose target
is the version and the path (never followed, only read with readlink). Every update makes
a new symlink and renames it over the entry, so concurrent server processes on one
workspace never see a half-written entry and need no lock: the last write wins, as between
two calls of one process. A symlink, not a small file: renaming a regular file over
another makes ext4 flush its data first (auto_da_alloc), about 1 ms an update here against
35 µs for a symlink; a reread of an unchanged file writes nothing.

Every access goes through a directory descriptor opened at start, before a
`--user` drop (the directory is handed to that user then), so the store keeps working
where the dropped user could not walk the path.

Bounded: at most MAX_ENTRIES paths a workspace; past that, the least recently written are
forgotten (a forgotten file must be read again: `not_read`, never a wrong success). The
store of a workspace nobody served for STALE_DAYS is removed when another one opens, so
the workspaces of finished jobs (temporary directories, CI) do not pile up.
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import logging
import os
import shutil
import time

from chorus_tools.rpc.dispatch.records import inside
from chorus_tools.rpc.dispatch.state_places import StartError, first_place, state_base

log = logging.getLogger("chorus.state")

MAX_ENTRIES = 2048
STALE_DAYS = 30
_PREFIX = "reads-"
_PRUNE_EVERY = 256  # writes between two checks of the bound
_STALE_TEMP_SECONDS = 60.0  # a temporary file this old was left by a killed process
_TEMP = ".tmp-"


def state_root(explicit: str | None) -> str:
    """The directory the workspaces' stores live under."""
    return os.path.abspath(explicit) if explicit else state_base()


def open_store(explicit: str | None, workspace: str,
               owner: tuple[int, int] | None = None) -> ReadStore | None:
    """The store of `workspace` (None: reads are remembered by the process only). An
    explicit --state inside the workspace or unusable ends the start (StartError); the
    default place falls back as every default does (rpc/dispatch/state_places.py)."""
    if explicit:
        directory = store_dir(state_root(explicit), workspace)
        if inside(directory, workspace):
            raise StartError(f"--state {explicit!r} lies inside the workspace; the files "
                             "read must be remembered out of the agent's reach")
        try:
            return ReadStore(directory, owner)
        except OSError as exc:
            raise StartError(f"--state {explicit!r}: {exc.strerror} "
                             f"({exc.filename or directory})") from None
    leaf = os.path.basename(store_dir(state_base(), workspace))
    store, _ = first_place(leaf, workspace, lambda d: ReadStore(d, owner),
                           "the claude set's reads", "choose with --state DIR")
    return store


def store_dir(root: str, workspace: str) -> str:
    """The store of one workspace under `root`."""
    digest = hashlib.sha256(os.fsencode(os.path.realpath(workspace))).hexdigest()
    return os.path.join(root, f"{_PREFIX}{digest[:24]}")


def _forget_stale_stores(root: str) -> None:
    """Remove the stores under `root` untouched for STALE_DAYS (another process may be
    doing the same: whatever is already gone is skipped)."""
    cutoff = time.time() - STALE_DAYS * 86400
    with os.scandir(root) as entries:
        stale = [e.path for e in entries if e.name.startswith(_PREFIX)
                 and e.is_dir(follow_symlinks=False)
                 and e.stat(follow_symlinks=False).st_mtime < cutoff]
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)


def _entry_name(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:40]


class ReadStore:
    """The versions seen, by the invoker's key of a path; a mapping for ReadVersions
    (rpc/dispatch/session.py): `get`, item assignment and `pop`."""

    def __init__(self, directory: str, owner: tuple[int, int] | None = None) -> None:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        _forget_stale_stores(os.path.dirname(directory))
        self._fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        if owner is not None:  # opened as root for the --user the server becomes
            os.fchown(self._fd, *owner)
            for name in os.listdir(self._fd):
                os.chown(name, *owner, dir_fd=self._fd, follow_symlinks=False)
        os.fchmod(self._fd, 0o700)
        self._temps = itertools.count()
        self._writes = 0
        self._prune()

    @property
    def fd(self) -> int:
        """The directory's descriptor (a forked worker closes it)."""
        return self._fd

    def get(self, key: str, default: str | None = None) -> str | None:
        try:
            held = os.readlink(_entry_name(key), dir_fd=self._fd)
        except (FileNotFoundError, OSError):  # none, or not an entry (EINVAL)
            return default
        version, _, path = held.partition("\n")
        return version if path == key and version else default

    def __setitem__(self, key: str, version: str) -> None:
        if self.get(key) == version:  # a file read again unchanged: nothing to write
            return
        temp = f"{_TEMP}{os.getpid()}-{next(self._temps)}"
        try:
            os.symlink(f"{version}\n{key}", temp, dir_fd=self._fd)
            os.rename(temp, _entry_name(key), src_dir_fd=self._fd, dst_dir_fd=self._fd)
        except OSError as exc:
            # a path too long to hold, or a store that cannot be written (removed under
            # this server as stale by another one, a full disk): the call's result stands,
            # and the file must be read again
            if exc.errno != errno.ENAMETOOLONG:
                log.warning("the claude set's reads cannot be kept (%s): %s is to be "
                            "read again", exc.strerror, key)
            self.pop(key, None)
            return
        self._writes += 1
        if self._writes % _PRUNE_EVERY == 0:
            self._prune()

    def pop(self, key: str, default: str | None = None) -> str | None:
        version = self.get(key)
        try:
            os.unlink(_entry_name(key), dir_fd=self._fd)
        except FileNotFoundError:
            return default
        return version if version is not None else default

    def close(self) -> None:
        os.close(self._fd)

    def _prune(self) -> None:
        """Forget the least recently written entries past MAX_ENTRIES, and temporary
        files a killed process left. Another process pruning at once only makes some
        unlinks find nothing."""
        entries: list[tuple[float, str]] = []
        now = time.time()
        for name in os.listdir(self._fd):
            try:
                mtime = os.stat(name, dir_fd=self._fd, follow_symlinks=False).st_mtime
                if name.startswith(_TEMP):
                    if now - mtime > _STALE_TEMP_SECONDS:
                        os.unlink(name, dir_fd=self._fd)
                    continue
            except FileNotFoundError:
                continue
            entries.append((mtime, name))
        if len(entries) <= MAX_ENTRIES:
            return
        entries.sort()
        for _, name in entries[:len(entries) - MAX_ENTRIES]:
            try:
                os.unlink(name, dir_fd=self._fd)
            except FileNotFoundError:
                pass
