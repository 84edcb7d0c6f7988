"""The file servers users pick instead of ours (issue 43), installed from their own
registries into the benchmark cache and driven through their own interfaces; never part
of the repository or of the project's dependencies.

A peer is what a contender needs: how to install and start it, and each row's call in
its own words (its tool names and arguments). A peer that cannot run here raises
Unavailable with the reason, which the row prints as its skip and docs/benchmarks.md
repeats.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
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
    """One contender: a package from npm or PyPI started as an MCP server over stdio, with
    each row's tool call in its vocabulary (paths absolute, as its tools want them); a
    peer without a search or a glob tool has no such row."""

    name: str  # as the table prints it
    package: str
    version: str
    script: str  # npm: the entry point, relative to the package's folder; PyPI: its command
    read: Callable[[Path], Call]
    # the call that replaces `old` by `new` in a file, after any call its tool wants
    # first (made on the session given)
    replace: Callable[[Path, str, str, McpSession], Call]
    edit: str  # the tools its replace calls, as the table names them
    search: Callable[[Path, str, int], Call] | None  # the first `n` matches of a word
    glob: Callable[[Path, str], Call] | None  # files under a dir whose name matches
    takes_root: bool = True  # the allowed directory goes on its command line
    registry: str = "npm"  # or "pypi": installed with pip into a venv of its own
    pins: tuple[str, ...] = ()  # PyPI: more requirements its own metadata leaves open

    def folder(self, cache: Path) -> Path:
        if self.registry == "pypi":
            return cache / "pypi-peers" / self.package
        return cache / "npm-peers" / "node_modules" / self.package

    def argv(self, cache: Path, install: bool, root: Path) -> list[str]:
        """The command that starts it on `root`, installing it first when asked."""
        command = self._venv(cache, install) if self.registry == "pypi" else \
            self._node(cache, install)
        return [*command, *([str(root)] if self.takes_root else [])]

    def _venv(self, cache: Path, install: bool) -> list[str]:
        venv = self.folder(cache)
        wanted = " ".join([f"{self.package}=={self.version}", *self.pins])
        marker = venv / "installed"
        if not marker.is_file() or marker.read_text() != wanted:
            if not install:
                raise Unavailable(f"{self.package} not installed in {venv} (--install "
                                  "installs it)")
            _pip_install(venv, wanted.split())
            marker.write_text(wanted)
        return [str(venv / "bin" / self.script)]

    def _node(self, cache: Path, install: bool) -> list[str]:
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
        return [node, str(entry)]


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


def _pip_install(venv: Path, specs: list[str]) -> None:
    """A venv of this Python with `specs` installed from the package index pip reaches."""
    try:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True,
                       capture_output=True, timeout=NPM_TIMEOUT)
        done = subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", *specs],
                              capture_output=True, text=True, timeout=NPM_TIMEOUT)
    except (subprocess.SubprocessError, OSError) as exc:
        raise Unavailable(f"pip install {' '.join(specs)}: {exc}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise Unavailable(f"pip install {' '.join(specs)} failed: {last}")


def _tool(name: str, **arguments: Any) -> Call:
    return McpSession.tool(name, arguments)


# Desktop Commander: one search tool that starts a session, read in pages after it
DESKTOP_COMMANDER = Peer(
    name="Desktop Commander", package="@wonderwhy-er/desktop-commander", version="0.2.52",
    script="dist/index.js", takes_root=False,
    read=lambda path: _tool("read_file", path=str(path)),
    replace=lambda path, old, new, _: _tool("edit_block", file_path=str(path),
                                            old_string=old, new_string=new),
    edit="edit_block",
    search=lambda root, word, n: _tool("start_search", path=str(root), pattern=word,
                                       searchType="content", maxResults=n,
                                       literalSearch=True),
    glob=lambda root, pattern: _tool("start_search", path=str(root), pattern=pattern,
                                     searchType="files"),
)


def _whole(path: Path) -> Call:
    return _tool("get_text_file_contents",
                 files=[{"file_path": str(path), "ranges": [{"start": 1}]}])


def _line_edit(path: Path, old: str, new: str, server: McpSession) -> Call:
    """mcp-text-editor edits line ranges, each under its content's hash: the file read
    first (to find the line and its file hash, as an agent must); the range's hash is
    the SHA-256 of its text, reckoned here rather than by a second read."""
    answer = server.request(*_whole(path), check=McpSession.tool_ok)["result"]
    read = json.loads(content_text(answer))[str(path)]
    text = read["ranges"][0]["content"]
    line = text[:text.index(old)].count("\n") + 1
    patch = {"line_start": line, "line_end": line, "contents": new,
             "range_hash": hashlib.sha256(old.encode()).hexdigest()}
    return _tool("edit_text_file_contents",
                 files=[{"path": str(path), "file_hash": read["file_hash"],
                         "patches": [patch]}])


# a Python MCP server from PyPI (the mcp SDK over stdio): reads and line edits, no search
# or glob tool; it takes no allowed directory (any absolute path goes). Its metadata asks
# for mcp>=1.1.2, but mcp 2 removed the decorators it uses: pinned below 2.
TEXT_EDITOR = Peer(
    name="mcp-text-editor", package="mcp-text-editor", version="1.0.2",
    script="mcp-text-editor", takes_root=False, registry="pypi", pins=("mcp<2",),
    read=_whole, replace=_line_edit, edit="get_text_file_contents, edit_text_file_contents",
    search=None, glob=None,
)

# OpenHands' editor is a PyPI package (openhands-aci), not an MCP server: its row says why
# it is absent (docs/benchmarks.md)
OPENHANDS_ACI = "openhands-aci"

PEERS = (DESKTOP_COMMANDER, TEXT_EDITOR)


def openhands_unavailable() -> str | None:
    """Why OpenHands' file_editor cannot be measured here, or None when it can be
    imported (then a driver in its own words is future work, said in the doc)."""
    try:
        import openhands_aci  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        return (f"{OPENHANDS_ACI} is not installed: every version of it requires Python "
                ">= 3.12, and the benchmarks run on this one")
    return None


def content_text(result: dict[str, Any]) -> str:
    """The text of a tools/call result (its content blocks joined)."""
    return "\n".join(str(block.get("text", "")) for block in result.get("content") or []
                     if isinstance(block, dict))
