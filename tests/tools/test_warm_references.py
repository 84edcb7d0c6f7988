"""code.references answered from the symbol index (issue 45): the warm process keeps every
file's identifier uses and gives the reply's rows from memory, reading only the lines it
shows; the worker parses only what the index does not know. Judged against the walking
answer on a tree of every language the server parses, name by name, and right after
files change (before the index has parsed them again)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest

from fanout_runner import settle
from warm_support import run_background
from chorus_tools.tools.code import narrow
from chorus_tools.tools.code.references import references
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.warm import code_answers, line_table
from chorus_tools.tools.warm.answers import Memory, Warm
from chorus_tools.tools.warm.events import Events

SAMPLES = Path(__file__).parent.parent / "samples" / "code"
EXTRA = {
    # a name in strings, comments, imports, calls, types and definitions
    "pkg/uses.py": "from shapes import Shape, area\nimport shapes\n\n\nclass Square(Shape):\n"
                   "    '''area in a docstring'''\n    def area(self) -> float:  # area\n"
                   "        return area(self) + shapes.area(self)\n",
    "pkg/café.py": "def ré(): return ré()\n# ré\nx = 'ré'\n",
    "pkg/crlf.ts": "function area(s: Shape): number {\r\n  return area(s);\r\n}\r\n",
    "notes.txt": "area Shape in prose\n",
}


@pytest.fixture
def tree(root: Path) -> Path:
    for sample in SAMPLES.iterdir():
        shutil.copy(sample, root / sample.name)
        (root / "deep" / "er").mkdir(parents=True, exist_ok=True)
        shutil.copy(sample, root / "deep" / "er" / sample.name)
    for rel, text in EXTRA.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(text.encode())
    return root


@pytest.fixture
def pair(tree: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[ToolContext, Warm]]:
    """A context whose code calls ask a Warm built here, right after a barrier (as the
    warm process answers a worker), and that Warm, settled."""
    ws = Workspace(str(tree))
    ctx = ToolContext(ws=ws)
    warm = Warm(ToolContext(ws=Workspace(str(tree))), 1 << 30, Events(), Memory())
    run_background(warm)

    def ask(_ctx: ToolContext, op: str, **kwargs: Any) -> Any:
        return warm.answer(op, kwargs, warm.current())
    monkeypatch.setattr(narrow, "ask", ask)
    ctx.warm = "in-process"
    yield ctx, warm
    warm.events.close()
    os.close(ws.root_fd)


def walking(ctx: ToolContext, **params: Any) -> dict[str, Any]:
    cold = ToolContext(ws=ctx.ws)
    return settle(cold, references(cold, **params))


def warm_reply(ctx: ToolContext, **params: Any) -> dict[str, Any]:
    return settle(ctx, references(ctx, **params))


def same(ctx: ToolContext, **params: Any) -> dict[str, Any]:
    hot, cold = warm_reply(ctx, **params), walking(ctx, **params)
    for count in ("files_searched", "files_skipped"):
        del hot[count], cold[count]
    assert hot == cold, params
    return hot


def _names(tree: Path) -> list[str]:
    words: set[str] = set()
    for path in tree.rglob("*"):
        if path.is_file():
            words.update(re.findall(r"[A-Za-z_ré][\w]*", path.read_text(errors="replace")))
    return sorted(words)


def test_every_name_of_every_language_answers_as_walking(
        pair: tuple[ToolContext, Warm], tree: Path) -> None:
    ctx, warm = pair
    assert warm.status()["symbols"] == "ready"
    names = _names(tree)
    assert len(names) > 300
    found = 0
    for name in names:
        found += same(ctx, name=name, include_definitions=True, max_results=10_000)["total"]
    assert found > 500  # real answers, not a wall of empty ones


@pytest.mark.parametrize("params", [
    {"name": "area"}, {"name": "area", "include_definitions": True},
    {"name": "area", "max_results": 3}, {"name": "area", "context_lines": 2},
    {"name": "area", "path": "pkg"}, {"name": "area", "glob": "*.ts"},
    {"name": "Shape", "glob": ["!deep/**"], "max_results": 2, "context_lines": 1},
    {"name": "ré", "include_definitions": True}, {"name": "absent_name_qz"},
    {"name": "self", "max_results": 1},
])
def test_limits_context_and_selection_answer_as_walking(
        pair: tuple[ToolContext, Warm], params: dict[str, Any]) -> None:
    ctx, _ = pair
    same(ctx, **params)


def test_the_rows_come_from_memory_and_only_their_lines_are_read(
        pair: tuple[ToolContext, Warm], monkeypatch: pytest.MonkeyPatch) -> None:
    """A warm call parses nothing: the uses are the index's; the files it reads are the
    ones whose lines it shows."""
    ctx, warm = pair
    parsed: list[str] = []
    import chorus_tools.tools.code.occurrences as occurrences_module
    real = occurrences_module.file_table

    def counted(grammar: str, path: str, data: bytes) -> Any:
        parsed.append(path)
        return real(grammar, path, data)
    monkeypatch.setattr(occurrences_module, "file_table", counted)
    reply = warm_reply(ctx, name="area", max_results=2)
    assert parsed == [] and reply["truncated"] and len(reply["references"]) == 2
    assert reply["files_searched"] == 0


def test_a_file_changed_since_it_was_parsed_is_parsed_by_the_worker(
        pair: tuple[ToolContext, Warm], tree: Path) -> None:
    """Right after a change the index does not know the file's uses yet: the reply is
    the walking one all the same."""
    ctx, warm = pair
    path = tree / "pkg" / "uses.py"
    path.write_text(path.read_text().replace("return area(self)", "return area(area(self))"))
    (tree / "pkg" / "new.go").write_text("package p\n\nfunc area() int { return area() }\n")
    reply = same(ctx, name="area", include_definitions=True)
    assert any(r["path"] == "pkg/new.go" for r in reply["references"])
    assert warm.symbols.queue  # still unknown: parsed by the worker, not the index
    run_background(warm)
    same(ctx, name="area", include_definitions=True)
    (tree / "pkg" / "new.go").unlink()
    same(ctx, name="area")


def test_a_file_rewritten_behind_the_index_is_never_read_at_the_wrong_offsets(
        pair: tuple[ToolContext, Warm], tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lines are read after the barrier; a text that is not the one parsed (its
    checksum differs) is left to the worker to parse."""
    ctx, warm = pair
    path = tree / "pkg" / "uses.py"
    changed = "\n\n\n" + path.read_text()
    real = warm.current
    monkeypatch.setattr(warm, "current", lambda: real() and path.write_text(changed) > 0)
    reply = warm_reply(ctx, name="area", path="pkg")
    monkeypatch.setattr(warm, "current", real)
    lines = changed.splitlines()
    assert reply["references"]
    for row in reply["references"]:
        if row["path"] == "pkg/uses.py":
            assert lines[row["line"] - 1] == row["text"]


