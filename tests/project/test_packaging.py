"""The installed distribution owns one importable name: the wheel holds `chorus_tools/...`
and nothing at the top level that another distribution could also ship (`rpc/`, `tools/`),
and every module of the source folders is in it: the checkout's `chorus_tools/rpc` and
`chorus_tools/tools` are symlinks, and the wheel must hold the files they lead to."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from rpc_client import REPO


def _wheel(tmp_path: Path) -> zipfile.ZipFile:
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps",
                    "--quiet", "-w", str(tmp_path)],
                   check=True, capture_output=True, timeout=300)
    [wheel] = tmp_path.glob("chorus_tools-*.whl")
    return zipfile.ZipFile(wheel)


def test_wheel_installs_one_top_level_package_holding_every_source_package(
        tmp_path: Path) -> None:
    wheel = _wheel(tmp_path)
    files = wheel.namelist()
    tops = {name.split("/")[0] for name in files if not name.split("/")[0].endswith(
        ".dist-info")}
    assert tops == {"chorus_tools"}
    for source, installed in (("rpc", "chorus_tools/rpc"), ("tools", "chorus_tools/tools")):
        for module in (REPO / source).rglob("*.py"):
            assert f"{installed}/{module.relative_to(REPO / source)}" in files, module
    entry_points = next(n for n in files if n.endswith("entry_points.txt"))
    assert "chorus-tools = chorus_tools.rpc.cli:main" in wheel.read(entry_points).decode()
