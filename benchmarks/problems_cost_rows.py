"""What broken_imports costs (issue 44): a file.patch that renames a top-level function 50
files import, in a 20,000-file tree, on a warm server whose symbol index is ready, against
the same patch on a server that walks (`--index-memory 0`: a search narrowed to the name).

The tree is the seeded source tree's generator (benchmarks/generate.py), the scale's
20,000 files (2,000 with --quick), one of them `lib/shared.py`, defining `shared_alpha_fn`,
and 100 of them Python files of the same kind that import from it: 50 `shared_alpha_fn`,
50 `shared_beta_fn`. The patches rename the function there and back, so every call removes
a name 50 files import; every reply must say so (`broken_imports_total` 50).
`python -m benchmarks --only broken_imports_warm`; `python -m benchmarks.problems_cost_rows`
runs both sides alone.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from benchmarks import generate
from benchmarks.code_speed import CODE_BUDGET, wait_symbols
from benchmarks.env import Env
from benchmarks.loadclient import ProtocolError
from benchmarks.report import Measure, Target
from benchmarks.scenarios import Scenario, median_time

IMPORTERS = 50  # of each name
NAMES = ("shared_alpha_fn", "shared_beta_fn")
MODULE = "lib/shared.py"


def importers_tree(cache: Path, files: int) -> Path:
    """The tree: `files` files in all, 2 × IMPORTERS of them importing from MODULE."""

    def fill(root: Path) -> None:
        rng = random.Random(44)
        generate._write_files(root, rng, files - 2 * IMPORTERS - 1, "src")
        (root / "lib").mkdir()
        (root / MODULE).write_text(f"def {NAMES[0]}(x):\n    return x\n")
        for i in range(2 * IMPORTERS):
            folder = root / "src" / "app" / f"part{i // 20:02d}"
            folder.mkdir(parents=True, exist_ok=True)
            name = NAMES[i % 2]
            body = generate._py(rng, rng.randint(10, 120))
            (folder / f"use_{i}.py").write_text(
                f"from lib.shared import {name}\n\n{body}\n\nprint({name}(1))\n")

    return generate._build(cache / f"importers-v1-n{files}", fill)


def _renames(env: Env, warm: bool) -> Measure:
    """The median time of a file.patch renaming the function MODULE defines (there and
    back) on a warm server once its symbol index is ready, or a walking one; each reply
    names the 50 files that import the removed name."""
    tree = importers_tree(env.cache, env.scale.files)
    options = ("--index-memory", str(CODE_BUDGET)) if warm else env.walking()
    with env.ours(tree, *options) as server:
        if warm:
            wait_symbols(server)
        at = [0]

        def once() -> int:
            old, new = NAMES[at[0] % 2], NAMES[(at[0] + 1) % 2]
            at[0] += 1
            reply: dict[str, Any] = server.request("file.patch", {"path": MODULE, "patches": [
                {"find": f"def {old}(", "replace": f"def {new}("}]})["result"]
            total = reply["diagnostics"].get("broken_imports_total", 0)
            if total != IMPORTERS:
                raise ProtocolError(f"broken_imports_total {total}, not {IMPORTERS}")
            return total
        try:
            return median_time(env, once)
        finally:
            if at[0] % 2:  # the tree stays as built for the next run
                server.request("file.patch", {"path": MODULE, "patches": [
                    {"find": f"def {NAMES[1]}(", "replace": f"def {NAMES[0]}("}]})


def warm(env: Env) -> Measure:
    return _renames(env, warm=True)


def walking(env: Env) -> Measure:
    return _renames(env, warm=False)


SCENARIOS: list[Scenario] = [
    Scenario("broken_imports_warm", "file.patch removing a name 50 files import, {tree} "
             "tree, warm server (broken_imports from the symbol index)",
             "the same patch, walking (--index-memory 0)",
             Target("≤", 0.05, absolute=True, unit="s"), warm, walking),
]


if __name__ == "__main__":
    import sys

    from benchmarks.env import default_cache
    env = Env(default_cache(), quick=False, install=False, workers=None)
    for measure in (warm, walking) if len(sys.argv) < 2 else [globals()[sys.argv[1]]]:
        print(measure.__name__, measure(env))
