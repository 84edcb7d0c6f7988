"""Bug: file.search of a path the server may not read answered as if it had searched it.
On ripgrep a root-only directory given as `path` was `file_not_found` ("kept being moved
or replaced"), and a root-only file given as `path` was an empty success on both engines
(ripgrep's "fallback" named it, the python engine skipped it): the agent was told the
text is not there. Each is `permission_denied`, as file.read and file.list say
(docs/protocol.md, errors)."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest

from rpc_client import RpcServer, error_code

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="dropping privileges needs root")
NOBODY = pwd.getpwnam("nobody")


@pytest.fixture
def ws(root: Path) -> Path:
    (root / "mine.txt").write_text("shared\n")
    (root / "secret.txt").write_text("ROOT-SECRET\n")
    (root / "private").mkdir()
    (root / "private/inner.txt").write_text("ROOT-SECRET\n")
    os.chown(root, NOBODY.pw_uid, NOBODY.pw_gid)
    os.chmod(root / "secret.txt", 0o600)
    os.chmod(root / "private", 0o700)
    return root


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
def test_a_denied_search_target_is_permission_denied(ws: Path, engine: str) -> None:
    with RpcServer(ws, "--user", "nobody", "--workers", "1",
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
