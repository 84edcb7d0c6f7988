"""The oxlint binary that finds JavaScript and TypeScript problems (docs/protocol.md,
Diagnostics): where it is, the private directory it reads its text from, and one run of it,
confined like ripgrep (tools/search/rg_run.py).

oxlint (the `oxlint` wheel: its native binary, no Node) reads no stdin and skips a symlink
it is given, and it tells JavaScript from TypeScript and JSX by the file's suffix, so the
exact text a call would write is handed to it as a regular file: `<worker pid><suffix>` in
a directory the server makes at start outside the workspace (mode 0700, removed at exit),
the only place besides the workspace a worker may write (tools/confine/workers.py). A file
in the workspace would be seen by watchers, the warm tree and searches, and the text
before a write is not on disk at all. The run itself may read only that file, the
config beside it, its binary and the shared libraries (Landlock), opens no socket, gets an
empty environment, and dies with its worker; it is killed past the call's
--syntax-timeout.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import stat
import subprocess
import sysconfig
from dataclasses import dataclass

from chorus_tools.tools.code.bounds import Budget, Skipped

CONFIG = "oxlintrc.json"
# the globals of browsers, Node and ES2024 are known (oxlint's env configuration)
_ENV = {"env": {"browser": True, "node": True, "es2024": True}}
# only no-undef; no config or ignore file from around the text; one thread: one small file
ARGS = ("-c", CONFIG, "-A", "all", "-D", "no-undef", "--disable-nested-config",
        "--no-ignore", "--format", "json", "--threads", "1")
MAX_OUTPUT = 64 * 1024 * 1024  # bytes of its report read at most


@dataclass(frozen=True)
class Oxlint:
    """The binary and the directory of its texts (`fd`: an O_PATH descriptor of it, made
    before the workers fork, so a rename of the path cannot redirect them)."""

    binary: str
    directory: str
    fd: int


def find_oxlint(explicit: str | None = None) -> str | None:
    """The oxlint to run: `explicit` (--oxlint), else the one installed with the package,
    else `oxlint` on PATH. It must be an ELF binary (a wrapper script could not run under
    the run's Landlock domain, which lets it execute only its own file)."""
    scripts = sysconfig.get_path("scripts")
    candidates = [explicit] if explicit else [shutil.which("oxlint", path=scripts),
                                              shutil.which("oxlint")]
    for candidate in filter(None, candidates):
        path = os.path.abspath(candidate)
        try:
            with open(path, "rb") as f:
                if f.read(4) == b"\x7fELF" and os.access(path, os.X_OK):
                    return path
        except OSError:
            continue
    return None


def start(binary: str) -> Oxlint:
    """The private directory of `binary`'s texts, with its config; removed when the
    process that made it exits (a worker's exit leaves it)."""
    import tempfile  # at start only: the CLI imports this module
    directory = tempfile.mkdtemp(prefix="chorus-oxlint-")
    fd = os.open(directory, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    config = os.open(CONFIG, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o400,
                     dir_fd=fd)
    with os.fdopen(config, "w") as f:
        json.dump(_ENV, f)
    owner = os.getpid()
    atexit.register(lambda: os.getpid() == owner and shutil.rmtree(directory, True))
    return Oxlint(binary, directory, fd)


def give(oxlint: Oxlint, uid: int, gid: int) -> None:
    """Hand the directory to the user the server drops to (--user)."""
    for name in (".", CONFIG):
        os.chown(name, uid, gid, dir_fd=oxlint.fd, follow_symlinks=False)


def run(oxlint: Oxlint, suffix: str, data: bytes, budget: Budget) -> tuple[int, bytes]:
    """(exit status, report) of oxlint on `data` as a file ending in `suffix`; Skipped
    when it cannot start, runs past the budget, or reports more than MAX_OUTPUT."""
    name = f"{os.getpid()}{suffix}"
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o600, dir_fd=oxlint.fd)
    except OSError as exc:  # its directory removed (a /tmp cleaner), a full disk
        raise failed(f"could not be given the text: {exc.strerror}") from None
    try:
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        except OSError as exc:
            raise failed(f"could not be given the text: {exc.strerror}") from None
        return _confined(oxlint, name, budget)
    finally:
        try:
            os.unlink(name, dir_fd=oxlint.fd)
        except OSError:
            pass


def _confined(oxlint: Oxlint, name: str, budget: Budget) -> tuple[int, bytes]:
    from chorus_tools.tools.confine import landlock, launcher
    readable = [os.open(n, os.O_PATH | os.O_CLOEXEC, dir_fd=oxlint.fd) for n in (name, CONFIG)]
    try:
        ruleset = landlock.ruleset(readable, oxlint.binary)
    except OSError as exc:
        raise failed(f"could not start: {exc.strerror}") from None
    finally:
        for fd in readable:
            os.close(fd)
    try:
        # in memory: a worker may create no file outside the workspace and this directory
        with os.fdopen(os.memfd_create("oxlint-report"), "w+b") as report:
            try:
                proc = launcher.popen(
                    [oxlint.binary, *ARGS, name], ruleset, cwd=f"/proc/self/fd/{oxlint.fd}",
                    stdin=subprocess.DEVNULL, stdout=report, stderr=subprocess.DEVNULL,
                    env={})
            except (OSError, subprocess.SubprocessError) as exc:
                raise failed(f"could not start: {exc}") from None
            try:
                status = proc.wait(timeout=budget.left())
            except subprocess.TimeoutExpired:
                raise budget.timed_out() from None
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            if os.fstat(report.fileno()).st_size > MAX_OUTPUT:
                raise failed(f"printed over {MAX_OUTPUT} bytes")
            report.seek(0)
            return status, report.read()
    finally:
        if ruleset is not None:
            os.close(ruleset)


def failed(what: str) -> Skipped:
    """Skipped for a checker that did not judge the text, saying `what` it did."""
    return Skipped(f"the checker (oxlint) {what}", "checker", 0)


def usable(oxlint: Oxlint) -> bool:
    """Whether this process may still run the binary and write its directory (after a
    --user drop)."""
    try:
        st = os.stat(oxlint.fd)
    except OSError:
        return False
    return (os.access(oxlint.binary, os.X_OK) and stat.S_ISDIR(st.st_mode)
            and st.st_uid == os.geteuid())
