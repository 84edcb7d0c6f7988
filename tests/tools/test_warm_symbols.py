"""The symbol index in the warm process (tools/warm/symbol_index.py) and the code answers
it gives (tools/warm/code_answers.py), on a Warm built in process: what it holds, what
stays unknown, what a change does at once, its budget, and a map equal to the cold one."""

from __future__ import annotations

import os
import pickle
import signal
from pathlib import Path
from typing import Iterator

import pytest

from warm_support import run_background
from chorus_tools.tools.code.across import Reply
from chorus_tools.tools.code.codemap import code_map as cold_map
from chorus_tools.tools.code.query import NameQuery
from chorus_tools.tools.confine.deny import DenyRules
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.encoded import Encoded, decoded
from chorus_tools.tools.warm import code_answers, code_replies, symbol_index
from chorus_tools.tools.warm.answers import Memory, Warm
from chorus_tools.tools.warm.client import Pickled
from chorus_tools.tools.warm.events import Events
from chorus_tools.tools.warm.symbol_helpers import Helpers

CORE = "class Engine:\n    def start(self):\n        return helper()\n\n\ndef helper():\n" \
       "    return 1\n"


@pytest.fixture
def workspace(root: Path) -> Iterator[ToolContext]:
    (root / "src").mkdir()
    (root / "src" / "core.py").write_text(CORE)
    (root / "src" / "use.py").write_text("from core import Engine\nEngine().start()\n")
    (root / "src" / "notes.txt").write_text("Engine in prose\n")
    (root / "README.md").write_text("# Engine\n\nAbout it.\n")
    (root / "run").write_text("#!/usr/bin/env python3\ndef main():\n    pass\n")
    (root / "blob.py").write_bytes(b"def hidden_in_binary():\0\n")
    (root / "secrets").mkdir()
    (root / "secrets" / "key.py").write_text("def Engine():\n    pass\n")
    ws = Workspace(str(root), deny=DenyRules(["secrets"]))
    yield ToolContext(ws=ws)
    os.close(ws.root_fd)


@pytest.fixture
def warm(workspace: ToolContext) -> Iterator[Warm]:
    found = Warm(workspace, 1 << 30, Events(), Memory())
    run_background(found)
    yield found
    found.events.close()


def defining(warm: Warm, name: str, match: str = "exact",
             case_sensitive: bool = True) -> dict | None:
    """The files the answer names: those its rows come from, and those left to parse."""
    assert warm.current()
    asked = NameQuery.read(name, match, case_sensitive)
    found = code_answers.code_symbols(warm, "", [], False, False, asked.needle,
                                      asked.parts[-1], match, case_sensitive, asked, 100)
    if found is None:
        return None
    assert found["total"] >= len(found["rows"])
    records = [row[1] for row in found["rows"]] if found.get("reply") is None \
        else decoded(found["reply"])["symbols"]  # a whole reply: nothing to parse
    return {"files": sorted({record["path"] for record in records} | set(found["files"])),
            "skipped": found["skipped"]}


def test_the_index_holds_each_code_files_names(warm: Warm) -> None:
    index = warm.symbols
    assert index.by_name["Engine"] == ["src/core.py", "README.md"] or \
        sorted(index.by_name["Engine"]) == ["README.md", "src/core.py"]
    assert index.by_name["main"] == ["run"]  # a script its first line names
    assert "blob.py" in index.not_code and "src/notes.txt" in index.not_code
    assert "secrets/key.py" not in index.files  # --deny: never in the tree
    assert index.unknown() == set()
    status = warm.status()
    assert status["symbols"] == "ready"
    assert status["symbol_files"] == 4 and status["symbols_indexed"] == 5


def test_symbol_questions_name_the_defining_files(warm: Warm) -> None:
    assert defining(warm, "helper") == {"files": ["src/core.py"], "skipped": 0}
    assert defining(warm, "Engine") == {"files": ["README.md", "src/core.py"], "skipped": 1}
    assert defining(warm, "eng", "prefix", False)["files"] == ["README.md", "src/core.py"]
    assert defining(warm, "tar", "substring")["files"] == ["src/core.py"]
    assert defining(warm, "absent") == {"files": [], "skipped": 0}


def test_a_change_is_a_candidate_before_it_is_parsed(warm: Warm, root: Path) -> None:
    (root / "src" / "use.py").write_text("def fresh_name():\n    pass\n")
    found = defining(warm, "fresh_name")
    assert found is not None and found["files"] == ["src/use.py"]
    assert "src/use.py" in warm.symbols.queue
    run_background(warm)
    assert defining(warm, "fresh_name")["files"] == ["src/use.py"]
    assert warm.symbols.by_name["fresh_name"] == ["src/use.py"]


