"""The server started by a careless launcher: stdin or stdout closed before it starts, or
a stdout no write can reach. Each is an end of the conversation, never a refused start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from rpc_client import REPO

WRITE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "file.write",
                    "params": {"path": "out.txt", "content": "landed\n"}}).encode() + b"\n"


def _start(workspace: Path, close: int | None = None, **streams) -> subprocess.Popen:
    def closing() -> None:
        if close is not None:
            os.close(close)
    return subprocess.Popen([sys.executable, "-m", "chorus_tools", "--workspace",
                             str(workspace), "--workers", "1", "--allow-root"],
                            cwd=REPO, stderr=subprocess.PIPE, preexec_fn=closing, **streams)


def test_regression_closed_stdin_at_start_refused_the_workspace(tmp_path: Path) -> None:
    """Regression: with fd 0 closed the workspace's directory took number 0, the server
    pointed 0 at /dev/null, and the start failed 'Not a directory' (exit 2)."""
    proc = _start(tmp_path, close=0, stdout=subprocess.PIPE)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    assert out == b"" and b"Not a directory" not in err


def test_regression_closed_stdout_at_start_refused_the_workspace(tmp_path: Path) -> None:
    """Regression: with fd 1 closed the workspace's directory took number 1 and was then
    pointed at stderr: exit 2. Now the requests are served, their answers go nowhere."""
    proc = _start(tmp_path, close=1, stdin=subprocess.PIPE)
    _, err = proc.communicate(WRITE, timeout=60)
    assert proc.returncode == 0, err.decode()
    assert (tmp_path / "out.txt").read_text() == "landed\n"


def test_regression_unwritable_stdout_logged_a_traceback_per_answer(tmp_path: Path) -> None:
    """Regression: a stdout that is a file no write reaches (here opened read-only: EBADF;
    /dev/full's ENOSPC alike) raised out of every answer's write, a traceback each on
    stderr. Now the first failure ends the conversation, as a closed pipe does: exit 0."""
    sink = tmp_path.parent / f"{tmp_path.name}.stdout"
    sink.write_bytes(b"")
    with open(sink, "rb") as unwritable:
        proc = _start(tmp_path, stdin=subprocess.PIPE, stdout=unwritable)
        _, err = proc.communicate(WRITE * 3, timeout=60)
    assert proc.returncode == 0, err.decode()
    assert b"Traceback" not in err
    assert err.count(b"stdout cannot be written") == 1


def test_regression_closed_stderr_sent_a_refusal_to_stdout(tmp_path: Path) -> None:
    """Regression: with fd 2 closed Python's sys.stderr is None, and the start-up refusal
    (print to it) went to stdout, the protocol's stream."""
    proc = subprocess.Popen([sys.executable, "-m", "chorus_tools", "--workspace",
                             str(tmp_path / "missing"), "--allow-root"], cwd=REPO,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            preexec_fn=lambda: os.close(2))
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert out == b""
