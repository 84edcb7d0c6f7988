"""The reference MCP filesystem server (@modelcontextprotocol/server-filesystem): what a
user would run instead. Installed with npm into the benchmark cache, pinned to one version
so every run compares with the same code; never part of the repository.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

PACKAGE = "@modelcontextprotocol/server-filesystem"
VERSION = "2026.8.31"


class Unavailable(RuntimeError):
    """The reference server cannot run here; the message says why (shown as the skip)."""


def entry_point(cache: Path) -> Path:
    return cache / "npm" / "node_modules" / PACKAGE / "dist" / "index.js"


def _installed_version(cache: Path) -> str | None:
    manifest = cache / "npm" / "node_modules" / PACKAGE / "package.json"
    if not manifest.is_file():
        return None
    return json.loads(manifest.read_text()).get("version")


def ensure(cache: Path, install: bool) -> list[str]:
    """The argv prefix that starts the reference server (add the allowed directory),
    installing it first when `install` is true and it is missing or another version."""
    node = shutil.which("node")
    if node is None:
        raise Unavailable("node not found on PATH")
    if _installed_version(cache) != VERSION:
        if not install:
            raise Unavailable(f"{PACKAGE} not installed in {cache / 'npm'} (--install "
                              "installs it)")
        npm = shutil.which("npm")
        if npm is None:
            raise Unavailable("npm not found on PATH")
        (cache / "npm").mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [npm, "install", "--prefix", str(cache / "npm"), "--no-audit", "--no-fund",
             "--loglevel", "error", f"{PACKAGE}@{VERSION}"],
            capture_output=True, text=True, timeout=300)
        if done.returncode != 0 or _installed_version(cache) != VERSION:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise Unavailable(f"npm install {PACKAGE}@{VERSION} failed: {last}")
    return [node, str(entry_point(cache))]
