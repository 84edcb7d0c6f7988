"""--user: a server started as root serves as that user, so the kernel's permission bits
apply to every call (EACCES on a file and on a directory is `permission_denied`), while
the workspace and the records were opened as root before the drop."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from chorus_tools.rpc import cli
from chorus_tools.tools.search.locate import find_ripgrep
from rpc_client import REPO, RpcServer, error_code

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="dropping privileges needs root")
NOBODY = pwd.getpwnam("nobody")


@pytest.fixture
def ws(root: Path) -> Path:
    """A workspace the user owns, holding a root-only file and a root-only directory."""
    (root / "mine.txt").write_text("shared\n")
    (root / "secret.txt").write_text("ROOT-SECRET\n")
    (root / "private").mkdir()
    (root / "private/inner.txt").write_text("ROOT-SECRET\n")
    for path in (root, root / "mine.txt"):
        os.chown(path, NOBODY.pw_uid, NOBODY.pw_gid)
    os.chmod(root / "secret.txt", 0o600)
    os.chmod(root / "private", 0o700)
    return root


@pytest.fixture
def user_ripgrep() -> Iterator[Path]:
    """A copy of ripgrep the user can run: the one found may lie beneath a 0700 home (CI's
    is /root/.pyenv/.../bin/rg), and the server refuses to start with an engine it was
    asked for but cannot run."""
    rg = find_ripgrep(None)[0]
    if rg is None:
        pytest.skip("no ripgrep binary found")
    where = Path(tempfile.mkdtemp(prefix="chorus-rg-"))
    try:
        where.chmod(0o755)
        yield Path(shutil.copy(rg, where / "rg"))
    finally:
        shutil.rmtree(where)


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
def test_a_denied_search_target_is_permission_denied(
        ws: Path, engine: str, user_ripgrep: Path) -> None:
    """file.search of a path the server may not read answered as if it had searched it:
    on ripgrep a root-only directory given as `path` was `file_not_found` ("kept being
    moved or replaced"), and a root-only file an empty success on both engines (the
    agent was told the text is not there). Each is `permission_denied`, as file.read and
    file.list say."""
    with RpcServer(ws, "--user", "nobody", "--workers", "1", "--rg", str(user_ripgrep),
                   "--search-engine", engine) as server:
        replies = server.call_many([
            ("file.search", {"pattern": "ROOT", "path": "secret.txt"}),
            ("file.search", {"pattern": "ROOT", "path": "private"}),
            ("file.search", {"pattern": "ROOT", "path": "secret.txt",
                             "output_mode": "count"}),
            ("file.search", {"pattern": "shared", "path": "mine.txt"}),
        ])
    assert [error_code(r) for r in replies[:3]] == ["permission_denied"] * 3, replies
    assert [r["error"]["data"]["path"] for r in replies[:3]] == [
        "secret.txt", "private", "secret.txt"]
    assert replies[3]["result"]["matches"] == [
        {"path": "mine.txt", "line": 1, "content": "shared"}]


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
def test_python_engine_skipped_an_unreadable_directory_in_a_whole_tree_search(
        ws: Path, engine: str, user_ripgrep: Path) -> None:
    """A whole-tree search with a root-only directory beneath: ripgrep's engine answered
    permission_denied naming it, the python engine (and code.symbols/code.references on
    it) an empty-looking success that had never searched the files in it. Both engines
    now say so, walking the disk and served from the warm tree alike; a search beside it
    still answers."""
    (ws / "code.py").write_text("def shared():\n    return shared\n")
    os.chown(ws / "code.py", NOBODY.pw_uid, NOBODY.pw_gid)
    calls = [("file.search", {"pattern": "shared"}),
             ("file.search", {"pattern": "shared", "output_mode": "count"}),
             ("file.search", {"pattern": "shared", "output_mode": "files_with_matches"}),
             ("code.symbols", {"query": "shared"}),
             ("code.references", {"name": "shared"})]
    with RpcServer(ws, "--user", "nobody", "--workers", "1", "--rg", str(user_ripgrep),
                   "--search-engine", engine) as server:
        cold = server.call_many(calls)
        for _ in range(600):
            if server.call("workspace.status")["result"]["tree"] in ("ready", "off"):
                break
            time.sleep(0.05)
        warm = server.call_many(calls)
        beside = server.result("file.search", {"pattern": "shared", "path": "code.py"})
    for reply in cold + warm:
        assert error_code(reply) == "permission_denied", reply
        assert reply["error"]["data"]["path"] == "private"
        assert "private" in reply["error"]["message"]
    assert [m["line"] for m in beside["matches"]] == [1, 2]


def test_a_dropped_server_cannot_reach_root_only_files(ws: Path, tmp_path: Path) -> None:
    records = tmp_path / "records"  # beneath the 0700 tmp_path: only root can open it
    with RpcServer(ws, "--user", "nobody", "--workers", "2", "--search-engine", "python",
                   "--records", str(records)) as server:
        replies = server.call_many([
            ("file.read", {"path": "secret.txt"}),
            ("file.list", {"path": "private"}),
            ("file.write", {"path": "private/new.txt", "content": "x"}),
            ("file.read", {"path": "private/inner.txt"}),
            ("file.read", {"path": "mine.txt"}),
            ("file.write", {"path": "made.txt", "content": "by nobody\n"}),
            ("file.search", {"pattern": "ROOT-SECRET|shared"}),
        ])
        workers = server.worker_pids()
        ids = {pid: uid for pid in [server.proc.pid, *server.child_pids()]
               if (uid := _uid(pid)) is not None}
        stderr_before_exit = server.stderr
    assert [error_code(r) for r in replies[:4]] == ["permission_denied"] * 4
    assert "ROOT-SECRET" not in json.dumps(replies)
    assert replies[4]["result"]["content"] == "     1\tshared"
    assert replies[5]["result"]["created"] is True
    assert os.stat(ws / "made.txt").st_uid == NOBODY.pw_uid
    assert error_code(replies[6]) == "permission_denied"  # it cannot search private/
    assert len(workers) == 2  # every child, the warm process's too, runs as nobody:
    assert set(ids.values()) == {NOBODY.pw_uid} and set(workers) <= set(ids)
    assert not (ws / "private/new.txt").exists()
    lines = (records / "records.jsonl").read_text().splitlines()
    assert sorted(json.loads(ln)["outcome"] for ln in lines) == ["ok", "permission_denied"]
    assert b"running as root" not in stderr_before_exit


def _uid(pid: int) -> int | None:
    """The effective uid of a process, or None once it has exited (a one-shot child)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    return next(int(ln.split()[2]) for ln in status.splitlines() if ln.startswith("Uid:"))


