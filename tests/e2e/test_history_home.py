"""Where the history lives when nobody chose (docs/protocol.md, History: where it lives):
the server starts wherever it can run. A service user without a home, a workspace that is
the home directory or holds the state directory, the whole file system as workspace: each
falls back (a private directory beside the temporary files, or memory) with one warning
line naming `--history DIR|0`, and serves writes and their history. An unreadable
workspace ends the start. Histories of workspaces that are gone, and empty ones, are
dropped when a server starts, and all of them together stay within
`--history-total-bytes`."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from rpc_client import REPO, RpcServer

from chorus_tools.rpc.dispatch.history_home import workspace_key

NOBODY = 65534
# Python lives under /root (0700) here: the launcher imports everything as root, then
# becomes nobody, as a service manager starting it as nobody would leave it, before the
# server reads a single option.
AS_NOBODY = [sys.executable, "-c", f"""
import os, sys, sysconfig
from chorus_tools.rpc.process.privileges import preload
from chorus_tools.rpc.cli import main
preload()
sysconfig.get_paths()  # read lazily from the installation, which nobody cannot read here
os.setgroups([]); os.setresgid({NOBODY}, {NOBODY}, {NOBODY})
os.setresuid({NOBODY}, {NOBODY}, {NOBODY})
main(sys.argv[1:])
"""]
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="becoming nobody needs root")


@pytest.fixture
def public(tmp_path: Path) -> Iterator[Path]:
    """A directory nobody can use (pytest's own are root's and 0700)."""
    path = Path(tempfile.mkdtemp(prefix="chorus-home-"))
    path.chmod(0o777)
    yield path
    subprocess.run(["rm", "-rf", str(path)], check=False)


def warnings(stderr: bytes) -> list[str]:
    return [line for line in stderr.decode().splitlines() if "WARNING" in line]


def write_then_history(srv: RpcServer, path: str = "a.txt") -> None:
    srv.result("file.write", {"path": path, "content": "one"})
    srv.result("file.write", {"path": path, "content": "two"})
    (version, _) = srv.result("file.history", {"path": path})["versions"]
    srv.result("file.restore", {"path": path, "version": version["version"]})


@as_root
def test_a_service_user_without_a_home_starts_and_keeps_its_history(public: Path) -> None:
    """The fault: as nobody (HOME=/nonexistent) it exited 2 on the default history."""
    ws, tmp = public / "ws", public / "tmp"
    for d in (ws, tmp):
        d.mkdir(mode=0o777)
        d.chmod(0o777)
    env = {"HOME": "/nonexistent", "XDG_STATE_HOME": None, "TMPDIR": str(tmp)}
    with RpcServer(ws, "--workers", "1", "--tools", "claude", env=env,
                   command=AS_NOBODY) as srv:
        write_then_history(srv)
        srv.result("Read", {"file_path": "a.txt"})
        srv.result("Edit", {"file_path": "a.txt", "old_string": "one", "new_string": "1"})
    assert (ws / "a.txt").read_text() == "1"
    private = tmp / f"chorus-tools-{NOBODY}"
    assert (private / "history" / workspace_key(str(ws)) / "log.jsonl").stat().st_size > 0
    assert private.stat().st_uid == NOBODY and private.stat().st_mode & 0o777 == 0o700
    history, reads = warnings(srv.stderr)
    assert "--history DIR" in history and "--history 0" in history and str(private) in history
    assert "--state DIR" in reads


def test_a_home_that_does_not_exist_is_not_made_for_the_history(tmp_path: Path) -> None:
    """The fault: as root (who may make any directory) with HOME naming no directory, the
    default history made HOME and ~/.local/state beneath it. A missing home is passed
    over, as for a service user who cannot make it: the private place, one warning."""
    ws, tmp, home = tmp_path / "ws", tmp_path / "tmp", tmp_path / "no-such-home"
    ws.mkdir()
    tmp.mkdir()
    env = {"HOME": str(home), "XDG_STATE_HOME": None, "TMPDIR": str(tmp)}
    with RpcServer(ws, "--workers", "1", "--tools", "claude", env=env) as srv:
        write_then_history(srv)
        srv.result("Read", {"file_path": "a.txt"})
    assert not home.exists()
    assert list((tmp / f"chorus-tools-{os.geteuid()}" / "history").iterdir())
    (history, reads) = [w for w in warnings(srv.stderr) if "running as root" not in w]
    assert str(home) in history and "does not exist" in history and "--history 0" in history
    assert "--state DIR" in reads


@pytest.mark.parametrize("where", ["the home directory", "a directory holding the state"])
def test_a_workspace_holding_the_default_place_falls_back_outside_it(
        tmp_path: Path, where: str) -> None:
    """The fault: --workspace $HOME exited 2, the default history lying inside."""
    ws, tmp = tmp_path / "ws", tmp_path / "tmp"
    ws.mkdir()
    tmp.mkdir()
    env = ({"HOME": str(ws), "XDG_STATE_HOME": None} if where == "the home directory"
           else {"XDG_STATE_HOME": str(ws / "state")})
    with RpcServer(ws, "--workers", "1", "--tools", "claude",
                   env={**env, "TMPDIR": str(tmp)}) as srv:
        write_then_history(srv)
        srv.result("Read", {"file_path": "a.txt"})
    assert sorted(p.name for p in ws.iterdir()) == ["a.txt"]  # nothing kept inside
    assert list((tmp / f"chorus-tools-{os.geteuid()}" / "history").iterdir())
    (history, reads) = [w for w in warnings(srv.stderr) if "running as root" not in w]
    assert "would lie inside the workspace" in history and "--history 0" in history


def test_the_whole_file_system_as_workspace_keeps_the_history_in_memory(
        tmp_path: Path) -> None:
    """Every place on disk lies inside `/`: the history lives in the process."""
    target = (tmp_path / "a.txt").relative_to("/").as_posix()
    with RpcServer("/", "--workers", "1", "--index-memory", "0",
                   env={"TMPDIR": str(tmp_path)}) as srv:
        write_then_history(srv, target)
        cp = srv.result("workspace.checkpoint", {})["checkpoint"]
        srv.result("file.write", {"path": target, "content": "three"})
        srv.result("workspace.rewind", {"checkpoint": cp})
    assert (tmp_path / "a.txt").read_text() == "one"
    (line,) = [w for w in warnings(srv.stderr) if "running as root" not in w]
    assert "in memory" in line and "--history DIR" in line


@as_root
@pytest.mark.parametrize("how", ["started as nobody", "--user nobody"])
def test_an_unreadable_workspace_ends_the_start(public: Path, how: str) -> None:
    """The fault: it started, then every call failed."""
    ws = public / "ws"
    ws.mkdir(mode=0o700)  # root's: nobody can neither list nor enter it
    command = (AS_NOBODY if how == "started as nobody"
               else [sys.executable, "-m", "chorus_tools", "--user", "nobody"])
    done = subprocess.run([*command, "--workspace", str(ws), "--history", "0"],
                          input=b"", capture_output=True, cwd=REPO, timeout=60)
    assert done.returncode == 2
    (line,) = done.stderr.decode().splitlines()[-1:]
    assert str(ws) in line and "Permission denied" in line


def _history(root: Path, name: str, workspace: Path | None, log: bytes, age: float) -> Path:
    """A history as a server leaves it, last used `age` seconds ago."""
    path = root / name
    (path / "packs").mkdir(parents=True)
    (path / "packs" / "0-a").write_bytes(os.urandom(100_000) if log else b"")
    (path / "log.jsonl").write_bytes(log)
    if workspace is not None:
        (path / "workspace").write_bytes(os.fsencode(str(workspace)))
    then = time.time() - age
    for file in [*path.rglob("*"), path]:
        os.utime(file, (then, then))
    return path


def test_histories_of_gone_workspaces_and_empty_ones_are_dropped(tmp_path: Path) -> None:
    """The fault: every start left a history behind (663 of them, 19 MB)."""
    state, ws = tmp_path / "state", tmp_path / "ws"
    ws.mkdir()
    home = state / "chorus-tools" / "history"
    alive_ws, gone_ws, held_ws = (tmp_path / n for n in ("alive", "gone", "held"))
    alive_ws.mkdir()
    held_ws.mkdir()
    gone = _history(home, "gone", gone_ws, b"{}\n", 60)
    empty = _history(home, "empty", alive_ws, b"", 60)
    legacy = _history(home, "legacy", None, b"{}\n", 60)  # made before the workspace file
    alive = _history(home, "alive", alive_ws, b"{}\n", 60)
    env = {"XDG_STATE_HOME": str(state)}
    with RpcServer(held_ws, "--workers", "1", env=env) as holder:  # a server holds it
        holder.result("file.write", {"path": "x", "content": "y"})
        held_ws.joinpath("x").unlink()
        held_ws.rmdir()  # its workspace is gone, but a server still runs on it
        with RpcServer(ws, "--workers", "1", env=env) as srv:
            srv.result("file.write", {"path": "a.txt", "content": "x"})
        assert not gone.exists() and not empty.exists()
        assert legacy.exists() and alive.exists()
        assert (home / workspace_key(str(held_ws))).exists()
        assert (home / workspace_key(str(ws))).exists()


def test_all_histories_together_stay_within_the_total_budget(tmp_path: Path) -> None:
    state, ws = tmp_path / "state", tmp_path / "ws"
    ws.mkdir()
    home = state / "chorus-tools" / "history"
    (tmp_path / "w").mkdir()
    ages = {"oldest": 300, "older": 200, "newer": 100}
    made = {name: _history(home, name, tmp_path / "w", b"{}\n", age)
            for name, age in ages.items()}
    with RpcServer(ws, "--workers", "1", "--history-total-bytes", "250000",
                   env={"XDG_STATE_HOME": str(state)}) as srv:
        srv.result("file.write", {"path": "a.txt", "content": "x"})
    assert [name for name, path in made.items() if path.exists()] == ["older", "newer"]
    assert sum(f.stat().st_blocks * 512 for f in home.rglob("*") if f.is_file()) <= 250_000


def test_an_unusable_history_given_ends_the_start_suggesting_history_0(root: Path,
                                                                        tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    done = subprocess.run([sys.executable, "-m", "chorus_tools", "--workspace", str(root),
                           "--history", str(tmp_path / "file" / "h")], input=b"",
                          capture_output=True, cwd=REPO, timeout=60)
    assert done.returncode == 2
    (line,) = done.stderr.decode().splitlines()
    assert "--history" in line and "--history 0" in line and "Not a directory" in line
