"""workspace.watch over the real server: workspace/didChange notifications for changes
made by another process and by the server's own mutations, filtered by ignore and deny
rules, patterns and symlinks; a burst of 10,000 files arrives debounced and complete; bad
watches get errors (docs/protocol.md, "Errors"); a killed watcher process is replaced and
its watches go on (with a resync notice); watches end with the server.

Waits are hang guards, not timing checks (the latency is measured in the report)."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rpc_client import RpcServer, alive, wait_gone

GUARD = 15.0


class Watching(RpcServer):
    """A server whose replies and workspace/didChange notifications are read apart."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.notes: list[dict] = []

    def recv_reply(self) -> dict:
        while True:
            message = self.recv(GUARD)
            if "id" in message:
                return message
            self.notes.append(message)

    def rpc(self, method: str, params: dict) -> dict:
        rid = self.request(method, params)
        reply = self.recv_reply()
        assert reply["id"] == rid, reply
        return reply

    def watch(self, **params: Any) -> str:
        reply = self.rpc("workspace.watch", params)
        assert "result" in reply, reply
        return reply["result"]["watch_id"]

    def changes_until(self, done: Any) -> list[tuple[str, str, str]]:
        """(watch_id, type, path) of every change notified, until `done(changes)`."""
        end = time.monotonic() + GUARD
        while True:
            seen = [(n["params"]["watch_id"], c["type"], c["path"])
                    for n in self.notes for c in n["params"]["changes"]]
            if done(seen):
                return seen
            try:
                message = self.recv(max(0.01, end - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no such change arrived; saw {seen}") from None
            assert "id" not in message, message
            assert message["method"] == "workspace/didChange", message
            self.notes.append(message)


def has(*wanted: tuple[str, str]):
    return lambda seen: set(wanted) <= {(t, p) for _, t, p in seen}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src/a.py").write_text("a\n")
    (root / "old.txt").write_text("old\n")
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    return root


def test_changes_from_another_process_and_the_servers_own_writes(ws: Path) -> None:
    with Watching(ws, "--workers", "2") as server:
        wid = server.watch()
        subprocess.run([sys.executable, "-c", "import pathlib; p = pathlib.Path('new.txt');"
                        "p.write_text('x'); pathlib.Path('src/a.py').write_text('b\\n');"
                        "pathlib.Path('old.txt').unlink()"], cwd=ws, check=True)
        seen = server.changes_until(has(("added", "new.txt"), ("modified", "src/a.py"),
                                        ("deleted", "old.txt")))
        assert {w for w, _, _ in seen} == {wid}
        server.notes.clear()
        assert "result" in server.rpc("file.write", {"path": "src/a.py", "content": "c\n"})
        assert "result" in server.rpc("file.move", {"source": "new.txt",
                                                    "destination": "src/moved.txt"})
        assert "result" in server.rpc("dir.create", {"path": "d/e"})
        seen = server.changes_until(has(("modified", "src/a.py"), ("deleted", "new.txt"),
                                        ("added", "src/moved.txt"), ("added", "d/e")))
        assert not any(".chorus-tmp-" in p for _, _, p in seen), seen
        assert ("added", "src/a.py") not in {(t, p) for _, t, p in seen}


def test_ignored_denied_and_unmatched_paths_do_not_arrive(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(str(outside), ws / "out")
    (ws / "real").mkdir()
    os.symlink("real", ws / "alias")
    with Watching(ws, "--workers", "1", "--deny", "**/.env", "--deny", "secret") as server:
        plain = server.watch()
        py_only = server.watch(path="src", pattern="**/*.py")
        everything = server.watch(include_ignored=True)
        (ws / "x.log").write_text("log")
        (ws / "build").mkdir()
        (ws / "build/out.bin").write_text("bin")
        (ws / ".env").write_text("SECRET=1")
        (ws / "secret").mkdir()
        (ws / "secret/key").write_text("k")
        os.symlink(".env", ws / "env-link")
        (outside / "far.txt").write_text("outside")
        (ws / "real/r.txt").write_text("r")
        (ws / "src/b.txt").write_text("b")
        (ws / "src/c.py").write_text("c")
        (ws / "zz-last.txt").write_text("sentinel")
        seen = server.changes_until(lambda s: (plain, "added", "zz-last.txt") in s and (
            everything, "added", "zz-last.txt") in s and (py_only, "added", "src/c.py") in s)
    by_watch: dict[str, set[str]] = {}
    for wid, _, path in seen:
        by_watch.setdefault(wid, set()).add(path)
    assert by_watch[plain] == {"real/r.txt", "src/b.txt", "src/c.py", "zz-last.txt"}
    assert by_watch[py_only] == {"src/c.py"}
    assert by_watch[everything] == by_watch[plain] | {"x.log", "build", "build/out.bin"}


def test_ten_thousand_files_at_once_arrive_debounced_and_complete(ws: Path) -> None:
    names = {f"burst/f{i:05d}.txt" for i in range(10_000)}
    with Watching(ws, "--workers", "1") as server:
        server.watch(path=".", pattern="burst/*.txt")
        (ws / "burst").mkdir()
        for name in names:
            (ws / name).touch()
        seen = server.changes_until(lambda s: len({p for _, _, p in s}) >= len(names))
    assert sorted(p for _, _, p in seen) == sorted(names)  # every path, each once
    assert {t for _, t, _ in seen} == {"added"}  # a touch's close changes nothing more
    assert len(server.notes) < 200  # debounced: batches, not a message per file


def test_a_tree_moved_in_and_removed_reports_each_entry(ws: Path, tmp_path: Path) -> None:
    staging = tmp_path / "staging"
    (staging / "pkg/sub").mkdir(parents=True)
    (staging / "pkg/sub/m.py").write_text("m")
    (staging / "pkg/n.py").write_text("n")
    with Watching(ws, "--workers", "1") as server:
        server.watch()
        os.rename(staging / "pkg", ws / "pkg")
        tree = {"pkg", "pkg/sub", "pkg/sub/m.py", "pkg/n.py"}
        server.changes_until(has(*(("added", p) for p in tree)))
        server.notes.clear()
        assert server.rpc("dir.delete", {"path": "pkg", "recursive": True})["result"][
            "removed"] == 4
        seen = server.changes_until(has(*(("deleted", p) for p in tree)))
        assert len(seen) == len(tree)


@pytest.mark.parametrize("params, code", [
    ({"path": "old.txt"}, "not_a_directory"),
    ({"path": "missing"}, "file_not_found"),
    ({"path": "../"}, "path_outside_workspace"),
    ({"path": "src", "pattern": "a["}, "invalid_pattern"),
    ({"path": 3}, "invalid_params"),
    ({"recursive": True}, "invalid_params"),
])
def test_bad_watches_are_refused(ws: Path, params: dict, code: str) -> None:
    with Watching(ws, "--workers", "1") as server:
        reply = server.rpc("workspace.watch", params)
        assert reply["error"]["data"]["error"] == code, reply
        for bad in ({"watch_id": "w404"}, {}, {"watch_id": 1}):
            reply = server.rpc("workspace.unwatch", bad)
            assert reply["error"]["data"]["error"] == "invalid_params", reply


def test_unwatch_stops_notifications_and_watches_end_with_the_server(ws: Path) -> None:
    with Watching(ws, "--workers", "1") as server:
        first, second = server.watch(), server.watch()
        (ws / "one.txt").write_text("1")
        server.changes_until(lambda s: {(first, "one.txt"), (second, "one.txt")} <= {
            (w, p) for w, _, p in s})
        assert server.rpc("workspace.unwatch", {"watch_id": first})["result"] == {
            "success": True}
        server.notes.clear()
        (ws / "two.txt").write_text("2")
        seen = server.changes_until(has(("added", "two.txt")))
        assert {w for w, _, _ in seen} == {second}
        children = server.live_children()
        assert len(server.worker_pids()) == 1 and len(_watchers(server)) == 1
        assert server.close() == 0
    wait_gone(children)
    assert not any(alive(pid) for pid in children)


def test_a_killed_watcher_is_replaced_and_each_watch_resyncs(ws: Path) -> None:
    """Regression: the watcher's death ended every watch silently, long before the
    server ended."""
    with Watching(ws, "--workers", "1") as server:
        wid = server.watch(pattern="*.txt")
        for round_, name in enumerate(("one.txt", "two.txt")):  # the second dies at once
            watchers = _watchers(server)
            assert len(watchers) == 1, watchers
            (watcher,) = watchers
            os.kill(watcher, signal.SIGKILL)
            server.changes_until(lambda _, want=round_ + 1: len(
                [n for n in server.notes if n["params"].get("resync")]) == want)
            resyncs = [n["params"] for n in server.notes if n["params"].get("resync")]
            assert resyncs[-1] == {"watch_id": wid, "changes": [], "resync": True}
            (ws / name).write_text("new")
            server.changes_until(has(("added", name)))
        assert len(_watchers(server)) == 1


def test_a_watcher_killed_while_a_watch_starts_is_replaced_and_the_watch_goes_on(
        ws: Path) -> None:
    """Regression (issue 36): the watcher killed after it took a watch but before the
    watch was live answered internal_error; now a new watcher takes it, the request
    answers its watch_id, and the watch reports changes."""
    with Watching(ws, "--workers", "1") as server:
        end = time.monotonic() + GUARD
        rid = server.request("workspace.watch", {"pattern": "*.txt"})
        while not (watchers := set(_watchers(server))):
            assert time.monotonic() < end and not server.has_reply(), "no watcher started"
        os.kill(watchers.pop(), signal.SIGKILL)  # it waits ~0.2 s for watchfiles' start
        reply = server.recv_reply()
        assert reply["id"] == rid and "result" in reply, reply
        wid = reply["result"]["watch_id"]
        (ws / "later.txt").write_text("new")
        assert (wid, "added", "later.txt") in server.changes_until(has(("added", "later.txt")))
        assert len(_watchers(server)) == 1  # the new one


def _watchers(server: Watching) -> list[int]:
    """The server's live watcher processes (a killed one may linger as a zombie)."""
    return [pid for pid in server.named("chorus-watcher") if alive(pid)]
