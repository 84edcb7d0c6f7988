"""--http's command line (docs/protocol.md, HTTP): the address forms, the token file's
checks (exit 2 with one line), and that a stdio-only server never imports the HTTP
library (start-up does not pay for --http)."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from rpc_client import REPO


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "chorus_tools", *args], capture_output=True,
                          text=True, cwd=REPO, timeout=60, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("address, host, port", [
    ("8080", "127.0.0.1", 8080), ("0", "127.0.0.1", 0), ("localhost:9", "localhost", 9),
    ("[::1]:7", "::1", 7), ("0.0.0.0:80", "0.0.0.0", 80)])
def test_http_addresses(address: str, host: str, port: int) -> None:
    from chorus_tools.rpc.cli import parser
    args = parser().parse_args(["--workspace", ".", "--http", address])
    assert args.http == (host, port)


@pytest.mark.parametrize("address", ["host:", "x:70000", "abc", "1.2.3.4:-1"])
def test_bad_http_addresses_exit_2(tmp_path: Path, address: str) -> None:
    done = run("--workspace", str(tmp_path), "--http", address)
    assert done.returncode == 2 and "[HOST:]PORT" in done.stderr


@pytest.mark.parametrize("content, why", [(None, "No such file"), ("", "is empty"),
                                           ("\n  \n", "is empty")])
def test_an_unusable_token_file_exits_2(tmp_path: Path, content: str | None,
                                        why: str) -> None:
    token = tmp_path / "token"
    if content is not None:
        token.write_text(content)
    done = run("--workspace", str(tmp_path), "--http", "0", "--http-token-file", str(token))
    assert done.returncode == 2 and why in done.stderr and done.stderr.count("\n") == 1


def test_a_token_file_without_http_exits_2(tmp_path: Path) -> None:
    done = run("--workspace", str(tmp_path), "--http-token-file", str(tmp_path))
    assert done.returncode == 2 and "needs --http" in done.stderr


def test_stdio_only_start_up_never_imports_the_http_library() -> None:
    probe = ("import sys, chorus_tools.rpc.cli, chorus_tools.rpc.wire.stdio; "
             "print(sorted(m for m in sys.modules if m == 'h11' or m.startswith('h11.') "
             "or m.endswith('wire.http') or m.endswith('http_conn')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          cwd=REPO, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


def test_a_port_already_taken_exits_2(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run("--workspace", str(tmp_path), "--allow-root", "--http", str(port))
    assert done.returncode == 2
    assert f"--http 127.0.0.1:{port}: Address already in use" in done.stderr


def test_the_http_bounds_have_their_documented_defaults() -> None:
    from chorus_tools.rpc.cli import parser
    args = parser().parse_args(["--workspace", ".", "--http", "0"])
    assert (args.http_max_head_bytes, args.http_head_timeout, args.http_idle_timeout,
            args.http_max_connections) == (65536, 10.0, 60.0, 256)


@pytest.mark.parametrize("limit, most", [(256, 256 - 64), (1024, 256), (4096, 256)])
def test_the_connection_bound_leaves_a_quarter_of_the_descriptors(limit: int,
                                                                  most: int) -> None:
    """Under a real RLIMIT_NOFILE (set in a child process), the connections allowed at
    once plus the descriptors open plus the reserve fit under the limit."""
    code = ("import os, resource; resource.setrlimit(resource.RLIMIT_NOFILE, "
            f"({limit}, {limit})); from chorus_tools.rpc.wire.http_limits import "
            "connection_cap; print(connection_cap(256), len(os.listdir('/proc/self/fd')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO, timeout=60)
    cap, open_now = map(int, done.stdout.split())
    assert 1 <= cap <= most
    assert cap + open_now + max(64, limit // 4) <= limit
    assert (cap < 256) == (limit == 256)
