"""The warm tree in-process under the race tests' seeded outside changes (tests/warm_churn.py):
after every few changes, and with the tree taking in events and reading contents at random
moments in between as its process does, its listings and selections equal the disk walk's,
and the content index keeps as candidate every file a needle may be in. Many times faster
than the spawned servers of tests/e2e/test_warm_races.py, so thousands of seeds fit in a
long run: `CHORUS_WARM_SEEDS=5000 python -m pytest -m explore -q tests/tools/test_warm_churn.py`
prints each failing seed; `CHORUS_WARM_SEED=<seed>` replays one."""

from __future__ import annotations

import os
import pickle
import random
import shutil
from pathlib import Path

import pytest

from chorus_tools.tools.confine.deny import DenyRules
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.walk.listing import list_files
from chorus_tools.tools.walk.walk import walk_files
from chorus_tools.tools.warm.answers import Memory, Warm
from chorus_tools.tools.warm.events import Events
from chorus_tools.tools.warm.grams import indexable, query_grams
from warm_churn import NEEDLES, WORDS, Churn
from warm_matrix import build_tree
from warm_support import explore, fixed_seeds, run_background

STEPS = 100
CHECKED = 0.4  # of the steps: a wrong tree stays wrong, and the disk walks cost most
LISTINGS = ({"pattern": "**", "include_hidden": True, "include_ignored": True,
             "sort": "modified"},
            {"path": "r", "recursive": True, "sort": "size"},
            {"pattern": "**/*.py"})


def differences(warm: Warm, ctx: ToolContext, rng: random.Random) -> list[str]:
    """Where the warm answers part from the disk's right now (empty: none): a listing, a
    selection and the candidates of a needle, each picked at random."""
    if not warm.current():
        return ["the tree could not be brought current"]
    found = []
    query = rng.choice(LISTINGS)
    if pickle.loads(warm.listing(query)) != list_files(ctx, **query):
        found.append(f"listing {query}")
    hidden, ignored = rng.random() < 0.5, rng.random() < 0.5
    disk = [p for p, _ in walk_files(ctx, "", include_hidden=hidden, include_ignored=ignored)]
    chosen = warm.select("", hidden, ignored, [], (), None, True)["files"]
    if chosen != disk:
        found.append(f"selection hidden={hidden} ignored={ignored}: warm only "
                     f"{sorted(set(chosen) - set(disk))[:4]}, disk only "
                     f"{sorted(set(disk) - set(chosen))[:4]}")
    return found + _missed_candidates(warm, ctx, rng.choice(NEEDLES + WORDS[:3]))


def _missed_candidates(warm: Warm, ctx: ToolContext, needle: str) -> list[str]:
    """Files holding `needle` (or that the index cannot read) left out of its candidates."""
    root = Path(ctx.ws.roots[0])
    grams = query_grams(needle, literal=True, case_sensitive=True, multiline=False,
                        needs_pcre2=False)
    chosen = set(warm.select("", True, True, [], (), grams, True)["files"])
    missed = []
    for path, _ in walk_files(ctx, "", include_hidden=True, include_ignored=True):
        data = _read(root / path)
        if path not in chosen and (data is None or not indexable(data)
                                   or needle.encode() in data):
            missed.append(path)
    return [f"index: {needle} may be in {missed[:4]}, not candidates"] if missed else []


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def run_seed(seed: int, base: Path) -> str | None:
    """One seeded run in a fresh workspace under `base`: None, or what went wrong."""
    ws, outside = base / "ws", base / "outside"
    build_tree(ws, outside)
    rng = random.Random(f"{seed}-in-process")
    churn = Churn(ws / "r", outside, rng)
    ctx = ToolContext(ws=Workspace(str(ws), deny=DenyRules(["**/.env", "*.pem"])))
    index = rng.random() >= 0.25  # else the tree alone: a memory that never grows,
    warm = (Warm(ctx, 1 << 30, Events(), Memory()) if index  # and no index fits
            else Warm(ctx, 4096, Events(), lambda: 40_000_000))
    log: list[str] = []
    try:
        run_background(warm)
        for step in range(STEPS):
            for _ in range(rng.choice((0, 1, 1, 2, 3))):
                log.append(f"{step}: {churn.step()}")
                if rng.random() < 0.3:  # its loop takes in events as they come
                    warm.note()
                if rng.random() < 0.3:  # and reads contents between questions
                    warm.work(rng.choice((0.0, 0.001, 0.01)))
            if rng.random() < CHECKED and (found := differences(warm, ctx, rng)):
                return (f"seed {seed} (CHORUS_WARM_SEED={seed} to replay), step {step}, "
                        f"index {'on' if index else 'off'}\n"
                        "last changes:\n" + "\n".join(log[-12:]) + "\n" + "\n".join(found))
        return None
    finally:
        warm.events.close()
        os.close(ctx.ws.root_fd)
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("seed", fixed_seeds())
def test_seeded_outside_changes_keep_the_tree_exact(seed: int, tmp_path: Path) -> None:
    found = run_seed(seed, tmp_path / "run")
    assert found is None, found


@pytest.mark.explore
def test_many_random_seeds_keep_the_tree_exact(tmp_path: Path) -> None:
    """CHORUS_WARM_SEEDS random seeds (default 200); each failing one is printed."""
    failed = explore(lambda seed: run_seed(seed, tmp_path / str(seed)), default=200)
    assert not failed, "\n\n".join(failed)


class _FirstChoice(random.Random):
    """Always the first choice (the churned folder itself, the first rules name), never a
    deletion."""

    def choice(self, seq):  # type: ignore[override]
        return seq[0]

    def random(self) -> float:
        return 0.9


@pytest.mark.parametrize("holder", ["directory", "symlink"])
def test_the_churn_writes_no_rules_into_a_directory_or_a_link(tmp_path: Path,
                                                               holder: str) -> None:
    """Regression (issue 36): a step had made r/.gitignore a directory, and the next rules
    edit died on IsADirectoryError: the race test failed on its own harness."""
    top, outside = tmp_path / "r", tmp_path / "outside"
    top.mkdir()
    (outside / "target").mkdir(parents=True)
    if holder == "directory":
        (top / ".gitignore").mkdir()
    else:
        (top / ".gitignore").symlink_to(outside / "target" / "rules")
    said = Churn(top, outside, _FirstChoice()).ignore_edit()
    assert "holds the name" in said
    assert not (outside / "target" / "rules").exists()


def test_the_churn_never_makes_a_tree_through_a_symlink(tmp_path: Path) -> None:
    """Regression (issue 36): a link to ../../../../../../../../etc renamed to a directory's
    name ('d', 'deep') had the next deep tree made through it: the race test wrote files
    into /etc."""
    top, outside = tmp_path / "r", tmp_path / "outside"
    top.mkdir()
    (outside / "target").mkdir(parents=True)
    (top / "p").symlink_to(outside / "target")  # p: the first of the directories' names
    said = Churn(top, outside, _FirstChoice()).make_tree()
    assert "stops at r/p" in said
    assert list((outside / "target").iterdir()) == []
