"""ripgrep stays inside: Landlock holds it to the pinned search directory, and it dies with
the worker that runs it."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.search import rg_reader, ripgrep
from chorus_tools.tools.confine import landlock, launcher

from fanout_runner import RG_PATH, run_search

def test_directory_swapped_for_symlink_after_pinning_leaks_nothing(
        ctx: ToolContext, root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (root / "sub").mkdir()
    (root / "sub/f.txt").write_text("inside\n")
    (outside / "f.txt").write_text("CANARY-OUTSIDE\n")
    real_ruleset = landlock.ruleset

    def swap_then_build(read_beneath: list[int], binary: str) -> int | None:
        fd = real_ruleset(read_beneath, binary)  # rules hold the pinned directory
        (root / "sub").rename(root / "sub-old")
        (root / "sub").symlink_to(outside)  # rg opens "sub" by path: now it leads outside
        return fd

    monkeypatch.setattr(ripgrep.landlock, "ruleset", swap_then_build)
    with pytest.raises(ToolError) as err:  # not an empty success: the path now leads out
        run_search(ctx, "ripgrep", pattern="CANARY|inside", path="sub",
                   output_mode="files_with_matches")
    assert err.value.code == "path_outside_workspace"
    assert "CANARY" not in str(err.value.to_data())


def test_landlocked_ripgrep_cannot_read_outside(root: Path, outside: Path) -> None:
    fd = os.open(root, os.O_PATH | os.O_DIRECTORY)
    rules = landlock.ruleset([fd], RG_PATH)
    parent = os.getpid()
    try:
        proc = subprocess.run(
            [RG_PATH, "--no-config", "CANARY", "--", str(outside / "canary.txt")],
            capture_output=True, cwd=root, env={},
            preexec_fn=lambda: landlock.confine(rules, parent))
    finally:
        os.close(rules)
        os.close(fd)
    assert b"CANARY" not in proc.stdout
    assert proc.returncode == 2 and b"Permission denied" in proc.stderr


def _search_forever(root: str, launched: bool) -> None:
    """In a child: start a search whose reader never reads past its first message, its rg
    started by perl (tools/confine/launcher.py) or, without it, by the preexec_fn."""
    from chorus_tools.tools.confine.sandbox import Workspace

    if not launched:
        launcher.available = lambda: None  # type: ignore[assignment]
    rg_reader.Reader.feed = lambda self, raw: time.sleep(3600)  # type: ignore[method-assign]
    run_search(ToolContext(ws=Workspace(root)), "ripgrep", pattern="needle")


def _rg_children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[1]) == pid and "(rg)" in stat:
                found.append(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("launched", [True, False], ids=["launcher", "preexec"])
def test_killing_the_worker_leaves_no_ripgrep_behind(root: Path, launched: bool) -> None:
    """Whichever way rg started, it is confined, holds no ruleset descriptor, and dies
    with the process that ran the search."""
    if launched and launcher.available() is None:
        pytest.skip("no perl to launch ripgrep with here")
    (root / "big.txt").write_text("needle\n" * 200_000)
    child = multiprocessing.get_context("fork").Process(target=_search_forever,
                                                        args=(str(root), launched))
    child.start()
    try:
        deadline = time.monotonic() + 10
        while not (rgs := _rg_children(child.pid)) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert rgs, "ripgrep did not start"
        assert "NoNewPrivs:\t1" in Path(f"/proc/{rgs[0]}/status").read_text()
        assert not [fd for fd in os.listdir(f"/proc/{rgs[0]}/fd")
                    if "landlock" in os.readlink(f"/proc/{rgs[0]}/fd/{fd}")]
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.join()
    deadline = time.monotonic() + 5
    while any(map(_alive, rgs)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not any(map(_alive, rgs))
