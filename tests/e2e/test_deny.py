"""--deny GLOB and --read-only over the real server: denied paths are permission_denied for
every method, as given or through symlinks, and never appear in a listing or a search on
either engine, whatever include_hidden/include_ignored/glob say; a read-only server refuses
every mutation and changes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rpc_client import REPO, RpcServer, error_code, snapshot
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.confine.deny import DenyRules
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.confine.policy import guard
from chorus_tools.tools.registry import METHODS, listed_methods
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.task import Task

DENY = ("--deny", "**/.env", "--deny", "*.pem", "--deny", ".git/**", "--deny", "vault")
SECRET = "TOKEN-SECRET"
ALLOWED = ("ignored.txt", "ok.txt", "sub/ok.py", ".hidden.txt")
DENIED_PATHS = [".env", "sub/.env", "keys/a.pem", ".git/config", "vault/v.txt",
                "link-env", "sub/link-pem", "dirlink/a.pem", "vault-link/v.txt",
                "keys/../.env", "./sub/.env"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    for rel in (".env", "sub/.env", "keys/a.pem", ".git/config", "vault/v.txt", *ALLOWED):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(f"{'TOKEN-OK' if rel in ALLOWED else SECRET} {rel}\n")
    (ws / ".gitignore").write_text("ignored.txt\n")
    os.symlink(".env", ws / "link-env")
    os.symlink("../keys/a.pem", ws / "sub/link-pem")
    os.symlink("keys", ws / "dirlink")
    os.symlink("vault", ws / "vault-link")
    return ws


def denied(reply: dict) -> bool:
    return error_code(reply) == "permission_denied" and reply["error"]["code"] == -32010


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
def test_denied_paths_are_refused_by_every_method(tree: Path, engine: str) -> None:
    before = snapshot(tree)
    calls = []
    for path in DENIED_PATHS:
        calls += [("file.read", {"path": path}), ("file.info", {"path": path}),
                  ("file.search", {"pattern": "TOKEN", "path": path}),
                  ("file.write", {"path": path, "content": "x"}),
                  ("file.patch", {"path": path, "patches": [{"find": "TOKEN",
                                                             "replace": "x"}]}),
                  ("file.delete", {"path": path}),
                  ("file.move", {"source": path, "destination": "stolen"}),
                  ("file.move", {"source": "ok.txt", "destination": path,
                                 "overwrite": True})]
    for path in ("vault", "vault-link", ".git/hooks"):
        calls += [("file.list", {"path": path}), ("dir.create", {"path": path}),
                  ("dir.delete", {"path": path, "recursive": True}),
                  ("workspace.watch", {"path": path})]
    calls += [("file.move", {"source": "keys", "destination": "public"}),  # holds a.pem
              ("dir.delete", {"path": "keys", "recursive": True}),
              ("dir.delete", {"path": "sub", "recursive": True}),
              ("file.write", {"path": "new.pem", "content": "x"})]
    with RpcServer(tree, "--workers", "2", "--search-engine", engine, *DENY) as server:
        replies = server.call_many(calls)
    wrong = [(c, r) for c, r in zip(calls, replies) if not denied(r)]
    assert not wrong, wrong
    assert all(SECRET not in json.dumps(r) for r in replies)
    assert snapshot(tree) == before


def visible_paths(reply: dict) -> list[str]:
    result = reply["result"]
    return ([f["path"] for f in result.get("files", []) if isinstance(f, dict)]
            + [f for f in result.get("files", []) if isinstance(f, str)]
            + [m["path"] for m in result.get("matches", [])]
            + [c["path"] for c in result.get("counts", [])])


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
def test_denied_paths_never_appear_in_listings_or_searches(tree: Path, engine: str) -> None:
    wide = {"include_hidden": True, "include_ignored": True}
    calls = [("file.list", {}), ("file.list", wide), ("file.list", {"path": ".git", **wide}),
             ("file.list", {"pattern": "**", **wide}), ("file.list", {"pattern": "**"}),
             ("file.list", {"pattern": "**/*.pem", **wide}),
             ("file.list", {"path": "dirlink/", **wide}),
             ("file.list", {"path": "sub", "pattern": "*", **wide})]
    for mode in ("content", "files_with_matches", "count"):
        for extra in ({}, wide, {**wide, "glob": [".env", "*.pem", "**"]},
                      {**wide, "path": "sub"}, {**wide, "glob": "!ok.txt"}):
            calls.append(("file.search", {"pattern": "TOKEN", "output_mode": mode,
                                          "max_results": 1000, **extra}))
    with RpcServer(tree, "--workers", "2", "--search-engine", engine, *DENY) as server:
        replies = server.call_many(calls)
    seen = set()
    for call, reply in zip(calls, replies):
        assert "result" in reply, (call, reply)
        assert SECRET not in json.dumps(reply), (call, reply)
        seen.update(visible_paths(reply))
    assert not {p for p in seen if p.endswith((".env", ".pem")) or p.startswith(
        (".git/", "vault")) or p in ("link-env", "sub/link-pem")}, seen
    assert {"ok.txt", "ignored.txt", ".hidden.txt", "sub/ok.py", "dirlink", ".git"} <= seen
    searched = {p for c, r in zip(calls, replies) if c[0] == "file.search"
                for p in visible_paths(r)}
    assert searched == set(ALLOWED)


def test_read_only_refuses_every_mutation_and_changes_nothing(tree: Path,
                                                              tmp_path: Path) -> None:
    before = snapshot(tree)
    calls = [("file.write", {"path": "new.txt", "content": "x"}),
             ("file.write", {"path": "ok.txt", "content": "x"}),
             ("file.patch", {"path": "ok.txt", "patches": [{"find": "OK", "replace": "x"}]}),
             ("file.patch", {"path": "ok.txt", "dry_run": True,
                             "patches": [{"find": "OK", "replace": "x"}]}),
             ("file.delete", {"path": "ok.txt"}),
             ("file.move", {"source": "ok.txt", "destination": "moved.txt"}),
             ("dir.create", {"path": "newdir"}),
             ("dir.delete", {"path": "sub", "recursive": True})]
    records = tmp_path / "records"
    with RpcServer(tree, "--workers", "2", "--read-only", "--records", str(records)) \
            as server:
        replies = server.call_many(calls)
        assert server.result("file.read", {"path": "ok.txt"})["total_lines"] == 1
        assert server.result("file.list", {})["files"]
    for reply in replies:
        assert denied(reply), reply
        assert "read-only" in reply["error"]["message"]
    assert snapshot(tree) == before
    lines = (records / "records.jsonl").read_text().splitlines()
    assert [json.loads(ln)["outcome"] for ln in lines] == ["permission_denied"] * 7


def test_read_only_leaves_mutating_methods_out_of_the_tool_list() -> None:
    listed = {m.name for m in listed_methods(("native",), read_only=True)}
    everything = {m.name for m in listed_methods(("native",))}
    mutating = {name for name, m in METHODS.items() if m.mutating and m.mcp_tool}
    assert {"file.move", "dir.create", "file.write"} <= mutating <= everything
    assert listed == everything - mutating and "file.read" in listed


def test_help_names_the_options_and_a_bad_deny_glob_exits_2(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "chorus_tools", "--help"], cwd=REPO,
                         capture_output=True, text=True)
    assert "--read-only" in run.stdout and "--deny GLOB" in run.stdout
    for bad in ("a[", "!x"):
        run = subprocess.run([sys.executable, "-m", "chorus_tools", "--workspace",
                              str(tmp_path), "--deny", bad], cwd=REPO, input="",
                             capture_output=True, text=True)
        assert run.returncode == 2 and "--deny" in run.stderr and run.stdout == ""


@pytest.mark.parametrize("path, denied_, matched", [
    (".env", True, True), ("a/b/.env", True, True), ("x.pem", True, True),
    ("d/x.pem", True, True), (".git/config", True, True), (".git", False, False),
    ("vault", True, True), ("vault/deep/x", True, False), ("vaults", False, False),
    ("sub/vault/x", True, False), ("ok.txt", False, False), (".envrc", False, False),
])
def test_deny_rules_match_as_ripgrep_globs_and_cover_whole_trees(
        path: str, denied_: bool, matched: bool) -> None:
    rules = DenyRules(["**/.env", "*.pem", ".git/**", "vault"])
    assert rules.denies(path) is denied_ and rules.matches(path) is matched


@pytest.mark.parametrize("use_openat2", [True, False])
def test_every_open_is_judged_where_it_really_led(tree: Path, use_openat2: bool) -> None:
    """In-process, on openat2 and on the O_NOFOLLOW walk: the workspace refuses an open
    that reaches a denied path through a symlinked file or directory, and the worker's
    guard refuses a call naming one, before any tool runs."""
    ws = Workspace(str(tree), use_openat2=use_openat2,
                   deny=DenyRules(["**/.env", "*.pem", "vault"]))
    ctx = ToolContext(ws=ws)
    try:
        for rel in ("link-env", "dirlink/a.pem", "vault-link/v.txt", "vault-link"):
            with pytest.raises(ToolError) as err:
                ws.open(rel, os.O_RDONLY)
            assert err.value.code == "permission_denied", rel
        os.close(ws.open("dirlink", os.O_PATH))  # the link's own directory is allowed
        with pytest.raises(ToolError) as err:
            guard(ctx, _task("file.delete", "link-env"))
        assert err.value.code == "permission_denied"
        guard(ctx, _task("file.read", "ok.txt"))
        read_only = ToolContext(ws=ws, read_only=True)
        for name, method in METHODS.items():
            if method.mutating:
                with pytest.raises(ToolError) as err:
                    guard(read_only, _task(name, "ok.txt"))
                assert "read-only" in err.value.message, name
    finally:
        os.close(ws.root_fd)


def _task(name: str, path: str) -> Task:
    """The job the invoker sends for `name` called on `path` (normalised as given)."""
    method = METHODS[name]
    return Task(str(method.target), {"path": path}, {path: path}, method.mutating)
