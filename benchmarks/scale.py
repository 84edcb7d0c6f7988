"""How cost grows: the same comparison at several sizes, one row per size, and the slope.

A series is a list of table rows (the runner measures each like any scenario: ours and
the baseline alternated, the best of each kept) at growing input sizes. Its slope is
d log(ratio) / d log(size), fitted by least squares: 0 means the ratio holds at every
size, 1 means our cost grows one size-factor faster than the baseline's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable

from benchmarks import code_scale as code
from benchmarks import common
from benchmarks import scenarios as sc
from benchmarks import warm
from benchmarks.env import Env
from benchmarks.generate import MIB, RARE_EVERY, RARE_IDENT
from benchmarks.report import Measure, Row, Target
from benchmarks.scenarios import Scenario

HUGE = "huge.txt"


@dataclass
class Series:
    key: str
    title: str
    unit: str  # what `sizes` count: "files" or "bytes"
    sizes: list[int]
    rows: list[Row] = field(default_factory=list)

    @property
    def slope(self) -> float | None:
        """Least-squares slope of log(ratio) against log(size); None under two points."""
        points = [(math.log(size), math.log(row.ratio))
                  for size, row in zip(self.sizes, self.rows) if row.ratio]
        if len(points) < 2:
            return None
        mx = sum(x for x, _ in points) / len(points)
        my = sum(y for _, y in points) / len(points)
        spread = sum((x - mx) ** 2 for x, _ in points)
        return sum((x - mx) * (y - my) for x, y in points) / spread if spread else None

    def label(self, size: int) -> str:
        if self.unit == "files":
            return f"{size // 1000}k files" if size >= 1000 else f"{size} files"
        return f"{size / 2**30:g} GB" if size >= 2**30 else f"{size / 2**20:g} MB"

    def as_json(self) -> dict[str, Any]:
        return {"key": self.key, "title": self.title, "unit": self.unit,
                "sizes": self.sizes, "labels": [self.label(size) for size in self.sizes],
                "slope": self.slope,
                "rows": [row.as_json() for row in self.rows]}


@dataclass(frozen=True)
class SeriesPlan:
    """How to measure one series: its scenario at each size."""

    key: str
    title: str
    unit: str
    baseline_name: str
    target: Target | None
    ours: Callable[[Env, int], Measure]
    baseline: Callable[[Env, int], Measure]

    def sizes(self, env: Env) -> list[int]:
        return list(env.scale.scale_trees if self.unit == "files" else env.scale.scale_files)

    def scenario(self, series: Series, size: int) -> Scenario:
        return Scenario(f"{self.key}@{size}", f"{self.title}, {series.label(size)}",
                        self.baseline_name, self.target, partial(_at, self.ours, size),
                        partial(_at, self.baseline, size))


def _at(measure: Callable[[Env, int], Measure], size: int, env: Env) -> Measure:
    return measure(env, size)


def _tree(measure: Callable[[Env, Path], Measure]) -> Callable[[Env, int], Measure]:
    return lambda env, files: measure(env, env.tree_of(files))


def _mode(measure: Callable[[Env, Path, str], Measure],
          mode: str) -> Callable[[Env, int], Measure]:
    return lambda env, files: measure(env, env.tree_of(files), mode)


def _head(ours: bool, first: bool) -> Callable[[Env, int], Measure]:
    """Lines 1-50 of a file of the given size; few calls, a first read counts it all."""
    def measure(env: Env, size: int) -> Measure:
        count = env.scale.repeats * (1 if first else 4)
        read = sc.window_in if ours else sc.reference_head_in
        return read(env, env.file_of(size), HUGE, first, count)
    return measure


REFERENCE_HEAD = f"{sc.REFERENCE} read_text_file head=50"

RARE = f"{RARE_IDENT} (in {100 / RARE_EVERY:g} % of files)"
CODE_RG = "ripgrep: rg -n -w NAME (lines, not definitions: no count to agree)"
WORD = common.COMMON
WALKING = "walking (--index-memory 0)"
WARM = "warm server, repeated"


def _common(key: str, where: str, first: Callable[[Env, Path], Measure],
            modes: Callable[[Env, Path, str], Measure]) -> list[SeriesPlan]:
    """The common word's series on one kind of server (`where`, keys prefixed `key`)."""
    return [
        SeriesPlan(f"{key}first_common", f"file.search {WORD}, the first 100 (default "
                   f"max_results), {where}", "files",
                   f"rg -n --sort path {WORD} | head -100", Target("≤", 3), _tree(first),
                   _tree(common.rg_first_in)),
        SeriesPlan(f"{key}files_common", f"file.search {WORD}, files_with_matches, all, "
                   f"{where}", "files", f"rg -l {WORD}", Target("≤", 1.1),
                   _mode(modes, "files_with_matches"), _mode(common.rg_mode_in,
                                                             "files_with_matches")),
        SeriesPlan(f"{key}count_common", f"file.search {WORD}, count, all, {where}", "files",
                   f"rg -c {WORD}", Target("≤", 1.1), _mode(modes, "count"),
                   _mode(common.rg_mode_in, "count")),
        SeriesPlan(f"{key}content_common", f"file.search {WORD}, all matches, {where}",
                   "files", f"rg -n {WORD}", Target("≤", 1.5), _mode(modes, "content"),
                   _mode(common.rg_mode_in, "content")),
    ]


