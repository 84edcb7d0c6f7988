"""The symbol index says early that it will not fit (issue 45): once ESTIMATE_AFTER files
are parsed it weighs the files still queued at the memory per file the first ones took
against the room the budget leaves, and turns off at once, saying why, instead of
parsing on until the budget runs out; where the rest fits it builds on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.warm import symbol_index
from chorus_tools.tools.warm.symbol_helpers import Helpers
from chorus_tools.tools.warm.symbol_index import SymbolIndex

FILES = 40
PER_FILE = 100  # bytes of room each parsed file takes, as `room` below reports


def built(ctx: ToolContext, root: Path, monkeypatch: pytest.MonkeyPatch,
          room_at_start: int) -> SymbolIndex:
    monkeypatch.setattr(symbol_index, "ESTIMATE_AFTER", 5)
    monkeypatch.setattr(Helpers, "wanted", staticmethod(lambda: 0))
    index = SymbolIndex(ctx)
    for i in range(FILES):
        path = root / f"m{i:02}.py"
        path.write_text(f"def f{i}():\n    return {i}\n")
        index.changed(path.name, os.stat(path))
    index.start()

    def room() -> int:
        return room_at_start - PER_FILE * len(index.files)
    index.step(0.0, lambda: False, room)  # the first step notes the room, parses nothing
    for path in list(index.queue)[:5]:  # the first files, parsed as a step parses them
        del index.queue[path]
        index.parse(path)
    while index.step(0.01, lambda: False, room):  # only the estimate may turn it off
        pass
    return index


def test_an_index_that_will_not_fit_turns_off_early(ctx: ToolContext, root: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    index = built(ctx, root, monkeypatch, PER_FILE * FILES // 2)
    assert not index.on and index.reason is not None
    assert "would not fit --index-memory" in index.reason, index.reason
    assert not index.files and not index.queue


def test_an_index_that_fits_builds_on(ctx: ToolContext, root: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    index = built(ctx, root, monkeypatch, 1_000_000)
    assert index.on and len(index.files) == FILES and index.symbols == FILES
