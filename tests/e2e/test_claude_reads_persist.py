"""The `claude` set's read-before-write memory outlives a server process (docs/protocol.md,
MCP: the claude set's reads across processes): clients that spawn a server per call can
Read then Edit, and what one process refuses, a fresh one refuses too."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from http_server import HttpEndpoint, beside, initialize
from rpc_client import REPO, RpcServer, error_code


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("one\ntwo\n")
    return root


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


def once(ws: Path, state: Path, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One call in a server process of its own, as the Inspector CLI makes it."""
    with RpcServer(ws, "--tools", "claude", "--workers", "1", "--state", str(state)) as srv:
        return srv.call(method, params)


def test_read_in_one_process_then_edit_in_another(ws: Path, state: Path) -> None:
    assert "result" in once(ws, state, "Read", {"file_path": "notes.txt"})
    edited = once(ws, state, "Edit", {"file_path": "notes.txt", "old_string": "two",
                                      "new_string": "2"})
    assert edited["result"]["replacements"] == 1, edited
    again = once(ws, state, "Edit", {"file_path": "notes.txt", "old_string": "one",
                                     "new_string": "1"})  # its own edit was remembered
    assert "result" in again, again
    assert (ws / "notes.txt").read_text() == "1\n2\n"


def test_a_change_between_the_processes_is_conflict(ws: Path, state: Path) -> None:
    seen = once(ws, state, "Read", {"file_path": "notes.txt"})["result"]["version"]
    (ws / "notes.txt").write_text("changed elsewhere\n")
    reply = once(ws, state, "Edit", {"file_path": "notes.txt", "old_string": "changed",
                                     "new_string": "x"})
    assert error_code(reply) == "conflict", reply
    assert reply["error"]["data"]["expected_version"] == seen
    assert (ws / "notes.txt").read_text() == "changed elsewhere\n"


def test_a_file_never_read_is_not_read(ws: Path, state: Path) -> None:
    once(ws, state, "Read", {"file_path": "notes.txt"})
    (ws / "other.txt").write_text("other\n")
    reply = once(ws, state, "Write", {"file_path": "other.txt", "content": "x"})
    assert error_code(reply) == "not_read", reply
    assert (ws / "other.txt").read_text() == "other\n"


def test_reads_of_one_workspace_do_not_count_in_another(tmp_path: Path, ws: Path,
                                                         state: Path) -> None:
    twin = tmp_path / "twin"
    twin.mkdir()
    (twin / "notes.txt").write_text("one\ntwo\n")
    once(ws, state, "Read", {"file_path": "notes.txt"})
    reply = once(twin, state, "Edit", {"file_path": "notes.txt", "old_string": "two",
                                       "new_string": "2"})
    assert error_code(reply) == "not_read", reply


def test_a_deletion_is_forgotten_by_the_next_process(ws: Path, state: Path) -> None:
    once(ws, state, "Read", {"file_path": "notes.txt"})
    assert "result" in once(ws, state, "Delete", {"file_path": "notes.txt"})
    (ws / "notes.txt").write_text("someone else's\n")
    reply = once(ws, state, "Write", {"file_path": "notes.txt", "content": "x"})
    assert error_code(reply) == "not_read", reply


def test_two_live_processes_share_the_reads(ws: Path, state: Path) -> None:
    args = ("--tools", "claude", "--workers", "1", "--state", str(state))
    with RpcServer(ws, *args) as first, RpcServer(ws, *args) as second:
        first.result("Read", {"file_path": "notes.txt"})
        assert second.result("Edit", {"file_path": "notes.txt", "old_string": "two",
                                      "new_string": "2"})["replacements"] == 1
        # the memory is the workspace's, not a process's: the second's edit left its
        # version there, so the first edits the file as it now is (its find must match)
        assert first.result("Edit", {"file_path": "notes.txt", "old_string": "one",
                                     "new_string": "1"})["replacements"] == 1
    assert (ws / "notes.txt").read_text() == "1\n2\n"


def test_the_state_is_kept_out_of_the_workspace_and_private(ws: Path, state: Path) -> None:
    once(ws, state, "Read", {"file_path": "notes.txt"})
    stores = list(state.iterdir())
    assert len(stores) == 1 and stat.S_IMODE(stores[0].stat().st_mode) == 0o700
    assert not any(p.name.startswith("reads-") for p in ws.rglob("*"))


