"""ripgrep started through perl (tools/confine/launcher.py) is confined as the preexec_fn
confined it: its Landlock domain holds and it does not start for a parent already gone
(that it dies with its worker, both ways: tests/security/test_search_confinement.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from chorus_tools.tools.confine import landlock, launcher

from fanout_runner import RG_PATH

PERL = launcher.available()
pytestmark = pytest.mark.skipif(PERL is None, reason="no perl to launch ripgrep with here")


def _launch(argv: list[str], parent: int, rules: int | None,
            **kwargs: object) -> subprocess.CompletedProcess:
    assert PERL is not None
    keep = () if rules is None else (rules,)
    return subprocess.run(launcher.argv(PERL, argv, parent, rules), capture_output=True,
                          env={}, pass_fds=keep, **kwargs)  # type: ignore[call-overload]


def test_launched_ripgrep_cannot_read_outside(root: Path, outside: Path) -> None:
    (root / "inside.txt").write_text("CANARY-INSIDE\n")
    fd = os.open(root, os.O_PATH | os.O_DIRECTORY)
    rules = landlock.ruleset([fd], RG_PATH)
    try:
        inside = _launch([RG_PATH, "--no-config", "CANARY", "--", str(root)], os.getpid(),
                         rules)
        out = _launch([RG_PATH, "--no-config", "CANARY", "--", str(outside / "canary.txt")],
                      os.getpid(), rules)
    finally:
        os.close(rules)
        os.close(fd)
    assert inside.returncode == 0 and b"CANARY-INSIDE" in inside.stdout
    assert b"CANARY" not in out.stdout
    assert out.returncode == 2 and b"Permission denied" in out.stderr


def test_launcher_runs_nothing_for_a_parent_that_is_gone() -> None:
    """The pid given is not the launcher's parent: the worker it was started for died
    before the death signal was armed, so rg must not start at all."""
    done = _launch([RG_PATH, "--version"], os.getppid(), None)
    assert done.returncode == 1 and done.stdout == b""


def test_launcher_says_why_rg_cannot_run(root: Path) -> None:
    done = _launch([str(root / "no-such-rg"), "--version"], os.getpid(), None)
    assert done.returncode != 0 and b"cannot run" in done.stderr


def test_no_system_perl_means_no_launcher(monkeypatch: pytest.MonkeyPatch,
                                         tmp_path: Path) -> None:
    script = tmp_path / "perl"
    script.write_text("#!/bin/sh\nexec /usr/bin/perl \"$@\"\n")  # not ELF: refused
    script.chmod(0o755)
    monkeypatch.setattr(launcher, "SYSTEM_PERL", (str(tmp_path / "none"), str(script)))
    launcher.available.cache_clear()
    try:
        assert launcher.available() is None
    finally:
        launcher.available.cache_clear()
