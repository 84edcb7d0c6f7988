"""The syntax guard works where workers are walled in: under a server started as root with
`--user` (the Python installation lies in /root, unreadable once privileges are dropped, so
every parser must be loaded before the drop) and inside the workers' Landlock domain (which
reads only what Python needs). A guard that failed to load its parsers there would either
crash (internal_error) or, worse, let a broken edit through."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest
from rpc_client import RpcServer

NOBODY = pwd.getpwnam("nobody")

# a file per parser family, the looser-tier patch that would break it, and one that is fine
FILES = {
    "a.py": ("def f():\n    return 1\n", "    return 1  ", "    return (1", "    return 2"),
    "a.ts": ("function f(a: number) {\n  return a;\n}\n", "  return a;  ", "  return a +;",
             "  return a + 1;"),
    "a.go": ("package main\n\nfunc f() int {\n\treturn 1\n}\n", "\treturn 1  ", "\treturn 1 +",
             "\treturn 2"),
    "a.yaml": ("a:\n  b: 1\n", "  b: 1  ", "  b: [1", "  b: 2"),
    "Makefile": ("all:\n\techo hi\n", "\techo hi  ", "    echo hi", "\techo bye"),
}


def _exercise(server: RpcServer, root: Path) -> None:
    for name, (before, find, bad, good) in FILES.items():
        reply = server.call("file.patch", {"path": name, "patches": [
            {"find": find, "replace": bad}]})
        assert reply.get("error", {}).get("code") == -32019, (name, reply)
        assert (root / name).read_text() == before
        reply = server.call("file.patch", {"path": name, "patches": [
            {"find": find, "replace": good}]})
        assert "result" in reply, (name, reply)
        assert reply["result"]["matches"][0]["tier"] == "indentation"


def _workspace(root: Path, owner: pwd.struct_passwd | None = None) -> None:
    for name, (before, *_rest) in FILES.items():
        (root / name).write_text(before)
        if owner is not None:
            os.chown(root / name, owner.pw_uid, owner.pw_gid)
    if owner is not None:
        os.chown(root, owner.pw_uid, owner.pw_gid)


@pytest.mark.skipif(os.geteuid() != 0, reason="dropping privileges needs root")
def test_the_guard_parses_after_the_server_dropped_to_another_user(root: Path) -> None:
    # where the interpreter lies under /root (as on CI's machine), its files are out of
    # that user's reach after the drop: the parsers must have been loaded before it
    _workspace(root, NOBODY)
    with RpcServer(root, "--user", "nobody", "--workers", "2") as server:
        _exercise(server, root)
        stderr = server.stderr
    assert b"Traceback" not in stderr


def test_the_guard_parses_inside_the_workers_landlock_domain(root: Path) -> None:
    _workspace(root)
    with RpcServer(root, "--workers", "1") as server:
        _exercise(server, root)
        stderr = server.stderr
    assert b"Traceback" not in stderr and b"Landlock is not available" not in stderr
