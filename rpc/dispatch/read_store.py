"""The `claude` set's read-before-write memory on disk (docs/protocol.md, Starting the
server: --state): the version each file was last shown or written at, per workspace, so a
Read in one server process lets an Edit in the next one through (clients that spawn a
server per call: the Inspector CLI, langchain-mcp-adapters, llama-index).

Where: `<root>/<key of the workspace>/`, root being `--state DIR`, else
$XDG_STATE_HOME/chorus-tools, else ~/.local/state/chorus-tools; the key is a digest of the
workspace's real path. It always lies outside the workspace (the command line refuses one
inside), so no tool call can read or forge it.

How: one small file per remembered path, named by a digest of the path, holding the
version and the path. Every update is a whole-file replace (write a temporary file,
rename it over the entry), so concurrent server processes on one workspace never see a
half-written entry and need no lock: the last write wins, as between two calls of one
process. Every access goes through a directory descriptor opened at start, before a
`--user` drop (the directory is handed to that user then), so the store keeps working
where the dropped user could not walk the path.

Bounded: at most MAX_ENTRIES paths; past that, the least recently written are forgotten
(a forgotten file must be read again: `not_read`, never a wrong success).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import time

MAX_ENTRIES = 2048
_PRUNE_EVERY = 256  # writes between two checks of the bound
_STALE_TEMP_SECONDS = 60.0  # a temporary file this old was left by a killed process
_TEMP = ".tmp-"


def state_root(explicit: str | None) -> str:
    """The directory the workspaces' stores live under."""
    if explicit:
        return os.path.abspath(explicit)
    base = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return os.path.join(base, "chorus-tools")


def store_dir(root: str, workspace: str) -> str:
    """The store of one workspace under `root`."""
    digest = hashlib.sha256(os.fsencode(os.path.realpath(workspace))).hexdigest()
    return os.path.join(root, f"reads-{digest[:24]}")


def _entry_name(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:40]


class ReadStore:
    """The versions seen, by the invoker's key of a path; a mapping for ReadVersions
    (rpc/dispatch/session.py): `get`, item assignment and `pop`."""

    def __init__(self, directory: str, owner: tuple[int, int] | None = None) -> None:
        os.makedirs(directory, mode=0o700, exist_ok=True)
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
            fd = os.open(_entry_name(key), os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW,
                         dir_fd=self._fd)
        except FileNotFoundError:
            return default
        with os.fdopen(fd, "rb") as entry:
            version, _, path = entry.read().decode("utf-8", "surrogatepass").partition("\n")
        return version if path == key and version else default

    def __setitem__(self, key: str, version: str) -> None:
        temp = f"{_TEMP}{os.getpid()}-{next(self._temps)}"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600,
                     dir_fd=self._fd)
        try:
            os.write(fd, f"{version}\n{key}".encode("utf-8", "surrogatepass"))
        finally:
            os.close(fd)
        os.rename(temp, _entry_name(key), src_dir_fd=self._fd, dst_dir_fd=self._fd)
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
