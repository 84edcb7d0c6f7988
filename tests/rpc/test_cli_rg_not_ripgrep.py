"""`--rg PATH` naming a binary that is not ripgrep: refused at the start (exit 2, one line),
as a missing one is, never accepted to fail every search as an internal_error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from chorus_tools.tools.search.locate import find_ripgrep
from fake_elf import prints, write_elf
from rpc_client import REPO


@pytest.mark.parametrize("engine", ["auto", "ripgrep"])
def test_regression_rg_naming_another_binary_made_every_search_internal_error(
        tmp_path: Path, engine: str) -> None:
    """Regression: an ELF that answered --version with nothing (here a stand-in; /bin/true
    did the same) passed as ripgrep, and each file.search was then -32603."""
    fake = write_elf(tmp_path / "rg", prints(b"", status=0))
    assert find_ripgrep(str(fake)) == (None, False)
    ws = tmp_path / "ws"
    ws.mkdir()
    done = subprocess.run([sys.executable, "-m", "chorus_tools", "--workspace", str(ws),
                           "--allow-root", "--rg", str(fake), "--search-engine", engine],
                          input=b"", capture_output=True, cwd=REPO, timeout=60)
    assert done.returncode == 2
    assert f"no usable ripgrep binary ({fake})".encode() in done.stderr


def test_the_real_ripgrep_still_passes() -> None:
    path, _ = find_ripgrep(None)
    assert path is not None and find_ripgrep(path)[0] == path
