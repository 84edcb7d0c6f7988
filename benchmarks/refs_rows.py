"""Warm code answers from the symbol index's own contents (issue 45): code.symbols and
code.references on a workspace of large files (typescript's lib/*.d.ts, 200-600 KB the
largest) and code.references on the standard library, each against `rg -n -w NAME` for
the same names in the same run; and what the index holds on the standard library.

A call asks for every result (and the definitions, as `rg -w` finds them too); the time
is the median of repeats after one warm-up call, on a server whose symbol index is ready
(a whole reply is kept until the tree changes, as file.list's is); the detail has the
first call's time and the median of calls each a new question (made again, not kept).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from benchmarks import scenarios as sc
from benchmarks.code_accuracy import TYPESCRIPT, _typescript
from benchmarks.code_scale import kept_and_not
from benchmarks.code_speed import CODE_BUDGET, wait_symbols
from benchmarks.env import Env
from benchmarks.loadclient import ProtocolError
from benchmarks.report import Measure, Target
from benchmarks.scenarios import Scenario

TS_NAMES = ("ReadonlyArray", "Promise", "addEventListener")  # the three
STDLIB_NAMES = ("request", "encode")


def _dts(env: Env) -> Path:
    """A workspace of typescript's lib/*.d.ts alone (the package's lib also holds its
    multi-megabyte compiler bundles, which are no part of this question)."""
    where = env.cache / f"ts-dts-{TYPESCRIPT.replace('@', '-')}"
    if not where.is_dir():
        files = _typescript(env)
        staging = where.with_suffix(".part")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        for path in sorted(files[0].parent.glob("*.d.ts")):
            shutil.copy(path, staging / path.name)
        staging.rename(where)
    return where


def _warm_calls(env: Env, tree: Path, method: str, names: tuple[str, ...],
                **params: Any) -> Measure:
    """The median time of asking `method` for every name in turn, warm, repeated (the
    first call's and a new question's time in the detail: code_scale.kept_and_not)."""
    key = "query" if method == "code.symbols" else "name"
    listed = "symbols" if method == "code.symbols" else "references"
    with env.ours(tree, "--index-memory", str(CODE_BUDGET)) as server:
        state = wait_symbols(server)["status"]

        def once(most: int) -> int:
            found = 0
            for name in names:
                result = server.request(method, {key: name, "max_results": most,
                                                 **params})["result"]
                if result["truncated"] or not result["total"]:
                    raise ProtocolError(f"{method} {name}: {result['total']} found")
                found += len(result[listed])
            return found
        measure = kept_and_not(env, once)
    measure.detail["found"] = measure.detail.pop("results")
    measure.detail.update({k: state[k] for k in ("symbol_files", "symbols_indexed",
                                                 "memory_bytes")})
    return measure


def _rg(env: Env, tree: Path, names: tuple[str, ...]) -> Measure:
    def once() -> int:
        return sum(len(sc._run([env.rg, "-n", "-w", "--no-require-git", "-e", name],
                               tree)[1].splitlines()) for name in names)
    return sc.median_time(env, once)


def ts_symbols(env: Env) -> Measure:
    return _warm_calls(env, _dts(env), "code.symbols", TS_NAMES)


def ts_references(env: Env) -> Measure:
    return _warm_calls(env, _dts(env), "code.references", TS_NAMES, include_definitions=True)


def ts_rg(env: Env) -> Measure:
    return _rg(env, _dts(env), TS_NAMES)


def stdlib_references(env: Env) -> Measure:
    return _warm_calls(env, env.stdlib, "code.references", STDLIB_NAMES,
                       include_definitions=True)


def stdlib_rg(env: Env) -> Measure:
    return _rg(env, env.stdlib, STDLIB_NAMES)


def stdlib_memory(env: Env) -> Measure:
    """The warm process's memory over its baseline with the tree, the content index and
    the symbol index (identifier uses included) ready on the standard library."""
    with env.ours(env.stdlib, "--index-memory", str(CODE_BUDGET)) as server:
        state = wait_symbols(server)["status"]
    return Measure("memory", state["memory_bytes"], {
        "symbol_files": state["symbol_files"], "symbols_indexed": state["symbols_indexed"],
        "files": state["files"], "indexed_bytes": state["indexed_bytes"]})


SCENARIOS = [
    Scenario("code_symbols_ts_warm", f"code.symbols {', '.join(TS_NAMES)}, warm, repeated "
             f"({TYPESCRIPT}'s lib/*.d.ts)", "rg -n -w NAME (each)", Target("≤", 0.1),
             ts_symbols, ts_rg),
    Scenario("code_references_ts_warm", f"code.references {', '.join(TS_NAMES)}, warm, "
             f"repeated ({TYPESCRIPT}'s lib/*.d.ts)", "rg -n -w NAME (each)",
             Target("≤", 0.3), ts_references, ts_rg),
    Scenario("code_references_stdlib_warm", f"code.references {', '.join(STDLIB_NAMES)}, "
             "warm, repeated (standard library)", "rg -n -w NAME (each)", Target("≤", 0.3),
             stdlib_references, stdlib_rg),
    Scenario("code_index_memory_stdlib", "warm process's memory with the symbol index "
             "ready, identifier uses included (standard library)", "—", None,
             stdlib_memory, None),
]
