"""Which ripgrep to run: found at start by the server, so this module imports nothing
of the engines (the server answers its first request without loading them)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig


def find_ripgrep(explicit: str | None) -> tuple[str | None, bool]:
    """(path, has_pcre2) of the ripgrep to use: `explicit` (--rg), else `rg` on PATH, else
    the one installed with the package. A candidate must be an ELF binary that answers
    --version (a wrapper script, e.g. a pyenv shim, cannot be confined by Landlock)."""
    scripts = sysconfig.get_path("scripts")
    candidates = [explicit] if explicit else [
        shutil.which("rg"), shutil.which("rg", path=scripts)]
    for candidate in filter(None, candidates):
        found = _probe(os.path.abspath(candidate))
        if found is not None:
            return found
    return None, False


def _probe(path: str) -> tuple[str, bool] | None:
    try:
        with open(path, "rb") as f:
            if f.read(4) != b"\x7fELF":
                return None
        out = subprocess.run([path, "--version"], capture_output=True, timeout=10,
                             stdin=subprocess.DEVNULL, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return path, b"+pcre2" in out.lower()