def test_a_deleted_or_renamed_definition_leaves_the_index(warm: Warm, root: Path) -> None:
    (root / "src" / "core.py").write_text(CORE.replace("helper", "assistant"))
    assert warm.current()
    run_background(warm)
    assert "helper" not in warm.symbols.by_name
    assert defining(warm, "assistant")["files"] == ["src/core.py"]
    (root / "src" / "core.py").unlink()
    assert warm.current()
    assert "assistant" not in warm.symbols.by_name
    assert defining(warm, "assistant")["files"] == []


def test_a_file_with_two_links_stays_unknown(warm: Warm, root: Path) -> None:
    """Another link may write it unseen: always a candidate (the new name is the one
    inotify reports; docs/design.md says what it cannot see of the old one)."""
    os.link(root / "src" / "core.py", root / "twin.py")
    assert warm.current()
    run_background(warm)
    assert "twin.py" in warm.symbols.unknown() and "twin.py" not in warm.symbols.files
    assert "twin.py" in defining(warm, "helper")["files"]


def test_references_are_the_uses_the_index_keeps(warm: Warm) -> None:
    assert warm.current()
    found = code_answers.code_references(warm, "", [], "start", 200, 0, False)
    assert found is not None and found["files"] == [] and found["total"] == 1
    reply = decoded(found["reply"])  # nothing to parse: the whole reply
    assert reply == {"references": [
        {"path": "src/use.py", "line": 2, "column": 10, "text": "Engine().start()",
         "kind": "call", "in": ""}], "total": 1, "truncated": False, "files_searched": 0,
        "files_skipped": 0}
    found = code_answers.code_references(warm, "src", ["use*"], "Engine", 200, 0, True)
    assert found is not None
    assert [(r["path"], r["kind"]) for r in decoded(found["reply"])["references"]] == [
        ("src/use.py", "import"), ("src/use.py", "call")]


def test_the_warm_map_is_the_cold_map(warm: Warm, workspace: ToolContext) -> None:
    assert warm.current()
    for params in ({}, {"max_bytes": 60}, {"focus": ["src/use.py"]}):
        focus = params.get("focus", [])
        warm_answer = code_answers.code_map(warm, "", [], focus, params.get("max_bytes", 4096))
        assert warm_answer == cold_map(workspace, **params)
        assert warm_answer["files"] >= 1


def test_an_index_over_the_budget_turns_off(workspace: ToolContext, root: Path) -> None:
    resident = [0]  # the process's memory as the budget sees it, set by the test
    warm = Warm(workspace, 1 << 30, Events(), lambda: resident[0])
    try:
        run_background(warm)
        assert warm.status()["symbols"] == "ready"
        resident[0] = 2 << 30  # then the process outgrows its budget while files change
        for i in range(300):
            (root / "src" / f"m{i}.py").write_text(f"def f{i}():\n    pass\n")
        assert warm.current()
        run_background(warm)
        assert warm.status()["symbols"] == "off"
        assert defining(warm, "f1") is None  # the worker searches instead
    finally:
        warm.events.close()


@pytest.fixture
def many(root: Path, workspace: ToolContext, monkeypatch: pytest.MonkeyPatch) -> ToolContext:
    """Enough files for the helpers, in small batches."""
    for i in range(60):
        (root / "src" / f"gen{i:02d}.py").write_text(f"def generated_{i}():\n    return {i}\n")
    monkeypatch.setattr(symbol_index, "BATCH", 4)
    return workspace


def built(ctx: ToolContext, helpers: int, monkeypatch: pytest.MonkeyPatch) -> Warm:
    monkeypatch.setattr(Helpers, "wanted", staticmethod(lambda: helpers))
    warm = Warm(ctx, 1 << 30, Events(), Memory())
    run_background(warm)
    return warm


