"""The history's command-line face (docs/protocol.md, History: from the command line), as a
person uses it beside a running server: an agent changes files over JSON-RPC, the person
lists versions and checkpoints, restores and rewinds with `chorus-tools history|restore|
checkpoints|rewind`, the same confinement applies, and what the command line changes is
kept in the history like any change (so it can be undone in turn)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rpc_client import REPO, RpcServer


@pytest.fixture
def state(tmp_path: Path) -> dict[str, str]:
    return {"XDG_STATE_HOME": str(tmp_path / "state")}


def person(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`chorus-tools COMMAND --workspace ROOT ARGS...` as a person types it."""
    command, rest = args[0], args[1:]
    return subprocess.run([sys.executable, "-m", "chorus_tools", command, "--workspace",
                           str(root), *rest], capture_output=True, text=True, cwd=REPO,
                          env={**os.environ, **env}, timeout=60, check=False)


def test_a_person_lists_and_restores_what_an_agent_changed(
        root: Path, state: dict[str, str], tmp_path: Path) -> None:
    (root / "a.txt").write_bytes(b"mine\r\n")
    records = tmp_path / "records"
    with RpcServer(root, "--workers", "1", env=state) as agent:
        agent.result("file.write", {"path": "a.txt", "content": "the agent's\n"})
        listed = person(root, state, "history", "a.txt")
        assert listed.returncode == 0, listed.stderr
        (line,) = listed.stdout.splitlines()
        version = line.split()[0]
        assert "file.write" in line and "6 bytes" in line
        done = person(root, state, "restore", "a.txt", version, "--records", str(records))
        assert done.returncode == 0, done.stderr
        assert (root / "a.txt").read_bytes() == b"mine\r\n"
        # the restore is itself in the history, seen by the running server too
        newest = agent.result("file.history", {"path": "a.txt"})["versions"][0]
        assert newest["method"] == "file.restore" and newest["bytes"] == len("the agent's\n")
        undo = done.stdout.split("undo with: ")[1].split()
        assert undo[-1] == newest["version"]
        again = person(root, state, "restore", "a.txt", undo[-1])
        assert again.returncode == 0 and (root / "a.txt").read_text() == "the agent's\n"
    (record,) = [json.loads(x) for x in (records / "records.jsonl").read_text().splitlines()]
    assert (record["method"], record["path"], record["outcome"]) == ("file.restore", "a.txt",
                                                                      "ok")


def test_restore_without_a_version_undoes_the_last_change(root: Path,
                                                          state: dict[str, str]) -> None:
    with RpcServer(root, "--workers", "1", env=state) as agent:
        agent.result("file.write", {"path": "new.txt", "content": "made by the agent"})
    done = person(root, state, "restore", "new.txt")
    assert done.returncode == 0, done.stderr
    assert not (root / "new.txt").exists()  # it did not exist before the agent made it


def test_a_person_rewinds_to_a_checkpoint(root: Path, state: dict[str, str]) -> None:
    (root / "a.txt").write_text("one\n")
    with RpcServer(root, "--workers", "1", env=state) as agent:
        cp = agent.result("workspace.checkpoint", {"label": "before the agent"})["checkpoint"]
        agent.result("file.write", {"path": "a.txt", "content": "two\n"})
        agent.result("file.write", {"path": "b.txt", "content": "new\n"})
    listed = person(root, state, "checkpoints")
    assert listed.stdout.split()[0] == cp and "before the agent" in listed.stdout
    dry = person(root, state, "rewind", cp, "--dry-run")
    assert dry.returncode == 0 and "-two" in dry.stdout and "+one" in dry.stdout
    assert (root / "b.txt").exists()
    done = person(root, state, "rewind", cp, "--json")
    assert json.loads(done.stdout) == {"restored": ["a.txt"], "deleted": ["b.txt"],
                                       "diff": json.loads(done.stdout)["diff"],
                                       "conflicts": []}
    assert (root / "a.txt").read_text() == "one\n" and not (root / "b.txt").exists()


def test_the_command_line_is_confined_as_the_server_is(
        root: Path, state: dict[str, str], outside: Path) -> None:
    (root / "out").symlink_to(outside)
    (root / "a.txt").write_text("x")
    with RpcServer(root, "--workers", "1", env=state) as agent:
        agent.result("file.write", {"path": "a.txt", "content": "y"})
        version = agent.result("file.history", {"path": "a.txt"})["versions"][0]["version"]
    for args in [("restore", "out/canary.txt", version), ("history", "out/canary.txt"),
                 ("restore", "../outside/canary.txt", version)]:
        done = person(root, state, *args)
        assert done.returncode == 1 and "path_outside_workspace" in done.stderr, args
    denied = person(root, state, "restore", "a.txt", version, "--deny", "*.txt")
    assert denied.returncode == 1 and "permission_denied" in denied.stderr
    assert (outside / "canary.txt").read_text() == "CANARY-OUTSIDE\n"
    assert (root / "a.txt").read_text() == "y"


def test_bad_command_lines_exit_2(root: Path, state: dict[str, str], tmp_path: Path) -> None:
    assert person(tmp_path / "missing", state, "history", "a").returncode == 2
    off = person(root, state, "history", "a.txt", "--history", "0")
    assert off.returncode == 2 and "--history 0" in off.stderr
    inside = person(root, state, "history", "a.txt", "--history", str(root / "h"))
    assert inside.returncode == 2 and "inside the workspace" in inside.stderr
