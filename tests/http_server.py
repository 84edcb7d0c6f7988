"""The real server started with `--http 127.0.0.1:0` (stdin from /dev/null, so HTTP only):
its port is read from the one `serving HTTP on http://HOST:PORT/mcp` line it prints on
stderr. Stopped with SIGTERM, and it must exit 0."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import httpx

from rpc_client import REPO, RpcServer

SERVING = re.compile(rb"serving HTTP on (http://[^/\s]+)/mcp")
ACCEPT = "application/json, text/event-stream"


class HttpEndpoint:
    """Requests to a running server's HTTP address (`base`, e.g. http://127.0.0.1:PORT)."""

    def __init__(self, base: str = "", token: str | None = None) -> None:
        self.base = base
        self.token = token

    @property
    def mcp(self) -> str:
        return self.base + "/mcp"

    @property
    def rpc(self) -> str:
        return self.base + "/rpc"

    def headers(self, **more: str) -> dict[str, str]:
        """Accept as MCP clients send it, the token when there is one, and `more`."""
        found = {"accept": ACCEPT, "content-type": "application/json"}
        if self.token is not None:
            found["authorization"] = f"Bearer {self.token}"
        return {**found, **{k.replace("_", "-"): v for k, v in more.items()}}

    def post(self, path: str, message: Any, **headers: str) -> httpx.Response:
        return httpx.post(self.base + path, json=message, headers=self.headers(**headers),
                          timeout=30)


def beside(server: RpcServer, timeout: float = 30.0) -> HttpEndpoint:
    """The HTTP side of a stdio server started with `--http 127.0.0.1:0` (its address read
    from its stderr)."""
    deadline = time.monotonic() + timeout
    while not (match := SERVING.search(server.stderr)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert match, server.stderr.decode(errors="replace")
    return HttpEndpoint(match.group(1).decode())


class HttpServer(HttpEndpoint):
    def __init__(self, workspace: str | os.PathLike, *args: str, token: str | None = None,
                 tmp: Path | None = None, stdin: Any = subprocess.DEVNULL,
                 address: str = "127.0.0.1:0",
                 preexec_fn: Callable[[], None] | None = None) -> None:
        super().__init__("", token)
        options = list(args)
        if token is not None:
            assert tmp is not None
            token_file = tmp / "token"
            token_file.write_text(token + "\n")
            options += ["--http-token-file", str(token_file)]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "chorus_tools", "--workspace", str(workspace),
             "--allow-root", "--http", address, *options],
            stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO,
            preexec_fn=preexec_fn)
        self.stderr = b""
        self._found = threading.Event()
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        if not self._found.wait(30):
            self.proc.kill()
            raise RuntimeError(f"no address on stderr: {self.stderr!r}")

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr += line
            if not self._found.is_set() and (match := SERVING.search(line)):
                self.base = match.group(1).decode()
                self._found.set()
        self._found.set()

    def stop(self, timeout: float = 30.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()

    def __enter__(self) -> HttpServer:
        return self

    def __exit__(self, *exc: object) -> None:
        code = self.stop()
        time.sleep(0)  # the stderr thread ends with the process
        assert code == 0, (code, self.stderr.decode(errors="replace")[-2000:])


def initialize(server: HttpEndpoint, version: str = "2025-11-25") -> str:
    """A new MCP session over raw HTTP: its Mcp-Session-Id."""
    reply = server.post("/mcp", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
    assert reply.status_code == 200, reply.text
    session = reply.headers["mcp-session-id"]
    assert server.post("/mcp", {"jsonrpc": "2.0", "method": "notifications/initialized"},
                       mcp_session_id=session).status_code == 202
    return session
