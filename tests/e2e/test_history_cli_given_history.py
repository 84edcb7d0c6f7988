"""The history's command line with a history given by `--history DIR` (docs/protocol.md,
History: from the command line; every byte option takes K, M or G).

Bugs: `restore` printed an undo command without the `--history DIR` it ran on (and
without quoting a path with a space), so the command printed failed: it looked in the
default place, where that version is not. And `--history-bytes 256M`, which the server
takes, was refused by the commands as not an integer.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

from rpc_client import REPO, RpcServer


def person(*args: str) -> subprocess.CompletedProcess[str]:
    """`chorus-tools ARGS...` as a person types it (no state directory of theirs used)."""
    return subprocess.run([sys.executable, "-m", "chorus_tools", *args], capture_output=True,
                          text=True, cwd=REPO, timeout=60, check=False)


def test_the_undo_command_restore_prints_works_as_printed(tmp_path: Path) -> None:
    root, hist = tmp_path / "ws", tmp_path / "my history"
    root.mkdir()
    (root / "my notes.txt").write_text("mine\n")
    with RpcServer(root, "--workers", "1", "--history", str(hist)) as agent:
        agent.result("file.write", {"path": "my notes.txt", "content": "the agent's\n"})
    records = tmp_path / "records"
    done = person("restore", "--workspace", str(root), "--history", str(hist),
                  "--history-bytes", "256M", "--records", str(records), "my notes.txt")
    assert done.returncode == 0, done.stderr
    assert (root / "my notes.txt").read_text() == "mine\n"
    undo = shlex.split(done.stdout.split("undo with: ")[1])
    assert undo[0] == "chorus-tools"
    again = person(*undo[1:])
    assert again.returncode == 0, again.stderr
    assert (root / "my notes.txt").read_text() == "the agent's\n"
    assert len((records / "records.jsonl").read_text().splitlines()) == 2  # both recorded


def test_history_bytes_takes_a_unit_as_the_servers_does(tmp_path: Path) -> None:
    root, hist = tmp_path / "ws", tmp_path / "hist"
    root.mkdir()
    listed = person("history", "--workspace", str(root), "--history", str(hist),
                    "--history-bytes", "1G", "a.txt")
    assert listed.returncode == 0, listed.stderr
    assert "no changes kept" in listed.stdout
    bad = person("history", "--workspace", str(root), "--history", str(hist),
                 "--history-bytes", "lots", "a.txt")
    assert bad.returncode == 2 and "--history-bytes" in bad.stderr
