"""`python -m benchmarks [--quick] [--plot]`: run every scenario side by side with its
baseline, print one table (scenario, ours, baseline, ratio, target), then the scale series
(the ratio at growing sizes, and its slope), and write the same as JSON; with --plot, draw
them as SVG too."""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from benchmarks.env import REPO, Env, default_cache
from benchmarks.mcp_reference import Unavailable
from benchmarks.report import Measure, Row, table, write_json
from benchmarks.scale import PLANS, run_series
from benchmarks.scale import text as series_text
from benchmarks import (archive_rows, bytes_rows, bytes_stream_rows, code_rows, context,
                        diagnostics, js_problems_rows, ops_rows, peer_rows,
                        problems_cost_rows, problems_rows, quota_rows, refs_rows)
from benchmarks import index_compact_rows
from benchmarks import index_cache_rows
from benchmarks.scenarios import SCENARIOS as TABLE, Scenario


SCENARIOS = [*TABLE, *context.SCENARIOS, *diagnostics.SCENARIOS, *code_rows.SCENARIOS,
             *bytes_rows.SCENARIOS, *bytes_stream_rows.SCENARIOS, *archive_rows.SCENARIOS,
             *peer_rows.SCENARIOS, *ops_rows.SCENARIOS, *quota_rows.SCENARIOS,
             *problems_rows.SCENARIOS, *problems_cost_rows.SCENARIOS,
             *js_problems_rows.SCENARIOS, *refs_rows.SCENARIOS, *index_compact_rows.SCENARIOS]
SCENARIOS += index_cache_rows.SCENARIOS


def _attempt(measure: Callable[[Env], Measure], env: Env) -> tuple[Measure | None, str | None]:
    """One measurement, or why there is none: a missing contender is skipped, anything
    else failed (with the reason, so the row still prints)."""
    try:
        return measure(env), None
    except Unavailable as exc:
        return None, f"skipped: {exc}"
    except Exception as exc:  # noqa: BLE001 - a broken contender must not hide the others
        return None, f"failed: {type(exc).__name__}: {exc}"


def _keep_best(current: Measure | None, new: Measure) -> Measure:
    return new if current is None or new.better_than(current) else current


def run_scenario(scenario: Scenario, env: Env) -> Row:
    """Alternate ours and the baseline `rounds` times and keep the best of each. A failure
    in any round stands: a contender that fails once has no figure."""
    row = Row(scenario.key, scenario.title.format(**env.scale.labels()),
              scenario.baseline_name, scenario.target)
    for _ in range(1 if scenario.long_run else env.scale.rounds):
        if row.ours_problem is None:
            measure, row.ours_problem = _attempt(scenario.ours, env)
            row.ours = None if measure is None else _keep_best(row.ours, measure)
        if scenario.baseline is not None and row.baseline_problem is None:
            measure, row.baseline_problem = _attempt(scenario.baseline, env)
            row.baseline = None if measure is None else _keep_best(row.baseline, measure)
    return row


def _mode_line(env: Env) -> str:
    s = env.scale
    mode = "quick (harness check: small inputs, figures not meaningful)" if env.quick else "full"
    labels = s.labels()
    return (f"mode: {mode}; tree {s.files:,} files + node_modules, big file {labels['big']}, "
            f"huge file {labels['huge']}, stdlib "
            f"{'top level' if s.stdlib_top_only else 'whole'}; {os.cpu_count()} CPUs")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true",
                        help="small inputs, one round: proves the harness works (minutes: it "
                             "builds its inputs and starts a few hundred servers)")
    parser.add_argument("--json", type=Path, default=REPO / "benchmarks/results/latest.json",
                        help="where to write the JSON (default: %(default)s)")
    parser.add_argument("--cache", type=Path, default=default_cache(),
                        help="generated corpora (gigabytes), the npm install and the servers' "
                             "state, outside the checkout (default: %(default)s, from "
                             "$XDG_CACHE_HOME)")
    parser.add_argument("--install", action=argparse.BooleanOptionalAction, default=None,
                        help="npm-install the reference server if missing "
                             "(default: yes in a full run, no with --quick)")
    parser.add_argument("--workers", type=int, help="--workers for our server")
    parser.add_argument("--only", action="append", metavar="KEY",
                        help="run only this scenario or scale series (repeatable): "
                             + ", ".join([s.key for s in SCENARIOS] + [p.key for p in PLANS]))
    parser.add_argument("--plot", action="store_true",
                        help="also draw the table and the scale series as SVG beside the "
                             "JSON (needs matplotlib: pip install -e '.[bench]')")
    args = parser.parse_args(argv)
    install = not args.quick if args.install is None else args.install
    # the servers measured keep the claude set's reads beside the corpora, not in the
    # user's state directory
    os.environ["XDG_STATE_HOME"] = str(args.cache / "state")
    env = Env(args.cache, args.quick, install, args.workers)
    chosen = [s for s in SCENARIOS if s.key in args.only] if args.only else \
        [s for s in SCENARIOS if not s.long_run]
    plans = [p for p in PLANS if not args.only or p.key in args.only]
    started = time.monotonic()
    rows, series = [], []
    try:
        for scenario in chosen:
            print(f"running {scenario.key} ...", file=sys.stderr, flush=True)
            rows.append(run_scenario(scenario, env))
        for plan in plans:
            print(f"running {plan.key} ...", file=sys.stderr, flush=True)
            series.append(run_series(plan, env, run_scenario))
    finally:
        env.cleanup()
    print(_mode_line(env))
    print(table(rows))
    if series:
        print("\nscale: the ratio at each size, and its slope over log size (0: flat):")
        for one in series:
            print(f"- {series_text(one)}")
    write_json(args.json, rows, series, {
        "quick": args.quick, "mode": _mode_line(env),
        "finished": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "seconds": round(time.monotonic() - started, 1),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform()},
        "versions": env.versions()})
    print(f"JSON: {args.json}")
    if args.plot:
        from benchmarks.plot import draw  # matplotlib: only a plotting run needs it

        for path in draw(args.json, args.json.parent):
            print(f"SVG: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
