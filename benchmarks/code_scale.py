"""The code methods at growing sizes (issue 33): code.symbols and code.references of one
exact name on the generated trees, with the symbol index (a warm server, asked again and
again once it is ready) and without it (`--index-memory 0`: a search for the name, then
its files parsed), against `rg -n -w NAME`; and what the index costs: its build and the
warm process's memory.

NAME is the first three-word function the first generated Python file defines: the
trees share their first files, so it is the same at every size, defined in a few dozen
files per 200k and used in a few hundred.
"""

from __future__ import annotations

import itertools
import re
import time
from pathlib import Path
from typing import Any, Callable

from benchmarks import scenarios as sc
from benchmarks.code_speed import CODE_BUDGET, wait_symbols
from benchmarks.env import Env
from benchmarks.loadclient import ProtocolError
from benchmarks.report import Measure

_THREE_WORDS = re.compile(r"^def ([a-z]+_[a-z]+_[a-z]+)\(", re.M)


def name_in(tree: Path) -> str:
    for path in sorted((tree / "src" / "pkg000" / "mod00").glob("*.py")):
        found = _THREE_WORDS.search(path.read_text())
        if found:
            return found.group(1)
    raise ProtocolError(f"no three-word function in {tree}/src/pkg000/mod00")


def kept_and_not(env: Env, once: Callable[[int], int]) -> Measure:
    """The median time of `once(sc.ALL)` repeated (a warm server keeps a whole code reply
    until the tree changes: tools/warm/code_answers.py), with, in the detail, the first
    call's time (nothing kept: the index's answer made, its files' lines read whole) and
    the median of calls each a new question (max_results ALL + i: made again, not kept)."""
    start = time.perf_counter()
    once(sc.ALL)
    first = time.perf_counter() - start
    measure = sc.median_time(env, lambda: once(sc.ALL))
    rounds = itertools.count(1)
    unkept = sc.median_time(env, lambda: once(sc.ALL + next(rounds)))
    measure.detail.update({"first_s": round(first, 6), "not_kept_s": round(unkept.value, 6)})
    return measure


def _asked(env: Env, tree: Path, method: str, params: dict[str, Any], listed: str,
           warm: bool) -> Measure:
    """The median time of `method` on a server over `tree` (warm: once its symbol index is
    ready; else walking), after one warm-up call; every answer whole and the same size
    (warm: the first call's and a new question's time in the detail, kept_and_not)."""
    options = ("--index-memory", str(CODE_BUDGET)) if warm else env.walking()
    with env.ours(tree, *options) as server:
        state = wait_symbols(server)["status"] if warm else {}

        def once(most: int = sc.ALL) -> int:
            result = server.request(method, {**params, "max_results": most})["result"]
            if result["truncated"] or not result["total"]:
                raise ProtocolError(f"{method}: {result['total']} found, "
                                    f"truncated={result['truncated']}")
            return len(result[listed])
        measure = kept_and_not(env, once) if warm else sc.median_time(env, once)
    # what it found is no count of matching lines: rg's `results` are not comparable
    measure.detail["found"] = measure.detail.pop("results")
    measure.detail.update({k: state[k] for k in ("symbols", "symbol_files", "memory_bytes")
                           if k in state})
    return measure


def _asking(method: str, param: str, listed: str, warm: bool,
            **more: Any) -> Callable[[Env, Path], Measure]:
    def measure(env: Env, tree: Path) -> Measure:
        return _asked(env, tree, method, {param: name_in(tree), **more}, listed, warm)
    return measure


symbols_warm_in = _asking("code.symbols", "query", "symbols", warm=True)
symbols_cold_in = _asking("code.symbols", "query", "symbols", warm=False)
# with the definitions, as `rg -w` finds them too
references_warm_in = _asking("code.references", "name", "references", warm=True,
                             include_definitions=True)
references_cold_in = _asking("code.references", "name", "references", warm=False,
                             include_definitions=True)


def rg_word_in(env: Env, tree: Path) -> Measure:
    return sc.command_time(env, [env.rg, "-n", "-w", "--no-require-git", "-e",
                                  name_in(tree)], tree)


def build_in(env: Env, tree: Path) -> Measure:
    """Process start to the symbol index ready (its files/s and memory in the detail)."""
    with env.ours(tree, "--index-memory", str(CODE_BUDGET)) as server:
        ready = wait_symbols(server)
    state = ready["status"]
    seconds = ready["seconds"] - ready["tree_seconds"]
    return Measure("time", ready["seconds"], {
        "symbol_files": state["symbol_files"], "symbols_indexed": state["symbols_indexed"],
        "files_per_second": round(state["symbol_files"] / max(seconds, 1e-9)),
        "memory_bytes": state["memory_bytes"]})


def memory_in(env: Env, tree: Path) -> Measure:
    """The warm process's memory once its symbol index is ready (workspace.status's
    memory_bytes: its resident memory), under --index-memory CODE_BUDGET."""
    with env.ours(tree, "--index-memory", str(CODE_BUDGET)) as server:
        state = wait_symbols(server)["status"]
    return Measure("memory", state["memory_bytes"], {
        "symbol_files": state["symbol_files"], "symbols_indexed": state["symbols_indexed"],
        "files": state["files"]})


def default_budget(env: Env, tree: Path) -> Measure:
    """--index-memory's default: what the memory is compared with (for information)."""
    return Measure("memory", 256 * 1024 * 1024)
