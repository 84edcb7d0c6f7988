"""Bug: `--rg PATH` took any ELF program whose `--version` exited 0 for ripgrep
(`--rg /bin/true`), so the server started and answered every file.search
`internal_error` "ripgrep failed: no reason given"; a binary that does not say it is
ripgrep is now refused at start, exit 2 with one line, as a missing one is."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from fake_elf import prints, write_elf


def test_a_program_that_is_not_ripgrep_is_refused_at_start(tmp_path: Path) -> None:
    fake = write_elf(tmp_path / "rg", prints(b"hello 1.0\n", status=0))
    ws = tmp_path / "ws"
    ws.mkdir()
    for engine in ("ripgrep", "auto"):
        done = subprocess.run([sys.executable, "-m", "chorus_tools", "--workspace", str(ws),
                               "--allow-root", "--rg", str(fake), "--search-engine", engine],
                              input=b"", capture_output=True, timeout=60)
        assert done.returncode == 2, done
        assert done.stderr.decode().strip().splitlines() == [
            f"chorus-tools: no usable ripgrep binary ({fake}); use --search-engine python "
            "or --rg PATH"]
