"""What the end-to-end tests need beyond tests/rpc_client.py: replies read in either
framing, requests sent in the LSP framing, slow requests made from sparse files, and a way
to see which worker is running one (its open file descriptors in /proc)."""

from __future__ import annotations

import json
from contextlib import contextmanager
import os
import time
from pathlib import Path
from typing import Any, Callable, Iterator

from rpc_client import RpcServer, alive

LINE, LSP = "line", "lsp"
MIB = 1 << 20
GIB = 1 << 30
# Scanned whole by file.read to count its lines: ~0.6 s, then it answers. Long
# enough that a test sees it running and acts (a signal, a second request) while it does,
# even on CI's busy CPUs: at 2 GiB (0.3 s) a read once ended before the test's next step.
SLOW_SIZE = 4 * GIB
# Minutes of scanning: a request on it is answered only if something stops it.
ENDLESS_SIZE = 1024 * GIB


class Reply(bytes):
    """A reply's body, tagged with the framing it arrived in."""

    framing = LINE


class LspReply(Reply):
    framing = LSP


class E2EServer(RpcServer):
    """RpcServer that also reads Content-Length framed replies (LSP base protocol)."""

    def _pump(self) -> None:
        out = self.proc.stdout
        while line := out.readline():
            if not line.lower().startswith(b"content-length:"):
                self._lines.put(Reply(line))
                continue
            size = int(line.partition(b":")[2])
            while out.readline().strip():  # the rest of the header block
                pass
            self._lines.put(LspReply(out.read(size)))
        self._lines.put(None)

    def send_lsp(self, message: Any, headers: str = "") -> None:
        body = json.dumps(message).encode()
        self.send_raw(f"Content-Length: {len(body)}\r\n{headers}\r\n".encode() + body)

    def recv_raw(self, timeout: float = 15.0) -> Reply:
        """The next reply's bytes, unparsed, tagged with its framing."""
        raw = self._lines.get(timeout=timeout)
        if raw is None:
            raise EOFError("the server closed its stdout")
        return raw

    def recv_framed(self, timeout: float = 15.0) -> tuple[Any, str]:
        """The next reply and the framing it was written in."""
        raw = self._lines.get(timeout=timeout)
        if raw is None:
            raise EOFError("the server closed its stdout")
        return json.loads(raw), raw.framing

    def recv_by_id(self, count: int, timeout: float = 30.0) -> dict[Any, list[Any]]:
        """The next `count` replies, grouped by id (in arrival order within an id)."""
        replies: dict[Any, list[Any]] = {}
        for _ in range(count):
            reply = self.recv(timeout)
            replies.setdefault(reply["id"], []).append(reply)
        return replies

    def rest(self, timeout: float = 30.0) -> list[Any]:
        """End of input, then every reply still to come, until the server closes stdout."""
        self.proc.stdin.close()
        replies = []
        while True:
            try:
                replies.append(self.recv(timeout))
            except EOFError:
                return replies

    def fence(self) -> None:
        """A request answered in the main process: when its reply is the next one read,
        nothing sent before it produced an unexpected reply first."""
        rid = self.request("rpc.discover", rid=f"fence-{time.monotonic_ns()}")
        reply = self.recv()
        assert reply["id"] == rid, reply

    def workers(self, count: int, guard: float = 15.0) -> list[int]:
        """The live child pids, once there are exactly `count` of them: the workers, when
        the one-shot background process started with them has finished."""
        end = time.monotonic() + guard
        while True:
            pids = [pid for pid in self.worker_pids() if alive(pid)]
            if len(pids) == count:
                return pids
            if time.monotonic() > end:
                raise TimeoutError(f"expected {count} workers, have {pids}")
            time.sleep(0.01)

    def running(self, path: Path, guard: float = 15.0) -> int:
        """The pid of the worker that has `path` open, once one has (a request on it
        is running, not queued)."""
        target = str(path)
        end = time.monotonic() + guard
        while time.monotonic() < end:
            for pid in self.worker_pids():
                if target in _open_files(pid):
                    return pid
            time.sleep(0.005)
        raise TimeoutError(f"no worker opened {target}")


    def searchers(self, guard: float = 15.0) -> list[int]:
        """The pids of the ripgrep processes the workers run, once there is one."""
        end = time.monotonic() + guard
        while time.monotonic() < end:
            found = [pid for worker in self.worker_pids() for pid in _children(worker)
                     if _program(pid).endswith(b"rg")]
            if found:
                return found
            time.sleep(0.005)
        raise TimeoutError("no ripgrep process started")


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _program(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    except OSError:
        return b""


def _open_files(pid: int) -> set[str]:
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return set()
    found = set()
    for fd in fds:
        try:
            found.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            pass
    return found


def draining(server: RpcServer, guard: float = 15.0) -> None:
    """Wait for the server's "draining" line (at --log-level info): the signal has been
    handled, so a request sent now is refused, not queued behind the work in flight."""
    wait_for(lambda: b"draining" in server.stderr, guard)


def wait_for(condition: Callable[[], bool], guard: float = 15.0) -> None:
    """Poll until `condition()` holds (a hang guard, not a timing check)."""
    end = time.monotonic() + guard
    while not condition():
        if time.monotonic() > end:
            raise TimeoutError("condition never held")
        time.sleep(0.005)


def sparse_text(path: Path, size: int) -> Path:
    """A text file of a few hundred short lines, padded with a hole to `size` bytes: its
    first 8 KiB hold no NUL, so file.read treats it as text and scans it all to count its
    lines, while it costs no disk."""
    path.write_bytes(b"".join(b"line %d of a slow file\n" % i for i in range(1, 501)))
    os.truncate(path, size)
    return path


def slow_workspace(root: Path) -> Path:
    """`a.txt` (two lines), `slow.txt` (a read that takes a moment) and `endless.txt` (one
    that lasts past any test): the workspace of the tests that stop or wait on a read."""
    (root / "a.txt").write_text("alpha\nbeta\n")
    sparse_text(root / "slow.txt", SLOW_SIZE)
    sparse_text(root / "endless.txt", ENDLESS_SIZE)
    return root


def endless_tree(directory: Path, links: int = 20000) -> Path:
    """A tree ripgrep needs many minutes to search for a word it lacks: one 64 MiB text
    file under `links` hard-linked names, so it costs 64 MiB of disk."""
    directory.mkdir()
    line = b"the quick brown fox jumps over the lazy dog 0123456789\n"
    first = directory / "f0.txt"
    first.write_bytes(line * (64 * MIB // len(line)))
    for i in range(1, links):
        os.link(first, directory / f"f{i}.txt")
    return directory


def request(method: str, params: Any = None, rid: Any = None) -> dict[str, Any]:
    """A request object (a notification when `rid` is None)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    if rid is not None:
        message["id"] = rid
    return message


def error_of(reply: dict[str, Any]) -> tuple[int, str]:
    """(code, data.error) of an error response."""
    assert "error" in reply, reply
    return reply["error"]["code"], reply["error"]["data"]["error"]


@contextmanager
def tool_set_server(root: Path, toolset: str, engine: str = "auto") -> Iterator[RpcServer]:
    """A `--tools` set's server on `root` with one search engine, both noted on it: the
    dialect tests share one per module and engine, on a tree no test changes."""
    with RpcServer(root, "--tools", toolset, "--workers", "2", "--search-engine",
                   engine) as srv:
        srv.root = root  # type: ignore[attr-defined]
        srv.engine = engine  # type: ignore[attr-defined]
        yield srv
