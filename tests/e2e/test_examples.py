"""The clients in examples/ run against the real server and do what they say: write and
read a file, patch it with expected_version, recover from find_not_found through the
hint, and cancel a search. A client whose toolchain is missing is skipped, saying so."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rpc_client import REPO

EXAMPLES = REPO / "examples"
SERVER = [sys.executable, "-m", "chorus_tools"]
EXPECTED = """\
read hello.py: 2 lines
patched with expected_version: 1 replacement
find_not_found: closest region lines 2-2: return "Hello, " + name
patched from the hint: 1 replacement
search cancelled: -32800 cancelled
final hello.py:
def greet(name):
    return f"Hello, {name}!"
server exited 0
"""


def _run(command: list[str], workspace: Path) -> None:
    result = subprocess.run([*command, str(workspace), *SERVER], capture_output=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode() == EXPECTED
    assert (workspace / "hello.py").read_text() == (
        'def greet(name):\n    return f"Hello, {name}!"\n')
    assert sorted(p.name for p in workspace.iterdir()) == ["hello.py"]


def test_python_client(root: Path) -> None:
    _run([sys.executable, str(EXAMPLES / "python_client.py")], root)


def test_node_client(root: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed on this machine")
    _run([node, str(EXAMPLES / "node_client.js")], root)


def test_rust_client(root: Path, tmp_path: Path) -> None:
    cargo = shutil.which("cargo") or str(Path.home() / ".cargo" / "bin" / "cargo")
    if not Path(cargo).exists():
        pytest.skip("cargo is not installed on this machine")
    target = tmp_path / "target"
    subprocess.run([cargo, "build", "--offline", "--quiet", "--manifest-path",
                    str(EXAMPLES / "rust" / "Cargo.toml"), "--target-dir", str(target)],
                   check=True, capture_output=True, timeout=300)
    _run([str(target / "debug" / "chorus-tools-client")], root)
