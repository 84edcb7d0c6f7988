"""The MCP Inspector's CLI (@modelcontextprotocol/inspector, built on the TypeScript SDK,
which checks structuredContent against outputSchema even on isError results) spawns the
real server: tools/list, and tools/call for a result and for a tool error (docs/protocol.md, MCP).

Needs node and npm; skipped with the reason without them. The Inspector is npm-installed
once, pinned, into a cache outside the repository ($CHORUS_TEST_CACHE, default
~/.cache/chorus-tools-tests), so a rerun downloads nothing.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from chorus_tools.tools.registry import TOOLSETS
from rpc_client import REPO

pytestmark = pytest.mark.long  # an npm install and a node process per check: CI's -m long

PACKAGE, VERSION = "@modelcontextprotocol/inspector", "2.12.0"
CACHE = Path(os.environ.get("CHORUS_TEST_CACHE",
                            Path.home() / ".cache" / "chorus-tools-tests")) / "inspector"


def _installed() -> bool:
    manifest = CACHE / "node_modules" / PACKAGE / "package.json"
    return manifest.is_file() and json.loads(manifest.read_text())["version"] == VERSION


@pytest.fixture(scope="module")
def inspector() -> list[str]:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed for the MCP Inspector CLI; not on PATH")
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:  # xdist workers share the one install
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _installed():
            done = subprocess.run(
                [npm, "install", "--prefix", str(CACHE), "--no-audit", "--no-fund",
                 "--loglevel", "error", f"{PACKAGE}@{VERSION}"],
                capture_output=True, text=True, timeout=300)
            if done.returncode != 0 or not _installed():
                pytest.skip(f"npm install {PACKAGE}@{VERSION} failed: "
                            f"{done.stderr.strip()[-300:]}")
    return [node, str(CACHE / "node_modules" / ".bin" / "mcp-inspector"), "--cli"]


def run(inspector: list[str], ws: Path, *args: str) -> subprocess.CompletedProcess:
    server = [sys.executable, "-m", "chorus_tools", "--workspace", str(ws), "--workers", "1"]
    # the Inspector gives the server a minimal environment: keep the claude set's reads in
    # this run's state directory (tests/conftest.py), not the user's
    state = ["-e", f"XDG_STATE_HOME={os.environ['XDG_STATE_HOME']}"]
    return subprocess.run([*inspector, *state, *server, *args], capture_output=True,
                          text=True, cwd=REPO, timeout=60)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "notes.md").write_text("# Notes\nship it\n")
    return tmp_path


def test_inspector_lists_the_tools(inspector: list[str], ws: Path) -> None:
    done = run(inspector, ws, "--method", "tools/list")
    assert done.returncode == 0, done.stderr + done.stdout
    tools = {t["name"]: t for t in json.loads(done.stdout)["tools"]}
    assert {"file_read", "file_write", "file_patch", "file_delete", "file_list",
            "file_search", "file_info", "file_move", "dir_create", "dir_delete",
            "file_history", "file_restore", "workspace_checkpoint",
            "workspace_rewind", "file_check", "code_outline", "code_symbols",
            "code_references", "code_map", "code_edit"} == set(tools)
    assert tools["file_patch"]["annotations"]["destructiveHint"] is True
    assert tools["file_read"]["outputSchema"]["type"] == "object"


@pytest.mark.parametrize("toolset", TOOLSETS)
def test_inspector_strict_finds_nothing_to_warn_about(inspector: list[str], ws: Path,
                                                      toolset: str) -> None:
    """--strict lints every tool's input and output schema for portability (a `type`
    array, an untyped or boolean schema, a remote $ref) and prints each finding."""
    done = run(inspector, ws, "--tools", toolset, "--method", "tools/list", "--strict")
    assert done.returncode == 0, done.stderr + done.stdout
    assert json.loads(done.stdout)["tools"]
    assert "Warning" not in done.stderr and "Error" not in done.stderr, done.stderr
    assert "Schema portability" not in done.stderr, done.stderr


def test_inspector_calls_a_tool(inspector: list[str], ws: Path) -> None:
    done = run(inspector, ws, "--method", "tools/call", "--tool-name", "file_search",
               "--tool-arg", "pattern=ship")
    assert done.returncode == 0, done.stderr + done.stdout
    result = json.loads(done.stdout)
    assert result["isError"] is False
    assert result["content"] == [{"type": "text", "text": "notes.md:2:ship it"}]
    assert result["structuredContent"]["matches"][0]["line"] == 2


def test_inspector_accepts_a_tool_error(inspector: list[str], ws: Path) -> None:
    """The Inspector validates the error's data against outputSchema: it prints the
    result (and exits non-zero for isError) instead of a schema complaint."""
    done = run(inspector, ws, "--method", "tools/call", "--tool-name", "file_read",
               "--tool-arg", "path=missing.md")
    result = json.loads(done.stdout)
    assert result["isError"] is True, done.stdout
    assert result["structuredContent"]["error"] == "file_not_found"
    reported = done.stderr.strip().splitlines()[-1]  # after any line of the server's own
    assert json.loads(reported)["error"]["code"] == "tool_is_error", done.stderr
