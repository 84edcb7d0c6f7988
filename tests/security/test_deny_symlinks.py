"""Regression (issue 22, fault 5): `--deny 'secrets/**'` was bypassed through a symlink to
the denied directory: file.search {"path": "seclink"} (ripgrep) returned the denied files'
contents and file.list {"path": "seclink"} (both engines) listed them. docs/security.md,
"Read-only and deny": deny patterns match the path after symlinks resolve, for every
method and engine.

Attacked for real over the server: a link to the denied directory, a link to a denied
file, a chain of links, a link into a denied subdirectory, a link inside an allowed
directory, and listings and searches from the root whose globs name the links."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from rpc_client import RpcServer

SECRET = "SECRET-TOKEN"
# every way in: the link named as the path, and each denied file reached through it
LINKS = ["seclink", "chain1", "chain2", "innerlink", "pub/deep"]
FILE_LINKS = ["filelink", "pub/filelink"]
THROUGH = [f"{link}/a.txt" for link in ("seclink", "chain1", "pub/deep")] + [
    "innerlink/b.txt", "seclink/inner/b.txt", *FILE_LINKS]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "secrets" / "inner").mkdir(parents=True)
    (ws / "pub").mkdir()
    (ws / "secrets" / "a.txt").write_text(f"{SECRET} a\n")
    (ws / "secrets" / "inner" / "b.txt").write_text(f"{SECRET} b\n")
    (ws / "pub" / "ok.txt").write_text("PUBLIC ok\n")
    os.symlink("secrets", ws / "seclink")
    os.symlink("chain2", ws / "chain1")  # chain1 -> chain2 -> secrets
    os.symlink("secrets", ws / "chain2")
    os.symlink("secrets/inner", ws / "innerlink")
    os.symlink("../secrets", ws / "pub" / "deep")
    os.symlink("secrets/a.txt", ws / "filelink")
    os.symlink("../secrets/inner/b.txt", ws / "pub" / "filelink")
    return ws


def _leaks(reply: dict) -> list[str]:
    """Denied content or paths beneath a link (or the denied directory) in a reply."""
    if "error" in reply:
        assert reply["error"]["data"]["error"] == "permission_denied", reply
        return []
    result = reply["result"]
    text = str(result)
    paths = [m["path"] for m in result.get("matches", [])] + [
        f if isinstance(f, str) else f["path"] for f in result.get("files", [])] + [
        c["path"] for c in result.get("counts", [])]
    under = tuple(f"{p}/" for p in [*LINKS, "secrets"])
    bad = [p for p in paths if p.startswith(under) or p in FILE_LINKS]
    return bad + ([SECRET] if SECRET in text else [])


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
def test_regression_deny_bypass_through_a_symlink_to_a_denied_directory(
        tree: Path, engine: str) -> None:
    with RpcServer(tree, "--search-engine", engine, "--deny", "secrets/**") as server:
        calls = []
        for path in [*LINKS, *FILE_LINKS]:
            for mode in ("content", "files_with_matches", "count"):
                calls.append(("file.search", {"pattern": "SECRET|PUBLIC", "path": path,
                                              "output_mode": mode}))
            calls.append(("file.search", {"pattern": "SECRET", "path": path,
                                          "include_hidden": True, "include_ignored": True,
                                          "glob": "**"}))
            calls += [("file.list", {"path": path}),
                      ("file.list", {"path": path, "pattern": "**"}),
                      ("file.list", {"path": path, "recursive": True,
                                     "include_hidden": True, "include_ignored": True})]
        # from the root, with globs that name the links: symlinked directories are never
        # descended, links to denied files never listed
        for glob in ("**", "seclink/**", "*/*", "pub/deep/**", "**/*.txt", "chain1/*"):
            calls += [("file.search", {"pattern": "SECRET", "glob": glob}),
                      ("file.list", {"pattern": glob, "include_hidden": True})]
        for rel in THROUGH:
            calls += [("file.read", {"path": rel}), ("file.info", {"path": rel})]
        replies = server.call_many(calls)
        leaked = {f"{m} {p}": bad for (m, p), r in zip(calls, replies)
                  if (bad := _leaks(r))}
        assert not leaked, leaked
        for (method, params), reply in zip(calls, replies):
            if method in ("file.read", "file.info"):
                assert reply["error"]["data"]["error"] == "permission_denied", (params, reply)
        # what is allowed still shows, through a link as directly
        found = server.result("file.search", {"pattern": "PUBLIC", "path": "pub"})
        assert [m["path"] for m in found["matches"]] == ["pub/ok.txt"]
        listed = server.result("file.list", {"pattern": "**"})["files"]
        assert "pub/ok.txt" in [f["path"] for f in listed]