def test_a_file_rewritten_after_its_lines_were_kept_is_read_again(
        pair: tuple[ToolContext, Warm], tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where a file's lines start is kept from the first answer that showed it; a later
    answer finds the file's signature changed (rewritten behind the index: no barrier saw
    it) and reads it whole again, whose checksum then says it is not the text parsed."""
    ctx, warm = pair
    first = warm_reply(ctx, name="area", path="pkg", max_results=50)
    assert any(r["path"] == "pkg/uses.py" for r in first["references"])
    path = tree / "pkg" / "uses.py"
    changed = "\n\n\n" + path.read_text()
    real = warm.current
    monkeypatch.setattr(warm, "current", lambda: real() and path.write_text(changed) > 0)
    reply = warm_reply(ctx, name="area", path="pkg", max_results=60)  # not the kept reply
    monkeypatch.setattr(warm, "current", real)
    lines = changed.splitlines()
    shown = [row for row in reply["references"] if row["path"] == "pkg/uses.py"]
    assert shown and all(lines[row["line"] - 1] == row["text"] for row in shown)
    assert reply["files_searched"] >= 1  # the worker parsed it


def test_a_second_answer_reads_only_the_lines_it_shows(
        pair: tuple[ToolContext, Warm], monkeypatch: pytest.MonkeyPatch) -> None:
    """The first answer that shows a file reads it whole (checked against the index's
    checksum); the next ones read no file whole, only runs of the lines they show."""
    ctx, warm = pair
    whole: list[str] = []
    real = line_table.LineTables._read

    def counted(self: Any, ctx: ToolContext, fd: int, path: str, stamp: int) -> Any:
        whole.append(path)
        return real(self, ctx, fd, path, stamp)
    monkeypatch.setattr(line_table.LineTables, "_read", counted)
    first = same(ctx, name="Shape", include_definitions=True)
    shown = {row["path"] for row in first["references"]}
    assert sorted(whole) == sorted(shown)
    whole.clear()
    same(ctx, name="Shape", include_definitions=True, context_lines=2)
    assert whole == []


def test_a_whole_reply_is_kept_until_the_tree_changes(
        pair: tuple[ToolContext, Warm], tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx, warm = pair
    made: list[str] = []
    real = code_answers._references

    def counted(warm: Warm, rel: str, *args: Any) -> Any:
        made.append(rel)
        return real(warm, rel, *args)
    monkeypatch.setattr(code_answers, "_references", counted)
    first = same(ctx, name="area")
    assert same(ctx, name="area") == first and len(made) == 1
    path = tree / "pkg" / "uses.py"
    path.write_text(path.read_text().replace("return area(self)", "return area(area(self))"))
    assert same(ctx, name="area")["total"] == first["total"] + 1 and len(made) == 2


FAR = ("const far = 'é' + far;\r\n" + "// filler line, no name here at all\n" * 600
       + "export function far2(): number { return far.length; }\n"
       + "// more filler, no name\n" * 300 + "far")


@pytest.mark.parametrize("context_lines", [0, 1, 3])
def test_uses_far_apart_in_a_large_file_answer_as_walking(
        pair: tuple[ToolContext, Warm], tree: Path, context_lines: int) -> None:
    """Uses more than a read's gap apart (runs read apart), a CRLF line, a non-ASCII
    prefix before a use, and a last line without its line break."""
    ctx, warm = pair
    (tree / "far.ts").write_text(FAR)
    assert warm.current()  # the index hears of it, then parses it
    run_background(warm)
    params = {"name": "far", "include_definitions": True, "context_lines": context_lines}
    assert warm_reply(ctx, **params)["files_searched"] == 0  # the index's rows
    reply = same(ctx, **params)
    assert [row["line"] for row in reply["references"]] == [1, 1, 602, 903]
    assert reply["references"][1]["column"] == 19  # after the é: characters (bytes: 20)


@pytest.mark.parametrize("context_lines", [1, 2])
def test_context_lines_of_many_names_answer_as_walking(
        pair: tuple[ToolContext, Warm], tree: Path, context_lines: int) -> None:
    ctx, _ = pair
    for name in _names(tree)[::7]:
        same(ctx, name=name, include_definitions=True, context_lines=context_lines)
