"""Shared fixtures: a fresh workspace beside a sibling 'outside' directory for escapes."""

from __future__ import annotations

import atexit
import compileall
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import is_hypothesis_test, settings

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.confine.sandbox import Workspace
from fuzzing import examples

# Property tests without their own count run hypothesis's 100 examples, scaled by CHORUS_FUZZ;
# no deadline: timing is never asserted in tests (a loaded machine made it fail at random).
settings.register_profile("chorus", max_examples=examples(100), deadline=None)
settings.load_profile("chorus")

# The servers tests spawn keep the claude set's reads (--state's default) under this run's
# own directory, never in the user's state directory.
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="chorus-tests-state-")
atexit.register(shutil.rmtree, os.environ["XDG_STATE_HOME"], True)


@pytest.fixture(autouse=True, scope="session")
def _state_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Servers the tests spawn keep their default history (docs/protocol.md, History: the
    user's state directory) in a temporary one, not in the home of whoever runs the
    suite."""
    previous = os.environ.get("XDG_STATE_HOME")
    os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.mktemp("state"))
    yield
    if previous is None:
        del os.environ["XDG_STATE_HOME"]
    else:
        os.environ["XDG_STATE_HOME"] = previous


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the workspace, holding a canary that must never leak."""
    out = tmp_path / "outside"
    out.mkdir()
    (out / "canary.txt").write_text("CANARY-OUTSIDE\n")
    return out


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture(params=["openat2", "walk"])
def ctx(request: pytest.FixtureRequest, root: Path) -> ToolContext:
    """A tool context on `root`, once with openat2 and once with the O_NOFOLLOW walk."""
    ws = Workspace(str(root), use_openat2=request.param == "openat2")
    yield ToolContext(ws=ws)
    os.close(ws.root_fd)


def pytest_sessionstart(session: pytest.Session) -> None:
    """The package's bytecode written once, before any server starts (xdist's controller
    or a run without it). Where PYTHONDONTWRITEBYTECODE is set (as on the CI machine)
    nothing else writes it, and each of the suite's thousands of server processes
    compiled every module it imported from source again: a fresh clone's run took 380 s
    instead of 321. An installed wheel has its bytecode; this gives a checkout the same."""
    if not hasattr(session.config, "workerinput"):
        package = Path(__file__).resolve().parent.parent
        for folder in ("chorus_tools", "rpc", "tools"):
            compileall.compile_dir(package / folder, quiet=1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A property test's walk case runs under `long`: its hundreds of examples exercise
    the tool's logic, which the openat2 case already runs; the walk's own path resolution
    is attacked by every example-free test of `ctx` in the default suite."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        if (callspec is not None and callspec.params.get("ctx") == "walk"
                and is_hypothesis_test(getattr(item, "obj", None))):
            item.add_marker(pytest.mark.long)


@pytest.fixture
def no_hang() -> Iterator[None]:
    """Fail a test that blocks (as opening a FIFO would) instead of hanging the run."""
    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError("the test blocked (was a FIFO opened?)")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs to fill for real (ENOSPC); skipped, saying so, where it cannot be
    mounted (it needs root)."""
    mount = tmp_path / "fs"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs",
                           str(mount)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip("cannot mount a small tmpfs to fill for real (needs root): "
                    + done.stderr.decode(errors="replace").strip())
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
