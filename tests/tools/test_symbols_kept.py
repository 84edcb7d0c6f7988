"""Whole symbols are kept in the warm process only, within a share of --index-memory
(issue 45): a warm code.symbols parses a file it answers from once, then answers from
what it kept; a change forgets the file's; what is kept stays within its bound; a worker
keeps nothing between calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from warm_support import built_warm, run_background
from chorus_tools.tools.code import symbols as symbols_module
from chorus_tools.tools.code.query import NameQuery
from chorus_tools.tools.encoded import decoded
from chorus_tools.tools.warm import code_answers, symbol_index
from chorus_tools.tools.warm.answers import Warm


@pytest.fixture
def warm(root: Path) -> Iterator[Warm]:
    for i in range(4):
        (root / f"m{i}.py").write_text(f"class Engine{i}:\n    def start(self): ...\n")
    with built_warm(root) as found:
        yield found


def ask(warm: Warm, query: str) -> dict[str, Any]:
    assert warm.current()
    asked = NameQuery.read(query)
    found = code_answers.code_symbols(warm, "", [], False, False, asked.needle,
                                      asked.parts[-1], "exact", True, asked, 100)
    assert found is not None
    if found.get("reply") is not None:  # nothing to parse: the whole reply, its rows in it
        found["rows"] = [(None, record) for record in decoded(found["reply"])["symbols"]]
    return found


def counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    parsed: list[str] = []
    real = symbol_index.symbols

    def counted(path: str, data: bytes) -> Any:
        parsed.append(path)
        return real(path, data)
    monkeypatch.setattr(symbol_index, "symbols", counted)
    return parsed


def test_a_file_answered_from_is_parsed_once(warm: Warm,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = counting(monkeypatch)
    first = ask(warm, "start")
    assert first["total"] == 4 and first["files"] == [] and len(parsed) == 4
    assert ask(warm, "start") == first and len(parsed) == 4
    assert [row[1]["name_path"] for row in ask(warm, "Engine2")["rows"]] == ["Engine2"]
    assert len(parsed) == 4


def test_a_change_forgets_the_files_symbols(warm: Warm, root: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    ask(warm, "start")
    (root / "m1.py").write_text("class Engine1:\n    def stop(self): ...\n")
    found = ask(warm, "start")
    assert "m1.py" not in warm.symbols.kept and found["total"] == 3
    assert found["files"] == ["m1.py"]  # unknown until parsed again: the worker's
    run_background(warm)
    assert ask(warm, "stop")["total"] == 1


def test_what_is_kept_stays_within_its_share_of_the_budget(
        warm: Warm, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(warm.symbols, "kept_limit", 5)
    ask(warm, "start")
    assert warm.symbols.kept_count <= 5 and len(warm.symbols.kept) == 2
    assert symbol_index.SymbolIndex(
        warm.ctx, 256 << 20).kept_limit == (256 << 20) // 16 // symbol_index.SYMBOL_BYTES


def test_a_worker_keeps_no_symbols_between_calls() -> None:
    assert not any(name.startswith("_kept") for name in vars(symbols_module))


def test_names_by_file_stay_within_their_bound(warm: Warm) -> None:
    """An exact name is looked up in a file's symbols by name (tools/warm/code_replies.py:
    ByName), kept for at most as many symbols as whole symbols may be kept."""
    warm.by_name.limit = 3
    for query in ("start", "Engine1", "Engine3"):
        found = ask(warm, query)
        assert found["total"] == (4 if query == "start" else 1)
        assert warm.by_name.count <= 3
    assert [row[1]["name_path"] for row in ask(warm, "Engine2/start")["rows"]] == [
        "Engine2/start"]
