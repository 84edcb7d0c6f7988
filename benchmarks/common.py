"""The searches agents run most (issue 32): a common word, with the default `max_results`
(the first 100 matches), and every file, count or match of it, each against what ripgrep
itself answers on the same tree in the same run, walking (`--index-memory 0`) and on a
warm server.

The baselines are rg's own modes, as a user would type them: `rg -n --sort path WORD |
head -100` (rg stops at the first write after head has its lines), `rg -l`, `rg -c` and
`rg -n`, each with `--no-require-git` so that it reads `.gitignore` as ours does.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from benchmarks import scenarios as sc
from benchmarks.env import Env
from benchmarks.loadclient import ProtocolError, StdioServer
from benchmarks.report import Measure
from benchmarks.warm import warm_server

COMMON = "import"  # in two files of three of the generated trees
FIRST = 100  # file.search's default max_results
MODES = {"files_with_matches": ("files", "-l"), "count": ("counts", "-c"),
         "content": ("matches", "-n")}


def _head_lines(argv: list[str], cwd: Path, lines: int) -> int:
    """Run `argv` as `| head -LINES` would: read until it printed `lines` lines, then
    close the pipe (its next write fails and it exits); the lines it printed."""
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    assert proc.stdout is not None  # piped above
    seen = b""
    fd = proc.stdout.fileno()
    while seen.count(b"\n") < lines and (chunk := os.read(fd, 1 << 16)):
        seen += chunk
    proc.stdout.close()
    proc.wait()
    return min(seen.count(b"\n"), lines)


def rg_first_in(env: Env, tree: Path) -> Measure:
    argv = [env.rg, "-n", "--sort", "path", "--no-require-git", "-e", COMMON]
    return sc.median_time(env, lambda: _head_lines(argv, tree, FIRST))


def rg_mode_in(env: Env, tree: Path, mode: str) -> Measure:
    return sc.command_time(env, [env.rg, MODES[mode][1], "--no-require-git", "-e", COMMON],
                            tree)


def _median_search(env: Env, server: StdioServer, params: dict[str, Any], items: str,
                   truncated: bool) -> Measure:
    """The median time of one file.search on `server`; the reply must be truncated or
    not as asked (the baseline finds every item, or exactly the first FIRST)."""
    def once() -> int:
        result = server.request("file.search", params)["result"]
        if result["truncated"] is not truncated or result["engine"] != "ripgrep":
            raise ProtocolError(f"file.search answered truncated={result['truncated']}, "
                                f"engine={result['engine']}")
        return len(result[items])
    return sc.median_time(env, once)


def _first_params() -> dict[str, Any]:
    return {"pattern": COMMON}


def _mode_params(mode: str) -> dict[str, Any]:
    return {"pattern": COMMON, "output_mode": mode, "max_results": sc.ALL}


def walk_first_in(env: Env, tree: Path) -> Measure:
    with env.ours(tree, *env.walking()) as server:
        return _median_search(env, server, _first_params(), "matches", True)


def warm_first_in(env: Env, tree: Path) -> Measure:
    server, state = warm_server(env, tree)
    found = _median_search(env, server, _first_params(), "matches", True)
    found.detail.update(state)
    return found


def walk_mode_in(env: Env, tree: Path, mode: str) -> Measure:
    with env.ours(tree, *env.walking()) as server:
        return _median_search(env, server, _mode_params(mode), MODES[mode][0], False)


def warm_mode_in(env: Env, tree: Path, mode: str) -> Measure:
    server, state = warm_server(env, tree)
    found = _median_search(env, server, _mode_params(mode), MODES[mode][0], False)
    found.detail.update(state)
    return found