def test_root_gets_a_one_line_warning_unless_it_allows_root(ws: Path) -> None:
    def stderr_of(*args: str) -> list[str]:
        run = subprocess.run([sys.executable, "-m", "chorus_tools", "--workspace", str(ws),
                              "--workers", "1", *args], input=b"", capture_output=True,
                             cwd=REPO, timeout=60)
        assert run.returncode == 0, run.stderr
        return [ln for ln in run.stderr.decode().splitlines() if "root" in ln]

    warned = stderr_of()
    assert len(warned) == 1 and "--user NAME" in warned[0] and "--allow-root" in warned[0]
    assert stderr_of("--allow-root") == []


def test_unknown_user_is_exit_2_with_one_line(ws: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "chorus_tools", "--workspace", str(ws),
                          "--user", "no-such-user-here"], input=b"", capture_output=True,
                         cwd=REPO, timeout=60)
    assert run.returncode == 2 and run.stdout == b""
    assert run.stderr.decode().splitlines() == [
        "chorus-tools: --user 'no-such-user-here': no such user"]


def test_user_when_not_root_is_exit_2_with_one_line(ws: Path) -> None:
    """Run the real command line in a child that is no longer root."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        sys.stderr = open(w, "w", buffering=1)  # pytest has replaced sys.stderr
        os.setresgid(NOBODY.pw_gid, NOBODY.pw_gid, NOBODY.pw_gid)
        os.setresuid(NOBODY.pw_uid, NOBODY.pw_uid, NOBODY.pw_uid)
        try:
            cli.main(["--workspace", str(ws), "--user", "nobody"])
        except SystemExit as exc:
            sys.stderr.flush()
            os._exit(exc.code if isinstance(exc.code, int) else 1)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as pipe:
        stderr = pipe.read().decode()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 2
    assert len(stderr.splitlines()) == 1 and "needs the server to be started as root" in stderr


def _root_only_ripgrep(tmp_path: Path) -> Path:
    """A copy of ripgrep beneath the 0700 tmp_path, which the user cannot reach."""
    rg = find_ripgrep(None)[0]
    if rg is None:
        pytest.skip("no ripgrep binary found")
    (tmp_path / "bin").mkdir()
    return Path(shutil.copy(rg, tmp_path / "bin" / "rg"))


def test_a_ripgrep_the_user_cannot_run_gives_way_to_the_python_engine(
        ws: Path, tmp_path: Path) -> None:
    rg = _root_only_ripgrep(tmp_path)
    env = {"PATH": f"{rg.parent}:{os.environ['PATH']}"}
    with RpcServer(ws, "--user", "nobody", "--workers", "1", env=env) as server:
        found = server.result("file.search", {"pattern": "shared", "path": "mine.txt"})
    assert found["engine"] == "python" and found["matches"][0]["path"] == "mine.txt"
    assert b"cannot run ripgrep" in server.stderr
    asked = subprocess.run([sys.executable, "-m", "chorus_tools", "--workspace", str(ws),
                            "--user", "nobody", "--rg", str(rg)], input=b"",
                           capture_output=True, cwd=REPO, timeout=60)
    assert asked.returncode == 2 and asked.stdout == b""
    assert len(asked.stderr.splitlines()) == 1 and b"cannot run ripgrep" in asked.stderr


def test_the_index_cache_is_handed_to_the_user_and_reached_through_its_descriptor(
        ws: Path, tmp_path: Path) -> None:
    """--index-cache made by root for --user: the directory is the user's, the records
    the user's (0600), written beneath a 0700 root-only parent the user cannot even
    traverse (the warm process reaches DIR through the descriptor opened before the
    drop)."""
    (ws / "shapes.py").write_text("class Shape:\n    def area(self):\n        return 1\n")
    cache = tmp_path / "cache"
    with RpcServer(ws, "--user", "nobody", "--index-cache", str(cache)) as server:
        for _ in range(600):
            status = server.call("workspace.status")["result"]
            if status["tree"] == "ready" and status.get("symbols") == "ready":
                break
            time.sleep(0.05)
        # by path: a whole-tree query is permission_denied for the root-only private/
        found = server.call("code.symbols", {"query": "area", "path": "shapes.py"})["result"]
    assert status["symbols"] == "ready" and status["symbol_files"] == 1
    assert [s["name_path"] for s in found["symbols"]] == ["Shape/area"]
    assert (cache.stat().st_uid, stat.S_IMODE(cache.stat().st_mode)) == (NOBODY.pw_uid, 0o700)
    (record,) = cache.glob("*/*")
    assert (record.stat().st_uid, stat.S_IMODE(record.stat().st_mode)) == (NOBODY.pw_uid,
                                                                             0o600)
    assert stat.S_IMODE(tmp_path.stat().st_mode) & 0o001 == 0  # nobody cannot traverse it
