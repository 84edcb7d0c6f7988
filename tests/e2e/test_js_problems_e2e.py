"""JavaScript and TypeScript problems over the real server (issue 44, docs/protocol.md
Diagnostics): oxlint runs from a worker inside its Landlock domain, a rename in a .ts file
reports every read as introduced, the note says it, and the private directory the texts
pass through lies outside the workspace and is gone when the server exits. Without
oxlint (--oxlint none) nothing is claimed; a hanging oxlint is skipped past
--syntax-timeout and the edit lands."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import tempfile
from pathlib import Path

import pytest
from e2e_support import E2EServer, _children, _program, wait_for
from fake_elf import HANG, write_elf
from rpc_client import RpcServer, alive

from chorus_tools.tools.patch.oxlint import find_oxlint

NOBODY = pwd.getpwnam("nobody")

APP = ("export function parseConfig(text: string): Config { return { text }; }\n"
       "interface Config { text: string }\n"
       "const a = parseConfig('a');\nexport const b = [a, parseConfig('b')];\n")
RENAME = [{"find": "function parseConfig", "replace": "function loadConfig"}]


def test_a_rename_in_a_ts_file_reports_every_read(tmp_path: Path) -> None:
    root, scratch = tmp_path / "ws", tmp_path / "tmp"
    root.mkdir()
    scratch.mkdir()
    (root / "app.ts").write_text(APP)
    with RpcServer(root, "--tools", "native,claude", env={"TMPDIR": str(scratch)}) as server:
        got = server.result("file.patch", {"path": "app.ts", "patches": RENAME})
        assert got["diagnostics"] == {
            "errors": [], "total": 0, "introduced": 0, "problems_checked": True,
            "problems": [
                {"line": 3, "column": 11, "code": "no-undef",
                 "message": "'parseConfig' is not defined", "introduced": True},
                {"line": 4, "column": 22, "code": "no-undef",
                 "message": "'parseConfig' is not defined", "introduced": True}],
            "problems_total": 2, "problems_introduced": 2}
        server.result("Read", {"file_path": str(root / "app.ts")})
        edited = server.result("Edit", {"file_path": str(root / "app.ts"),
                                        "old_string": "const a = parseConfig",
                                        "new_string": "const a = loadConfig"})
        assert edited["diagnostics"]["problems_introduced"] == 0  # one fixed, none new
        assert edited["diagnostics"]["problems_total"] == 1
        typo = server.call("tools/call", {"name": "Write", "arguments": {
            "file_path": str(root / "b.js"), "content": "console.log(lodConfig);\n"}})
        texts = [c["text"] for c in typo["result"]["content"]]
        assert ("Note: this edit introduced 1 problem: line 1: 'lodConfig' is not defined "
                "(no-undef)") in "\n".join(texts)
        [private] = _private(scratch)
        assert os.listdir(private) == ["oxlintrc.json"]
    assert sorted(os.listdir(root)) == ["app.ts", "b.js"]
    assert _private(scratch) == []  # removed at exit


def _private(tmp: Path) -> list[Path]:
    return list(tmp.glob("chorus-oxlint-*"))


def test_without_oxlint_nothing_is_claimed(tmp_path: Path) -> None:
    (tmp_path / "app.ts").write_text(APP)
    with RpcServer(tmp_path, "--oxlint", "none") as server:
        got = server.result("file.patch", {"path": "app.ts", "patches": RENAME})
        assert got["diagnostics"] == {"errors": [], "total": 0, "introduced": 0,
                                      "problems_checked": False}
        assert server.result("file.check", {"path": "app.ts"})["diagnostics"] == {
            "errors": [], "total": 0, "introduced": 0, "problems_checked": False}


def test_an_oxlint_that_is_no_binary_ends_the_start(tmp_path: Path) -> None:
    script = tmp_path / "oxlint"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    with RpcServer(tmp_path, "--oxlint", str(script)) as server:
        assert server.proc.wait(timeout=15) == 2
    assert b"--oxlint" in server.stderr


def test_a_hanging_oxlint_is_skipped_and_the_edit_lands(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.ts").write_text(APP)
    fake = write_elf(tmp_path / "oxlint", HANG)
    with RpcServer(root, "--oxlint", str(fake), "--syntax-timeout", "0.5",
                   "--problems-gate", "introduced") as server:
        got = server.result("file.patch", {"path": "app.ts", "patches": RENAME})
        assert got["diagnostics"]["problems"] == {"skipped": "parsing took over 0.5 s"}
        assert server.result("file.read", {"path": "app.ts", "raw": True})["content"] \
            == APP.replace("function parseConfig", "function loadConfig")
        assert server.result("file.write", {"path": "c.js", "content": "x;\n"})[
            "diagnostics"]["problems"] == {"skipped": "parsing took over 0.5 s"}


@pytest.mark.skipif(os.geteuid() != 0, reason="dropping privileges needs root")
@pytest.mark.parametrize("reachable", [True, False])
def test_after_a_drop_to_another_user(root: Path, reachable: bool) -> None:
    """The private directory is handed to --user; an oxlint that user cannot run says
    problems_checked false (and why, on stderr), never a failed edit."""
    (root / "app.ts").write_text(APP)
    os.chown(root, NOBODY.pw_uid, NOBODY.pw_gid)
    os.chown(root / "app.ts", NOBODY.pw_uid, NOBODY.pw_gid)
    place = Path(tempfile.mkdtemp(dir="/tmp"))  # outside /root, where CI's venv lies
    try:
        binary = place / "oxlint"
        shutil.copyfile(str(find_oxlint()), binary)
        binary.chmod(0o755)
        place.chmod(0o755 if reachable else 0o700)
        with RpcServer(root, "--user", "nobody", "--oxlint", str(binary)) as server:
            got = server.result("file.patch", {"path": "app.ts", "patches": RENAME})
            stderr = server.stderr
    finally:
        shutil.rmtree(place)
    if reachable:
        assert got["diagnostics"]["problems_introduced"] == 2
    else:
        assert got["diagnostics"] == {"errors": [], "total": 0, "introduced": 0,
                                      "problems_checked": False}
        assert b"cannot run oxlint" in stderr
    assert (root / "app.ts").read_text() == APP.replace("function parseConfig",
                                                        "function loadConfig")


def test_a_worker_killed_mid_check_takes_its_oxlint_with_it(tmp_path: Path) -> None:
    """A worker killed mid-check (as a cancelled or timed-out call's is): the checker it
    was running dies with it (PR_SET_PDEATHSIG), and the server answers the next call."""
    root = tmp_path / "ws"
    root.mkdir()
    fake = write_elf(tmp_path / "oxlint", HANG)
    with E2EServer(root, "--oxlint", str(fake), "--syntax-timeout", "60",
                   "--workers", "1") as server:
        server.request("file.write", {"path": "a.js", "content": "x;\n"})
        running: list[tuple[int, int]] = []  # (worker, its checker)

        def started() -> bool:
            running[:] = [(w, p) for w in _children(server.proc.pid) for p in _children(w)
                          if _program(p) == bytes(fake)]
            return bool(running)
        wait_for(started)
        [(worker, checker)] = running
        os.kill(worker, signal.SIGKILL)
        reply = server.recv()
        assert reply["error"]["data"]["error"] == "worker_crashed"
        wait_for(lambda: not alive(checker))
        assert "files" in server.result("file.list", {})  # served again
