"""A real orchestrator's view of the server: spawn it, speak JSON-RPC over its pipes.

End-to-end tests use this instead of calling anything in-process, so they exercise the
same path an orchestrator does: process start, framing, dispatch, the pool, shutdown.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Mapping

REPO = Path(__file__).resolve().parent.parent


def alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_gone(pids: list[int], timeout: float = 15.0) -> None:
    """Wait until every process in `pids` has died (a hang guard, not a timing check)."""
    end = time.monotonic() + timeout
    while any(alive(pid) for pid in pids):
        if time.monotonic() > end:
            raise TimeoutError(f"processes still alive: {[p for p in pids if alive(p)]}")
        time.sleep(0.005)


def error_code(reply: dict[str, Any]) -> str | None:
    """The data.error name of an error response, None for a success."""
    return reply["error"]["data"]["error"] if "error" in reply else None


def snapshot(root: str | os.PathLike, *, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """Every entry under `root` (not following symlinks): kind, content or link text,
    mode and mtime. Two equal snapshots mean nothing was created, changed or deleted."""
    found: dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) not in skip]
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            st = os.lstat(full)
            if os.path.islink(full):
                body: Any = ("link", os.readlink(full))
            elif os.path.isfile(full):
                body = ("file", Path(full).read_bytes())
            else:
                body = ("dir" if os.path.isdir(full) else "other", None)
            found[os.path.relpath(full, root)] = (body, st.st_mode, st.st_mtime_ns)
    return found


class RpcServer:
    def __init__(self, workspace: str | os.PathLike, *args: str,
                 env: Mapping[str, str | None] | None = None,
                 command: list[str] | None = None,
                 preexec_fn: Callable[[], None] | None = None) -> None:
        """`env` adds to the environment (None unsets a name); `command` replaces
        `python -m chorus_tools` (a launcher that starts it)."""
        self.proc = subprocess.Popen(
            [*(command or [sys.executable, "-m", "chorus_tools"]), "--workspace",
             str(workspace), *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=REPO, env={k: v for k, v in {**os.environ, **(env or {})}.items()
                           if v is not None}, preexec_fn=preexec_fn)
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._ids = itertools.count(1)
        self.stderr = b""
        threading.Thread(target=self._pump, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _drain_stderr(self) -> None:
        for line in self.proc.stderr:
            self.stderr += line

    def send_raw(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_raw(json.dumps(message).encode() + b"\n")

    def recv(self, timeout: float = 15.0) -> Any:
        line = self._lines.get(timeout=timeout)
        if line is None:
            raise EOFError("the server closed its stdout")
        return json.loads(line)

    def has_reply(self) -> bool:
        """True when an answer has arrived and not been read yet."""
        return not self._lines.empty()

    def no_more(self, wait: float = 0.3) -> bool:
        """True when nothing else arrives within `wait` seconds."""
        try:
            line = self._lines.get(timeout=wait)
        except queue.Empty:
            return True
        self._lines.put(line)
        return False

    def request(self, method: str, params: Any = None, rid: Any = None) -> Any:
        """Send one request and return its id (answers may come in any order)."""
        rid = next(self._ids) if rid is None else rid
        message = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return rid

    def call(self, method: str, params: Any = None, timeout: float = 15.0) -> dict[str, Any]:
        """A request and its response (the full response object)."""
        rid = self.request(method, params)
        reply = self.recv(timeout)
        assert reply.get("id") == rid, reply
        return reply

    def result(self, method: str, params: Any = None) -> Any:
        reply = self.call(method, params)
        assert "result" in reply, reply
        return reply["result"]

    def error(self, method: str, params: Any = None) -> dict[str, Any]:
        reply = self.call(method, params)
        assert "error" in reply, reply
        return reply["error"]

    def notify(self, method: str, params: Any = None) -> None:
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def call_many(self, calls: list[tuple[str, Any]],
                  timeout: float = 60.0) -> list[dict[str, Any]]:
        """Send every request before reading any answer (all in flight at once); return
        the responses in the order of `calls`."""
        ids = [self.request(method, params) for method, params in calls]
        replies: dict[Any, dict[str, Any]] = {}
        while len(replies) < len(ids):
            reply = self.recv(timeout)
            replies[reply["id"]] = reply
        return [replies[rid] for rid in ids]

    def worker_pids(self) -> list[int]:
        """The server's workers (see `named`)."""
        return self.named("chorus-worker")

    def named(self, name: str) -> list[int]:
        """The server's children that gave themselves `name` (chorus-worker, -warm,
        -watcher, -oneshot). One forked a moment ago may not have named itself yet; a
        one-shot process still alive under load was once counted as a worker."""
        return [pid for pid in self.child_pids() if _name(pid) == name]

    def child_pids(self) -> list[int]:
        path = f"/proc/{self.proc.pid}/task/{self.proc.pid}/children"
        return [int(p) for p in Path(path).read_text().split()]

    def warm_pid(self) -> int | None:
        """The warm tree's process, if one runs."""
        return next(iter(self.named("chorus-warm")), None)

    def live_children(self) -> list[int]:
        """The server's child processes that are running (not zombies)."""
        return [pid for pid in self.child_pids() if alive(pid)]

    def close(self, timeout: float = 15.0) -> int:
        """End of input, then wait for the exit code."""
        if self.proc.stdin and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
        return self.proc.wait(timeout)

    def __enter__(self) -> RpcServer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            try:
                self.close(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _name(pid: int) -> str | None:
    """A process's name (/proc/PID/comm), or None once it has gone."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return None