def test_helpers_index_what_the_warm_process_alone_indexes(
        many: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    alone, helped = built(many, 0, monkeypatch), built(many, 2, monkeypatch)
    try:
        assert alone.symbols.helpers is None and helped.symbols.helpers is not None
        def read(warm: Warm) -> dict[str, tuple]:
            words = warm.symbols.word_list
            return {path: (entry.names, [words[i] for i in entry.words])
                    for path, entry in warm.symbols.files.items()}
        assert read(helped) == read(alone)
        assert {k: sorted(v) for k, v in helped.symbols.by_name.items()} == \
            {k: sorted(v) for k, v in alone.symbols.by_name.items()}
        assert helped.symbols.unknown() == set() and helped.status()["symbols"] == "ready"
    finally:
        for warm in (alone, helped):
            warm.symbols.close()
            warm.events.close()


def test_an_answer_for_a_file_changed_meanwhile_is_dropped(many: ToolContext,
                                                           root: Path) -> None:
    index = symbol_index.SymbolIndex(many)
    index.helpers = Helpers(many, 1)
    try:
        for i in range(12):
            index.changed(f"src/gen{i:02d}.py", os.stat(root / "src" / f"gen{i:02d}.py"))
        index.started = True
        index._hand_out()
        handed = sorted(index.handed)
        assert handed and "src/gen00.py" in handed
        (root / "src" / "gen00.py").write_text("def renamed():\n    pass\n")
        index.changed("src/gen00.py", os.stat(root / "src" / "gen00.py"))
        while index.handed:
            index.helpers.wait(1.0)
            index._take()
        assert "src/gen00.py" not in index.files and "src/gen00.py" in index.queue
        assert all(path in index.files for path in handed if path != "src/gen00.py")
    finally:
        index.close()


def test_the_last_files_are_shared_with_running_helpers_and_a_few_parsed_here(
        many: ToolContext, root: Path) -> None:
    """A build's tail: fewer files than two batches left, half go to the running helper
    and half stay here, so that neither CPU waits; with no helper running (a few files
    changed after the build) none is started for them."""
    index = symbol_index.SymbolIndex(many)
    index.helpers = Helpers(many, 1)
    try:
        paths = [f"src/gen{i:02d}.py" for i in range(6)]
        for path in paths:
            index.changed(path, os.stat(root / path))
        index.started = True
        index._hand_out()
        assert not index.handed and not index.helpers.running()
        index.helpers.idle()  # the build's helper runs
        index._hand_out()
        handed = list(index.handed)
        assert handed == paths[:3] and list(index.queue) == paths[3:]
        while index.handed:
            index.helpers.wait(1.0)
            index._take()
        assert all(path in index.files for path in handed)
    finally:
        index.close()


def test_a_dead_helpers_files_are_parsed_again(many: ToolContext, root: Path) -> None:
    index = symbol_index.SymbolIndex(many)
    index.helpers = Helpers(many, 1)
    try:
        for i in range(12):
            index.changed(f"src/gen{i:02d}.py", os.stat(root / "src" / f"gen{i:02d}.py"))
        index.started = True
        (helper,) = index.helpers.idle()
        os.kill(helper.pid, signal.SIGKILL)
        index._hand_out()
        handed = set(index.handed)
        while index.handed:
            index.helpers.wait(1.0)
            index._take()
        assert handed <= set(index.queue)  # back in the queue: parsed here
        assert index.unknown() >= handed
    finally:
        index.close()


def test_mentions_are_the_files_whose_uses_hold_the_name(warm: Warm, root: Path) -> None:
    """What broken imports reads (tools/patch/broken.py): files using the name as an
    identifier, known or not yet parsed; prose never."""
    assert warm.current()
    assert code_answers.code_mentions(warm, "", [], "Engine") == {
        "files": ["src/core.py", "src/use.py"], "skipped": 1, "late": []}
    assert code_answers.code_mentions(warm, "", [], "prose") == {
        "files": [], "skipped": 1, "late": []}
    (root / "src" / "late.py").write_text("from core import Engine\n")
    assert warm.current()
    assert code_answers.code_mentions(warm, "", [], "Engine")["files"] == [
        "src/core.py", "src/late.py", "src/use.py"]


def test_a_whole_reply_is_encoded_once_or_pickled_when_json_cannot_carry_it() -> None:
    """A path from an undecodable file name holds a lone surrogate: orjson refuses it,
    so that reply goes pickled (the server's fallback encoder escapes it)."""
    asked = Reply("symbols", 100, "files_parsed")
    rows = [((0, "a.py", 1, 0), {"path": "a.py", "name": "f"})]
    made = code_replies.answer(set(), 0, rows, 1, asked, (1, 2, 3))["reply"]
    assert isinstance(made, Encoded) and made.stamp == (1, 2, 3)
    assert decoded(made) == {"symbols": [{"path": "a.py", "name": "f"}], "total": 1,
                             "truncated": False, "files_parsed": 0, "files_skipped": 0}
    odd = [((0, "\udcff.py", 1, 0), {"path": "\udcff.py", "name": "f"})]
    made = code_replies.answer(set(), 0, odd, 1, asked, (1, 2, 3))["reply"]
    assert isinstance(made, Pickled)
    assert pickle.loads(made)["symbols"] == [{"path": "\udcff.py", "name": "f"}]
