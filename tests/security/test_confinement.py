"""Landlock on the workers, proved alone: in a forked child that enters the workers' domain
as a worker does, plain os.open (no openat2) and a sandbox whose openat2 is bypassed both
fail to reach outside the workspace, while everything a worker needs still works."""

from __future__ import annotations

import logging
import os
import pickle
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from chorus_tools.tools.confine import workers as confine

from chorus_tools.tools.read import linecount
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.read.read import read
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.confine import landlock
from chorus_tools.tools.mutate.write import write
from fanout_runner import RG_PATH, run_search

pytestmark = pytest.mark.skipif(landlock.abi_version() == 0,
                                reason="this kernel has no Landlock (the layer under test)")


def in_child(ctx: ToolContext, fn: Callable[[], Any], *, confined: bool = True,
             warm: bool = False) -> Any:
    """Run `fn` in a forked child, after it entered the workers' domain (as
    rpc/process/worker.py does; the warm process's if `warm`), and return what it
    returned or raised."""
    ruleset = confine.worker_ruleset(ctx, warm=warm) if confined else None
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            confine.enter(ruleset)
            outcome: Any = ("ok", fn())
        except BaseException as exc:
            outcome = ("raised", exc)
        os.write(w, pickle.dumps(outcome))
        os._exit(0)
    os.close(w)
    if ruleset is not None:
        os.close(ruleset)
    with os.fdopen(r, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    kind, value = pickle.loads(data)
    if kind == "raised":
        raise value
    return value


@pytest.fixture
def wctx(root: Path) -> ToolContext:
    ws = Workspace(str(root))
    yield ToolContext(ws=ws)
    os.close(ws.root_fd)


def _bypass_openat2(ctx: ToolContext) -> None:
    """A path-handling bug: the sandbox opens with plain openat, following any symlink."""
    ctx.ws._open = lambda root_fd, rel, flags, mode: os.open(rel, flags, mode, dir_fd=root_fd)


def test_plain_open_outside_the_workspace_is_refused(wctx: ToolContext, root: Path,
                                                     outside: Path, tmp_path: Path) -> None:
    (root / "inside.txt").write_text("INSIDE\n")

    def probe() -> dict[str, str]:
        seen = {}
        for name, attempt in [
            ("canary", lambda: open(outside / "canary.txt").read()),
            ("passwd", lambda: open("/etc/passwd").read()),
            ("root home", lambda: os.listdir("/root")),
            ("sibling write", lambda: open(tmp_path / "dropped.txt", "w").write("x")),
            ("tmp write", lambda: open("/tmp/chorus-landlock-probe", "w").write("x")),
            ("inside read", lambda: open(root / "inside.txt").read()),
            ("inside write", lambda: open(root / "new.txt", "w").write("made")),
        ]:
            try:
                seen[name] = f"ok {attempt()!r}"
            except PermissionError:
                seen[name] = "refused"
        return seen

    seen = in_child(wctx, probe)
    assert seen == {"canary": "refused", "passwd": "refused", "root home": "refused",
                    "sibling write": "refused", "tmp write": "refused",
                    "inside read": "ok 'INSIDE\\n'", "inside write": "ok 4"}
    assert not (tmp_path / "dropped.txt").exists()
    assert (root / "new.txt").read_text() == "made"


def test_landlock_holds_when_openat2_is_bypassed(wctx: ToolContext, root: Path,
                                                 outside: Path) -> None:
    (root / "out").symlink_to("../outside")  # a relative link that climbs out
    (root / "etc").symlink_to("/etc")
    _bypass_openat2(wctx)

    # the bypass is real: unconfined, the broken sandbox reads and writes outside
    leaked = in_child(wctx, lambda: read(wctx, path="out/canary.txt")["content"],
                      confined=False)
    assert "CANARY-OUTSIDE" in leaked

    def attack() -> list[str]:
        codes = []
        for call in (lambda: read(wctx, path="out/canary.txt"),
                     lambda: read(wctx, path="etc/passwd"),
                     lambda: write(wctx, path="out/planted.txt", content="pwned"),
                     lambda: write(wctx, path="out/canary.txt", content="pwned")):
            try:
                codes.append(f"answered {call()}")
            except ToolError as err:
                codes.append(err.code)
        return codes

    assert in_child(wctx, attack) == ["permission_denied"] * 4
    assert not (outside / "planted.txt").exists()
    assert (outside / "canary.txt").read_text() == "CANARY-OUTSIDE\n"
    assert not [n for n in os.listdir(outside) if n.startswith(".chorus-tmp-")]


def test_the_threads_of_a_big_count_are_in_the_workers_domain(
        wctx: ToolContext, root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A big file's count starts helper threads (tools/read/linecount.py) after the worker
    entered its domain, so Landlock holds them too."""
    monkeypatch.setattr(linecount, "_threads", lambda: 2)
    (root / "big.txt").write_bytes(b"line\n" * (1 << 20))

    def probe() -> tuple[int, int, str]:
        total = read(wctx, path="big.txt", offset=1, limit=1)["total_lines"]
        helper = linecount._helpers().submit(lambda: open(outside / "canary.txt").read())
        try:
            seen = f"leaked {helper.result()!r}"
        except PermissionError:
            seen = "refused"
        return total, threading.active_count(), seen

    assert in_child(wctx, probe) == (1 << 20, 2, "refused")


def test_a_confined_worker_still_imports_and_serves(wctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("alpha\n")
    module = "xml.dom.minidom"  # stdlib, imported by nothing the server loads
    assert module not in sys.modules

    def work() -> tuple[str, int, str]:
        __import__(module)
        written = write(wctx, path="d/b.txt", content="beta\n")["bytes_written"]
        return read(wctx, path="a.txt", raw=True)["content"], written, \
            run_search(wctx, "python", pattern="beta")["matches"][0]["path"]

    assert in_child(wctx, work) == ("alpha\n", 5, "d/b.txt")


@pytest.mark.skipif(RG_PATH is None, reason="no ripgrep binary found")
def test_ripgrep_runs_inside_the_workers_domain(root: Path) -> None:
    (root / "a.txt").write_text("alpha\n")
    ws = Workspace(str(root))
    ctx = ToolContext(ws=ws, rg_path=RG_PATH)
    try:
        found = in_child(ctx, lambda: run_search(ctx, "ripgrep", pattern="alp"))
    finally:
        os.close(ws.root_fd)
    assert found["engine"] == "ripgrep" and found["matches"][0]["path"] == "a.txt"


def test_the_workers_and_the_watcher_of_a_real_server_are_confined(root: Path) -> None:
    """End to end: the workers, the watcher process and the warm tree's process of the
    running server are in the domain (their /proc status says no_new_privs, which entering
    Landlock sets; the dispatcher has not)."""
    from rpc_client import RpcServer
    with RpcServer(root, "--workers", "2", "--allow-root") as server:
        server.result("file.list", {"pattern": "**"})  # starts the warm process
        server.result("workspace.watch", {})  # forks the watcher process
        while server.result("workspace.status")["tree"] != "ready":  # it answers: confined
            time.sleep(0.01)
        pids = server.live_children()
        assert server.warm_pid() in pids
        assert len(pids) >= 4  # two workers, the watcher and the warm process
        flags = {pid: _status(pid, "NoNewPrivs") for pid in pids}
        own = _status(server.proc.pid, "NoNewPrivs")
    assert own == "0" and flags and set(flags.values()) == {"1"}


def _status(pid: int, field: str) -> str:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return line.split()[1]
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def test_the_warm_trees_watch_limit_reason_names_the_real_limit_inside_the_domain(
        wctx: ToolContext, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression (issue 36): the warm process read fs.inotify.max_user_watches only once
    confined, and Landlock refuses /proc/sys: its reason said `max_user_watches = ?`. Its
    inotify instance, made before the domain as warm_main makes it, now holds the file.
    (The kernel's ENOSPC is played: reaching the real limit would starve this machine.)"""
    import errno
    from inotify_simple import INotify
    from chorus_tools.tools.warm.events import Events, WatchLimit
    limit_file = "/proc/sys/fs/inotify/max_user_watches"
    events = Events()

    def refused(self: INotify, path: str, mask: int) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(INotify, "add_watch", refused)
    directory = os.open(root, os.O_RDONLY | os.O_DIRECTORY)

    def watch() -> str:
        with pytest.raises(WatchLimit) as raised:
            events.watch(directory)
        return str(raised.value)

    try:
        reason = in_child(wctx, watch)
    finally:
        events.close()
        os.close(directory)
    with pytest.raises(PermissionError):  # the domain does refuse the file itself
        in_child(wctx, lambda: open(limit_file).read())
    limit = Path(limit_file).read_text().strip()
    assert f"(fs.inotify.max_user_watches = {limit})" in reason, reason


def test_without_landlock_one_line_says_so_and_openat2_stays(
        wctx: ToolContext, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(landlock, "abi_version", lambda: 0)
    with caplog.at_level(logging.WARNING, logger="chorus.confine"):
        assert confine.worker_ruleset(wctx) is None
    assert [r.getMessage() for r in caplog.records] == [
        "Landlock is not available on this kernel: workers are confined by openat2 alone, "
        "ripgrep by its working directory"]
    (Path(wctx.ws.roots[0]) / "x").symlink_to("/etc/passwd")
    with pytest.raises(ToolError) as err:
        read(wctx, path="x")
    assert err.value.code == "path_outside_workspace"


def test_only_the_warm_domain_reaches_the_index_cache(wctx: ToolContext, outside: Path,
                                                      tmp_path: Path) -> None:
    """--index-cache's directory: the warm process (and its helpers) read and write its
    records; a worker cannot even list it; neither reaches anything else outside."""
    from chorus_tools.tools.warm.record_cache import open_cache
    from chorus_tools.tools.warm.refs import Local
    cache = wctx.index_cache = open_cache(str(tmp_path / "cache"), 1 << 30, os.geteuid(),
                                          os.getegid())
    record = Local(["area"], bytes(28), b"rest", False)
    key = cache.key(b"def area(): pass\n", "python")

    def use() -> tuple[Any, ...]:
        cache.put(key, record)
        try:
            listed: Any = os.listdir(cache.directory)
        except PermissionError:
            listed = "refused"
        try:
            canary: Any = open(outside / "canary.txt").read()
        except PermissionError:
            canary = "refused"
        return cache.get(key), cache.stored, listed, canary

    assert in_child(wctx, use) == (None, 0, "refused", "refused")
    assert os.listdir(cache.directory) == []
    found, stored, listed, canary = in_child(wctx, use, warm=True)
    assert (found, stored, len(listed), canary) == (record, 1, 1, "refused")
    os.close(cache.fd)