def test_the_default_state_is_under_xdg_state_home(ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "xdg"
    env = {"XDG_STATE_HOME": str(home)}
    for method, params in [("Read", {"file_path": "notes.txt"}),
                           ("Edit", {"file_path": "notes.txt", "old_string": "two",
                                     "new_string": "2"})]:
        with RpcServer(ws, "--tools", "claude", "--workers", "1", env=env) as srv:
            srv.result(method, params)
    assert len([p for p in (home / "chorus-tools").iterdir() if p.name.startswith("reads-")]) == 1


@pytest.mark.parametrize("where", ["inside", "the workspace itself"])
def test_a_state_dir_inside_the_workspace_is_refused(ws: Path, where: str) -> None:
    state = ws / ".state" if where == "inside" else ws
    done = subprocess.run(
        [sys.executable, "-m", "chorus_tools", "--workspace", str(ws), "--tools", "claude",
         "--state", str(state)], input=b"", capture_output=True, cwd=REPO, timeout=30)
    assert done.returncode == 2
    assert b"--state" in done.stderr and b"inside the workspace" in done.stderr
    assert not (ws / ".state").exists()


def test_a_default_state_inside_the_workspace_stays_in_memory(ws: Path) -> None:
    """A workspace holding the state directory (the home directory as workspace): reads
    are kept for the process only, never written where the agent could read them."""
    env = {"XDG_STATE_HOME": str(ws / ".local" / "state")}
    # the history's default would lie inside too, which refuses the start: not this test's
    with RpcServer(ws, "--tools", "claude", "--workers", "1", "--history", "0",
                   env=env) as srv:
        srv.result("Read", {"file_path": "notes.txt"})
        assert srv.result("Edit", {"file_path": "notes.txt", "old_string": "two",
                                   "new_string": "2"})["replacements"] == 1
    assert not (ws / ".local").exists()
    assert b"inside the workspace" in srv.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="--user needs the server started as root")
def test_the_state_survives_the_privilege_drop(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("one\ntwo\n")
    os.chmod(tmp_path, 0o755)
    os.chown(ws, 65534, 65534)
    os.chown(ws / "notes.txt", 65534, 65534)
    state = tmp_path / "root-only" / "state"
    state.parent.mkdir(mode=0o700)
    args = ("--tools", "claude", "--workers", "1", "--state", str(state), "--user", "nobody")
    with RpcServer(ws, *args) as srv:
        srv.result("Read", {"file_path": "notes.txt"})
    with RpcServer(ws, *args) as srv:
        edited = srv.call("Edit", {"file_path": "notes.txt", "old_string": "two",
                                   "new_string": "2"})
    assert "result" in edited, (edited, srv.stderr)
    assert (ws / "notes.txt").read_text() == "one\n2\n"


def _tool(http: HttpEndpoint, session: str, name: str, arguments: dict[str, Any]) -> Any:
    reply = http.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                               "params": {"name": name, "arguments": arguments}},
                      mcp_session_id=session)
    assert reply.status_code == 200, reply.text
    return reply.json()["result"]


@pytest.mark.parametrize("state_option", ["--state", "in memory"])
def test_read_in_one_http_session_then_edit_in_a_new_session(
        ws: Path, state: Path, state_option: str) -> None:
    """langchain-mcp-adapters' get_tools() opens a session per call: the Read of one
    session lets the Edit of the next through, as across stdio processes (and when the
    reads are kept in memory, because the state directory lies inside the workspace)."""
    where = (["--state", str(state)] if state_option == "--state"
             else ["--history", "0"])
    env = {} if state_option == "--state" else {"XDG_STATE_HOME": str(ws / ".state")}
    with RpcServer(ws, "--tools", "claude", "--workers", "1", "--http", "127.0.0.1:0",
                   *where, env=env) as srv:
        http = beside(srv)
        read = _tool(http, initialize(http), "Read", {"file_path": "notes.txt"})
        assert read["isError"] is False
        edited = _tool(http, initialize(http), "Edit", {
            "file_path": "notes.txt", "old_string": "two", "new_string": "2"})
        assert edited["isError"] is False, edited
        never = _tool(http, initialize(http), "Write", {"file_path": "other.txt",
                                                        "content": "x"})
        assert never["isError"] is False  # a new file needs no Read
        (ws / "third.txt").write_text("3\n")
        refused = _tool(http, initialize(http), "Edit", {
            "file_path": "third.txt", "old_string": "3", "new_string": "three"})
        assert refused["structuredContent"]["error"] == "not_read", refused
    assert (ws / "notes.txt").read_text() == "one\n2\n"
    assert (ws / "third.txt").read_text() == "3\n"


def test_a_stdio_client_and_an_http_session_share_the_reads(ws: Path, state: Path) -> None:
    with RpcServer(ws, "--tools", "claude", "--workers", "1", "--http", "127.0.0.1:0",
                   "--state", str(state)) as srv:
        http = beside(srv)
        srv.result("Read", {"file_path": "notes.txt"})  # over stdio
        session = initialize(http)
        assert _tool(http, session, "Edit", {"file_path": "notes.txt", "old_string": "two",
                                             "new_string": "2"})["isError"] is False
        (ws / "later.txt").write_text("later\n")
        assert _tool(http, session, "Read", {"file_path": "later.txt"})["isError"] is False
        # and the other way: what the HTTP session read, stdio may edit
        assert srv.result("Edit", {"file_path": "later.txt", "old_string": "later",
                                   "new_string": "now"})["replacements"] == 1
    assert (ws / "notes.txt").read_text() == "one\n2\n"
    assert (ws / "later.txt").read_text() == "now\n"
