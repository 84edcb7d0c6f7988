"""Issue 24's race tests: seeded random outside changes (create, rewrite, same-size
rewrite, delete, rename, ignore-file edits, trees moved in and out, kinds swapped,
symlinks, chmod) interleaved with random queries, each asked of the WARM and the COLD
server with no pause after the change: zero differences, on each engine; and the same
while the warm server is still building its tree and index.

The default run takes fixed seeds that pass (a test failing by chance is a fault of its
own); random seeds run apart, marked `long`, each failing one printed:
`CHORUS_WARM_SEEDS=300 python -m pytest -m explore -s tests/e2e/test_warm_races.py`.
Replay one with CHORUS_WARM_SEED=<seed>."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from fuzzing import first_then_long
from warm_churn import Churn
from warm_matrix import build_tree, source
from warm_support import ENGINES, Pair, assert_warm, explore, fixed_seeds, paired

STEPS = 200


def _race(pair: Pair, churn: Churn, steps: int, label: str) -> str | None:
    """`steps` rounds of 0-3 changes then 1-2 queries; None, or what differed with the
    seed, the step and the changes that led there."""
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
    if not found:
        return None
    return (f"{label}: seed {churn.seed} (CHORUS_WARM_SEED={churn.seed} to replay), "
            f"engine {pair.engine}\nlast changes:\n" + "\n".join(log[-12:]) + "\n"
            + "\n".join(found))


def _seeded_race(base: Path, engine: str, seed: int) -> str | None:
    """One seed's race on a fresh workspace under `base`."""
    build_tree(base / "ws", base / "outside")
    churn = Churn(base / "ws" / "r", base / "outside", random.Random(f"{seed}-{engine}"),
                  seed)
    found = None
    for pair in paired(base / "ws", engine):
        found = _race(pair, churn, STEPS, "race")
        assert_warm(pair)
    return found


@pytest.mark.parametrize("seed", first_then_long(fixed_seeds(2)))
@pytest.mark.parametrize("engine", first_then_long(ENGINES))
def test_seeded_outside_changes_never_make_answers_differ(tmp_path: Path, engine: str,
                                                          seed: int) -> None:
    found = _seeded_race(tmp_path, engine, seed)
    assert found is None, found


@pytest.mark.explore
@pytest.mark.parametrize("engine", ENGINES)
def test_random_outside_changes_never_make_answers_differ(tmp_path: Path,
                                                          engine: str) -> None:
    """CHORUS_WARM_SEEDS random seeds (default 20) per engine; each failing one printed."""
    failed = explore(lambda seed: _seeded_race(tmp_path / str(seed), engine, seed),
                     default=20)
    assert not failed, "\n\n".join(failed)


@pytest.mark.parametrize("engine", first_then_long(ENGINES))
def test_changes_while_the_warm_server_builds(tmp_path: Path, engine: str) -> None:
    """Asked from the first moment, before the warm tree or the index can be ready, and on
    until they are: every answer is still the cold one's."""
    ws = tmp_path / "ws"
    build_tree(ws, tmp_path / "outside")
    for i in range(1500):
        path = ws / "bulk" / f"b{i % 40}" / f"f{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source(f"bulk_{i}", 2000 + i))
    seed = fixed_seeds(1)[0]
    churn = Churn(ws / "r", tmp_path / "outside", random.Random(f"{seed}-building-{engine}"),
                  seed)
    for pair in paired(ws, engine, ready=False):
        assert (found := _race(pair, churn, 40, "while building")) is None, found
        pair.wait_warm()
        assert (found := _race(pair, churn, 20, "once built")) is None, found
        assert_warm(pair)


@pytest.mark.parametrize("engine", first_then_long(ENGINES))
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
