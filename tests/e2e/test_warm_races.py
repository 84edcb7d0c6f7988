"""Issue 24's race tests: seeded random outside changes (create, rewrite, same-size
rewrite, delete, rename, ignore-file edits, trees moved in and out, kinds swapped,
symlinks, chmod) interleaved with random queries, each asked of the WARM and the COLD
server with no pause after the change: zero differences, on each engine; and the same
while the warm server is still building its tree and index.

Replay a failure with CHORUS_WARM_SEED=<seed from the message>."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from warm_churn import Churn
from warm_matrix import build_tree, source
from warm_support import ENGINES, Pair, assert_warm, paired

SEED = int(os.environ.get("CHORUS_WARM_SEED") or random.SystemRandom().randrange(1 << 32))
STEPS = 200


def _race(pair: Pair, churn: Churn, steps: int, label: str) -> None:
    """`steps` rounds of 0-3 changes then 1-2 queries; fails with the seed, the step and
    the changes that led there."""
    log: list[str] = []
    found: list[str] = []
    for step in range(steps):
        for _ in range(churn.rng.choice((0, 1, 1, 2, 3))):
            log.append(f"{step}: {churn.step()}")
        for _ in range(churn.rng.randint(1, 2)):
            method, params = churn.query()
            found += pair.differences([(method, params)], f"step {step}: ")
        if len(found) >= 5:
            break
    assert not found, (f"{label}: seed {SEED} (CHORUS_WARM_SEED={SEED} to replay), "
                       f"engine {pair.engine}\nlast changes:\n" + "\n".join(log[-12:])
                       + "\n" + "\n".join(found))


@pytest.mark.parametrize("engine", ENGINES)
def test_random_outside_changes_never_make_answers_differ(tmp_path: Path,
                                                          engine: str) -> None:
    build_tree(tmp_path / "ws", tmp_path / "outside")
    rng = random.Random(f"{SEED}-{engine}")
    churn = Churn(tmp_path / "ws" / "r", tmp_path / "outside", rng)
    for pair in paired(tmp_path / "ws", engine):
        _race(pair, churn, STEPS, "race")
        assert_warm(pair)


@pytest.mark.parametrize("engine", ENGINES)
def test_changes_while_the_warm_server_builds(tmp_path: Path, engine: str) -> None:
    """Asked from the first moment, before the warm tree or the index can be ready, and on
    until they are: every answer is still the cold one's."""
    ws = tmp_path / "ws"
    build_tree(ws, tmp_path / "outside")
    for i in range(1500):
        path = ws / "bulk" / f"b{i % 40}" / f"f{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source(f"bulk_{i}", 2000 + i))
    rng = random.Random(f"{SEED}-building-{engine}")
    churn = Churn(ws / "r", tmp_path / "outside", rng)
    for pair in paired(ws, engine, ready=False):
        _race(pair, churn, 40, "while building")
        pair.wait_warm()
        _race(pair, churn, 20, "once built")
        assert_warm(pair)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_directory_changed_before_the_warm_tree_watches_it(tmp_path: Path,
                                                             engine: str) -> None:
    """The build lists the root, then spends a while in a big first directory; a file made
    meanwhile in a later one changes that directory's mtime before it is watched."""
    ws = tmp_path / "ws"
    for i in range(6000):
        path = ws / "a_bulk" / f"d{i % 50}" / f"f{i}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
    (ws / "zz").mkdir()
    for pair in paired(ws, engine, ready=False):
        status = pair.status()
        while status["tree"] == "building" and status["directories"] < 3:
            status = pair.status()
        (ws / "zz" / "one.txt").write_text("made while the tree was built\n")
        pair.wait_warm()
        found = pair.differences([
            ("file.list", {"recursive": True, "sort": "modified", "max_results": 5}),
            ("file.list", {"pattern": "*"}), ("file.list", {"path": "zz"})],
            f"changed when the tree was {status['tree']} with {status['directories']} "
            "directories: ")
        assert not found, "\n".join(found)
