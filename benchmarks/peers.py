"""The file servers users pick instead of ours (issue 43), installed from their own
registries into the benchmark cache and driven through their own interfaces; never part
of the repository or of the project's dependencies.

A peer is what a contender needs: how to install and start it, and each row's call in
its own words (its tool names and arguments). A peer that cannot run here raises
Unavailable with the reason, which the row prints as its skip and docs/benchmarks.md
repeats.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from benchmarks.loadclient import Call, McpSession
from benchmarks.mcp_reference import Unavailable

NPM_TIMEOUT = 300  # seconds: a first install fetches a few hundred packages
# Desktop Commander depends on puppeteer, whose install script downloads a browser (no
# network here, and no row uses it)


@dataclass(frozen=True)
class Peer:
    """One contender: an npm package started as an MCP server over stdio, with each row's
    tool call in its vocabulary (paths absolute, as its tools want them)."""

    name: str  # as the table prints it
    package: str
    version: str
    script: str  # the entry point, relative to the package's folder
    read: Callable[[Path], Call]
    replace: Callable[[Path, str, str], Call]
    search: Callable[[Path, str, int], Call]  # the first `n` matches of a word under a dir
    glob: Callable[[Path, str], Call]  # files under a dir whose name matches a pattern
    takes_root: bool = True  # the allowed directory goes on its command line

    def folder(self, cache: Path) -> Path:
        return cache / "npm-peers" / "node_modules" / self.package

    def argv(self, cache: Path, install: bool, root: Path) -> list[str]:
        """The command that starts it on `root`, installing it first when asked."""
        node = shutil.which("node")
        if node is None:
            raise Unavailable("node not found on PATH")
        if _version(self.folder(cache)) != self.version:
            if not install:
                raise Unavailable(f"{self.package} not installed in {cache / 'npm-peers'} "
                                  "(--install installs it)")
            _npm_install(cache / "npm-peers", f"{self.package}@{self.version}")
            if _version(self.folder(cache)) != self.version:
                raise Unavailable(f"npm install {self.package}@{self.version} left no "
                                  "package")
        entry = self.folder(cache) / self.script
        if not entry.is_file():
            raise Unavailable(f"{self.package}@{self.version} has no {self.script}")
        return [node, str(entry), *([str(root)] if self.takes_root else [])]


def _version(folder: Path) -> str | None:
    manifest = folder / "package.json"
    return json.loads(manifest.read_text()).get("version") if manifest.is_file() else None


def _npm_install(prefix: Path, spec: str) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise Unavailable("npm not found on PATH")
    prefix.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run([npm, "install", "--prefix", str(prefix), "--no-audit",
                               "--no-fund", "--loglevel", "error", spec],
                              capture_output=True, text=True, timeout=NPM_TIMEOUT,
                              env={**os.environ, "PUPPETEER_SKIP_DOWNLOAD": "1"})
    except subprocess.TimeoutExpired:
        raise Unavailable(f"npm install {spec} took over {NPM_TIMEOUT} s") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise Unavailable(f"npm install {spec} failed: {last}")


def _tool(name: str, **arguments: Any) -> Call:
    return McpSession.tool(name, arguments)


# Desktop Commander: one search tool that starts a session, read in pages after it
DESKTOP_COMMANDER = Peer(
    name="Desktop Commander", package="@wonderwhy-er/desktop-commander", version="0.2.52",
    script="dist/index.js", takes_root=False,
    read=lambda path: _tool("read_file", path=str(path)),
    replace=lambda path, old, new: _tool("edit_block", file_path=str(path),
                                         old_string=old, new_string=new),
    search=lambda root, word, n: _tool("start_search", path=str(root), pattern=word,
                                       searchType="content", maxResults=n,
                                       literalSearch=True),
    glob=lambda root, pattern: _tool("start_search", path=str(root), pattern=pattern,
                                     searchType="files"),
)

# OpenHands' editor is a PyPI package (openhands-aci), not an MCP server: its row says why
# it is absent when the index this machine reaches does not carry it (docs/benchmarks.md)
OPENHANDS_ACI = "openhands-aci"

PEERS = (DESKTOP_COMMANDER,)


def openhands_unavailable() -> str | None:
    """Why OpenHands' file_editor cannot be measured here, or None when it can be
    imported (then a driver in its own words is future work, said in the doc)."""
    try:
        import openhands_aci  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        return (f"{OPENHANDS_ACI} is not installed and the package index this machine "
                "reaches has no distribution of it")
    return None


def content_text(result: dict[str, Any]) -> str:
    """The text of a tools/call result (its content blocks joined)."""
    return "\n".join(str(block.get("text", "")) for block in result.get("content") or []
                     if isinstance(block, dict))
