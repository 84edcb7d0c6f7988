"""docs/deploy.md's how-to for moving files in and out runs as written: its Python block,
spawned as a user would (the installed `chorus-tools` on PATH), puts a file in by parts
and takes an artifact out, both byte for byte."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "deploy.md"


def _howto_script() -> str:
    section = DOC.read_text().split("## Putting files in and taking them out", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found, "the how-to's Python block is missing"
    return found.group(1)


def test_the_python_howto_puts_a_file_in_and_takes_an_artifact_out(tmp_path: Path) -> None:
    script = tmp_path / "put_and_take.py"
    script.write_text(_howto_script())
    ws = tmp_path / "ws"
    (ws / "build").mkdir(parents=True)
    source = tmp_path / "model.bin"
    source.write_bytes(os.urandom(9 << 20))  # two parts
    (ws / "build/app.bin").write_bytes(os.urandom(300_000))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run([sys.executable, str(script), str(ws), str(source), "build/app.bin"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (ws / "inputs/model.bin").read_bytes() == source.read_bytes()
    assert (tmp_path / "app.bin").read_bytes() == (ws / "build/app.bin").read_bytes()
