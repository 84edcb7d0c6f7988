"""Problems (issue 44, docs/protocol.md Diagnostics): each code pyflakes and our I001 report,
what is never reported, "introduced" as a multiset (a moved problem is not new, a rename
reports every read), broken_imports across a small package, the gate, the note, and a
checker that fails, is missing or runs past the bounds: skipped, the edit unchanged."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from chorus_tools.tools.code.check import check
from chorus_tools.tools.context import Limits, ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.mutate.write import write
from chorus_tools.tools.patch.diagnostics import Judge
from chorus_tools.tools.patch.note import note
from chorus_tools.tools.patch.patch import patch


def _problems(path: str, before: str | None, after: str, **limits: float) -> dict[str, Any]:
    judged = Judge(path, after, Limits(**limits)).diagnosis(before, after)  # type: ignore[arg-type]
    assert judged is not None
    return judged.reply()


def _codes(after: str, before: str | None = None) -> list[tuple[int, str]]:
    return [(p["line"], p["code"]) for p in _problems("m.py", before, after)["problems"]]


@pytest.mark.parametrize("text, found", [
    ("print(nme)\n", [(1, "F821")]),
    ("__all__ = ['gone']\n", [(1, "F822")]),
    ("x = 1\ndef f():\n    print(x)\n    x = 2\n", [(3, "F823")]),
    ("def f(a):\n    return a is 'x'\n", [(2, "F632")]),
    ("def f():\n    pass\ndef f():\n    pass\n", [(3, "F811")]),
])
def test_each_code(text: str, found: list[tuple[int, str]]) -> None:
    assert _codes(text) == found


@pytest.mark.parametrize("text", [
    "import os\n",  # an unused import
    "def f():\n    x = 1\n",  # an unused variable
    "from not_installed_anywhere import thing\nthing()\n",  # an absolute import
    "from os.path import *\nprint(anything)\n",  # a star import: no F821
    "class A:\n    x = 1\n    y = x\n",  # a class body defines
    "def f():\n    global g\n    g = 1\n",
])
def test_what_is_never_reported(text: str) -> None:
    assert _codes(text) == []


def test_a_moved_problem_is_not_new_and_a_rename_reports_every_read() -> None:
    before = "def parse_config():\n    pass\n\nprint(typo)\n"
    moved = _problems("m.py", before, "import os\n\n" + before)
    assert (moved["problems_total"], moved["problems_introduced"]) == (1, 0)
    assert moved["problems"][0]["introduced"] is False
    calls = "def parse_config():\n    pass\n\nparse_config()\nx = parse_config()\n"
    renamed = _problems("m.py", calls, calls.replace("def parse_config", "def load_config"))
    assert renamed["problems_introduced"] == 2
    assert [(p["line"], p["message"], p["introduced"]) for p in renamed["problems"]] == [
        (4, "undefined name 'parse_config'", True), (5, "undefined name 'parse_config'", True)]


def test_introduced_ones_come_first_and_twenty_at_most() -> None:
    old = "".join(f"print(u{i})\n" for i in range(30))
    got = _problems("m.py", old, old + "print(fresh)\n")
    assert (got["problems_total"], got["problems_introduced"]) == (31, 1)
    assert len(got["problems"]) == 20 and got["problems"][0]["line"] == 31


def test_syntax_errors_leave_problems_unchecked_and_other_languages_say_so() -> None:
    assert _problems("m.py", "x = 1\n", "x = (\n")["problems"] == {
        "skipped": "the file has syntax errors"}
    assert _problems("a.ts", "", "undefinedThing();\n")["problems_checked"] is False
    assert _problems("m.py", "", "x = 1\n")["problems_checked"] is True


def _package(root: Path) -> None:
    (root / "pkg").mkdir()
    (root / "pkg/__init__.py").write_text("")
    (root / "pkg/mod.py").write_text("def load():\n    pass\n\nX = 1\n")
    (root / "pkg/user.py").write_text("from .mod import load\n")
    (root / "app.py").write_text("import os\nfrom pkg.mod import load, X\n")
    (root / "other.py").write_text("from elsewhere import load\n")


def test_i001_relative_imports_the_workspace_cannot_resolve(ctx: ToolContext,
                                                           root: Path) -> None:
    _package(root)
    (root / "pkg/lazy.py").write_text("def __getattr__(name):\n    return name\n")
    text = ("from .mod import load, nope\nfrom .missing import a\nfrom . import mod, ghost\n"
            "from .lazy import anything\nfrom .mod import *\n")
    done = write(ctx, "pkg/new.py", text)
    assert [(p["line"], p["code"], p["message"]) for p in done["diagnostics"]["problems"]] == [
        (1, "I001", "'.mod' does not define 'nope'"),
        (2, "I001", "no module '.missing' in the workspace"),
        (3, "I001", "package '.' does not define 'ghost'")]


def test_broken_imports_name_the_importers(ctx: ToolContext, root: Path) -> None:
    _package(root)
    done = patch(ctx, "pkg/mod.py", [{"find": "def load():", "replace": "def load_all():"}])
    diagnostics = done["diagnostics"]
    assert diagnostics["broken_imports"] == [{"path": "app.py", "line": 2, "name": "load"},
                                             {"path": "pkg/user.py", "line": 1,
                                              "name": "load"}]
    assert diagnostics["broken_imports_total"] == 2
    assert note(diagnostics) == ("Note: this edit broke imports: 2 files import the removed "
                                 "name 'load': app.py:2, pkg/user.py:1")
    assert "broken_imports" not in check(ctx, "pkg/mod.py")["diagnostics"]
    kept = patch(ctx, "pkg/mod.py", [{"find": "X = 1", "replace": "X = 2"}])
    assert "broken_imports" not in kept["diagnostics"]


def test_file_check_marks_nothing_introduced(ctx: ToolContext, root: Path) -> None:
    (root / "a.py").write_text("print(nme)\n")
    got = check(ctx, "a.py")["diagnostics"]
    assert got["problems_total"] == 1 and got["problems_introduced"] == 0
    assert got["problems"][0]["introduced"] is False


def test_the_gate_refuses_and_writes_nothing(ctx: ToolContext, root: Path) -> None:
    (root / "a.py").write_text("def parse():\n    pass\n\nparse()\n")
    ctx.problems_gate = "introduced"
    with pytest.raises(ToolError) as refused:
        patch(ctx, "a.py", [{"find": "def parse", "replace": "def load"}])
    assert refused.value.code == "edit_breaks_syntax"
    assert refused.value.details["reason"] == "problems"
    assert refused.value.details["diagnostics"]["problems_introduced"] == 1
    assert (root / "a.py").read_text() == "def parse():\n    pass\n\nparse()\n"
    ctx.problems_gate = "off"
    assert patch(ctx, "a.py", [{"find": "def parse", "replace": "def load"}])["success"]


def test_the_note_names_the_problems() -> None:
    got = _problems("m.py", "def f():\n    pass\n", "def f():\n    return parse_confg()\n")
    assert note(got) == ("Note: this edit introduced 1 problem: line 2: undefined name "
                         "'parse_confg' (F821)")


def test_a_checker_that_crashes_or_is_missing_is_skipped(monkeypatch: pytest.MonkeyPatch,
                                                        ctx: ToolContext, root: Path) -> None:
    from pyflakes import checker

    def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(checker.Checker, "__init__", crash)
    done = write(ctx, "a.py", "print(nme)\n")
    assert done["diagnostics"]["problems"] == {"skipped": "the checker failed: RuntimeError"}
    assert (root / "a.py").read_text() == "print(nme)\n"
    monkeypatch.setitem(__import__("sys").modules, "pyflakes", None)
    assert _problems("m.py", None, "print(x)\n")["problems"] == {
        "skipped": "the checker (pyflakes) is not installed"}


def test_a_checker_past_the_timeout_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    from pyflakes import checker
    walk = checker.Checker.handleNode

    def slow(self: Any, node: Any, parent: Any) -> None:
        time.sleep(0.0005)
        walk(self, node, parent)

    monkeypatch.setattr(checker.Checker, "handleNode", slow)
    text = "".join(f"def f{i}():\n    return ({i}, {i})\n" for i in range(500))
    assert _problems("m.py", None, text, syntax_timeout=0.2)["problems"] == {
        "skipped": "parsing took over 0.2 s"}


@pytest.mark.parametrize("name, data", [
    ("legacy encoding", "# é\nprint('é', nme)\n".encode("cp1252")),
    ("BOM", b"\xef\xbb\xbfprint(nme)\n"),
    ("CRLF", b"x = 1\r\nprint(nme)\r\n"),
])
def test_encodings_are_answered(ctx: ToolContext, root: Path, name: str, data: bytes) -> None:
    (root / "a.py").write_bytes(data)
    got = check(ctx, "a.py")["diagnostics"]
    assert [(p["code"], p["message"]) for p in got["problems"]] == [
        ("F821", "undefined name 'nme'")], name


def test_deep_and_big_files_are_bounded() -> None:
    deep = "x = " + "(" * 100_000 + "1" + ")" * 100_000 + "\n"
    assert _problems("m.py", "x = 1\n", deep)["problems"] == {
        "skipped": "the file has syntax errors"}  # too many nested parentheses
    deep_sum = "x = " + "+".join(["1"] * 100_000) + "\n"
    assert _problems("m.py", "x = 1\n", deep_sum)["problems"] == {
        "skipped": "nested deeper than its parser goes"}
    long_sum = "x = " + "+".join(["1"] * 2000) + "\nprint(nme)\n"  # compiles: checked
    assert _problems("m.py", "x = 1\n", long_sum)["problems_introduced"] == 1
    big = "x = 1\n" * (700 << 10)  # 4.2 MiB, over the default --syntax-max-bytes
    assert _problems("m.py", "x = 1\n", big)["problems"] == {
        "skipped": "file over 4194304 bytes"}
