"""npm packages the tests run (MCP clients and suites written for node), installed once,
pinned, into a cache outside the repository ($CHORUS_TEST_CACHE, default
~/.cache/chorus-tools-tests), so a rerun downloads nothing; xdist workers share one
install under a lock. A test that cannot have them skips, saying why."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

CACHE = Path(os.environ.get("CHORUS_TEST_CACHE",
                            Path.home() / ".cache" / "chorus-tools-tests"))


def _installed(prefix: Path, package: str, version: str) -> bool:
    manifest = prefix / "node_modules" / package / "package.json"
    return manifest.is_file() and json.loads(manifest.read_text())["version"] == version


def npm_install(folder: str, *packages: tuple[str, str]) -> Path:
    """The prefix holding every (name, version) of `packages`, installed if need be."""
    npm = shutil.which("npm")
    if shutil.which("node") is None or npm is None:
        pytest.skip("node and npm are needed; not on PATH")
    prefix = CACHE / folder
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not all(_installed(prefix, name, version) for name, version in packages):
            done = subprocess.run(
                [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
                 "--loglevel", "error", *(f"{name}@{version}" for name, version in packages)],
                capture_output=True, text=True, timeout=600)
            if done.returncode != 0 or not all(_installed(prefix, n, v) for n, v in packages):
                pytest.skip(f"npm install {packages} failed: {done.stderr.strip()[-300:]}")
    return prefix


def node_major(node: str | Path) -> int:
    done = subprocess.run([str(node), "--version"], capture_output=True, text=True, timeout=30)
    return int(done.stdout.strip().lstrip("v").split(".")[0]) if done.returncode == 0 else 0