PLANS: list[SeriesPlan] = [
    SeriesPlan("scale_list", "file.list **/*.md, walking (--index-memory 0)", "files",
               "rg --files -g '*.md'", Target("≤", 1.3), _tree(warm.walk_list_in),
               _tree(sc.rg_files_in)),
    SeriesPlan("scale_search", "file.search TODO, all matches, walking (--index-memory 0)",
               "files", "rg -n", Target("≤", 1.3), _tree(warm.walk_search_in),
               _tree(sc.rg_search_in)),
    *_common("", WALKING, common.walk_first_in, common.walk_mode_in),
    SeriesPlan("warm_list", "file.list **/*.md, warm server, repeated", "files",
               "rg --files -g '*.md'", Target("≤", 0.3), _tree(warm.warm_list_in),
               _tree(sc.rg_files_in)),
    SeriesPlan("warm_search_rare", f"file.search {RARE}, all matches, warm server, repeated",
               "files", "rg -n", Target("≤", 0.2), _tree(warm.warm_rare_in),
               _tree(warm.rg_rare_in)),
    SeriesPlan("warm_search_todo", "file.search TODO, all matches, warm server, repeated",
               "files", "rg -n", Target("≤", 1.0), _tree(warm.warm_search_in),
               _tree(sc.rg_search_in)),
    *_common("warm_", WARM, common.warm_first_in, common.warm_mode_in),
    SeriesPlan("warm_first_call", f"first file.search {RARE_IDENT} after start: start to answer",
               "files", "the same with --index-memory 0", Target("≤", 1.0),
               _tree(warm.first_call_in), _tree(warm.first_call_walking_in)),
    SeriesPlan("warm_build", "warm tree and index: start to ready", "files",
               "one ripgrep search of the tree (rg -n)", None, _tree(warm.build_in),
               _tree(warm.rg_rare_in)),
    SeriesPlan("warm_memory", "warm process: peak RSS once ready", "files",
               f"--index-memory {warm.INDEX_BUDGET // MIB} MiB", Target("≤", 1.0),
               _tree(warm.memory_in), _tree(warm.budget)),
    SeriesPlan("code_symbols_warm", "code.symbols NAME (one exact name), warm server, "
               "repeated", "files", CODE_RG, Target("≤", 0.05),
               _tree(code.symbols_warm_in), _tree(code.rg_word_in)),
    SeriesPlan("code_symbols_walking", "code.symbols NAME, --index-memory 0", "files",
               CODE_RG, Target("≤", 1.5), _tree(code.symbols_cold_in),
               _tree(code.rg_word_in)),
    SeriesPlan("code_references_warm", "code.references NAME, warm server, repeated",
               "files", CODE_RG, Target("≤", 0.3), _tree(code.references_warm_in),
               _tree(code.rg_word_in)),
    SeriesPlan("code_references_walking", "code.references NAME, --index-memory 0", "files",
               CODE_RG, Target("≤", 2.0), _tree(code.references_cold_in),
               _tree(code.rg_word_in)),
    SeriesPlan("code_index_build_scale", "symbol index: start to ready", "files",
               f"one {CODE_RG}", None, _tree(code.build_in), _tree(code.rg_word_in)),
    SeriesPlan("code_index_memory", "warm process with its symbol index: memory once ready "
               "(--index-memory 1 GiB)", "files", "the default --index-memory 256 MiB", None,
               _tree(code.memory_in), _tree(code.default_budget)),
    SeriesPlan("scale_head_first", "file.read lines 1–50, first read of its version (p50)",
               "bytes", REFERENCE_HEAD, Target("≤", 3),
               _head(ours=True, first=True), _head(ours=False, first=True)),
    SeriesPlan("scale_head_repeat", "file.read lines 1–50, repeat (p50)", "bytes",
               REFERENCE_HEAD, Target("≤", 1.2),
               _head(ours=True, first=False), _head(ours=False, first=False)),
]


def run_series(plan: SeriesPlan, env: Env,
               run_scenario: Callable[[Scenario, Env], Row]) -> Series:
    series = Series(plan.key, plan.title, plan.unit, plan.sizes(env))
    series.rows = [run_scenario(plan.scenario(series, size), env) for size in series.sizes]
    return series


def text(series: Series) -> str:
    """One line per size and the slope, e.g. `2k files: 1.10×, 20k files: 1.15×, …`."""
    points = ", ".join(
        f"{series.label(size)}: " + (f"{row.ratio:.2f}×" if row.ratio is not None
                                     else (row.ours_problem or row.baseline_problem or "—"))
        for size, row in zip(series.sizes, series.rows))
    slope = "—" if series.slope is None else f"{series.slope:+.2f}"
    return f"{series.title} vs {series.rows[0].baseline_name}: {points}; slope {slope}"
