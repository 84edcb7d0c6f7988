"""One version, from the installed package's metadata: `--version` and rpc.discover's
`info.version` both say what pip installed (pyproject's version), never a copy in code."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from rpc_client import REPO, RpcServer


def test_version_comes_from_the_package_metadata(root: Path) -> None:
    installed = metadata.version("chorus-tools")
    assert installed == tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "version"]
    shown = subprocess.run([sys.executable, "-m", "chorus_tools", "--version"],
                           capture_output=True, check=True, timeout=60).stdout.decode()
    assert shown == f"chorus-tools {installed}\n"
    with RpcServer(root) as server:
        assert server.result("rpc.discover")["info"]["version"] == installed
