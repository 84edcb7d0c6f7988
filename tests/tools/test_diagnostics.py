"""What a change left (tools/patch/diagnostics.py): `introduced` counts only the errors
the text before did not have, an error that moved with its text is not new; messages name
what is wrong where the parser can; past the bounds the judge says it skipped, and why."""

from __future__ import annotations

import random

import pytest

from chorus_tools.tools.context import Limits
from chorus_tools.tools.patch.diagnostics import Judge
from chorus_tools.tools.patch.note import note

BROKEN = "def broken(:\n    pass\n"
CLEAN = "def a():\n    return 1\n\n\ndef b():\n    return 2\n"


def _reply(path: str, before: str | None, after: str, **limits: float) -> dict:
    judged = Judge(path, after, Limits(**limits)).diagnosis(before, after)  # type: ignore[arg-type]
    assert judged is not None
    return judged.reply()


@pytest.mark.parametrize("case, before, after, lines, introduced", [
    ("clean to broken", CLEAN, CLEAN.replace("def b():", "def b()"), [5], 1),
    ("already there, an edit elsewhere", BROKEN + CLEAN,
     BROKEN + CLEAN.replace("return 2", "return 3"), [1], 0),
    ("moved down by lines put above it", CLEAN + BROKEN,
     "import os\nimport sys\n\n" + CLEAN + BROKEN, [10], 0),
    ("moved with its text by the change itself", BROKEN + "\n" + CLEAN,
     CLEAN + "\n" + BROKEN, [8], 0),
    ("fixed", BROKEN + CLEAN, "def broken():\n    pass\n" + CLEAN, [], 0),
    ("a new one beside an old one", BROKEN + CLEAN,
     BROKEN + CLEAN.replace("def b():", "def b()"), [1, 7], 1),
    ("a new file", None, BROKEN, [1], 1),
])
def test_introduced_counts_only_new_errors(case: str, before: str | None, after: str,
                                           lines: list[int], introduced: int) -> None:
    got = _reply("m.py", before, after)
    assert [e["line"] for e in got["errors"]] == lines, case
    assert (got["total"], got["introduced"]) == (len(lines), introduced), case


@pytest.mark.parametrize("path, before, after, error", [
    ("a.py", "x = 1\n", "if x\n    y = 1\n", {"line": 1, "column": 5,
                                              "message": "expected ':'"}),
    ("a.ts", "const x = (1 + 2);\n", "const x = (1 + 2;\n",
     {"line": 1, "column": 17, "message": "missing ')'"}),
    ("a.go", "package m\n\nfunc f() {\n\tg(1)\n}\n", "package m\n\nfunc f() {\n\tg(1\n}\n",
     {"line": 4, "column": 5, "message": "missing ')'"}),
    ("a.json", '{"a": 1}\n', '{"a": 1,}\n',
     {"line": 1, "column": 9, "message": "Expecting property name enclosed in double quotes"}),
    ("Makefile", "all:\n\tcc a.c\n", "all:\n    cc a.c\n",
     {"line": 2, "column": 1, "message": "missing separator: a recipe line must start with "
                                         "a tab, not spaces"}),
])
def test_messages_name_what_is_wrong(path: str, before: str, after: str,
                                     error: dict) -> None:
    checked = ({"problems_checked": True, "problems": {"skipped": "the file has syntax errors"}}
               if path.endswith(".py") else {"problems_checked": False})
    assert _reply(path, before, after) == {"errors": [error], "total": 1, "introduced": 1,
                                           **checked}


def test_markdown_parses_whatever_is_written_and_text_is_not_judged() -> None:
    assert _reply("README.md", "# a\n", "# a\n```\n") == {"errors": [], "total": 0,
                                                          "introduced": 0,
                                                          "problems_checked": False}
    assert Judge("notes.txt", "x").diagnosis("x", "y") is None


def test_past_the_bounds_it_says_it_skipped_and_why() -> None:
    assert _reply("a.py", "x = 1\n", "x = 2\n" * 10, syntax_max_bytes=10) == {
        "skipped": "file over 10 bytes", "problems_checked": True,
        "problems": {"skipped": "file over 10 bytes"}}
    rng = random.Random(3)
    junk = "".join(chr(rng.randrange(1, 256)) for _ in range(256 * 1024))
    assert _reply("j.rs", junk, junk + "fn x(", syntax_timeout=0.05) == {
        "skipped": "parsing took over 0.05 s", "problems_checked": False}


def test_a_long_list_keeps_the_new_errors() -> None:
    old = "".join(f"def f{i}(:\n    pass\n" for i in range(30))
    got = _reply("m.py", old, old + "def g(:\n    pass\n")
    assert got["total"] == 31 and got["introduced"] == 1 and len(got["errors"]) == 20
    assert got["errors"][-1]["line"] == 61


def test_the_note_names_the_errors() -> None:
    one = {"errors": [{"line": 12, "column": 1, "message": "expected ':'"}], "total": 1,
           "introduced": 1}
    assert note(one) == "Note: this edit left 1 syntax error: line 12: expected ':'"
    more = {"errors": [{"line": n, "column": 1, "message": "x"} for n in (1, 2, 3, 4)],
            "total": 4, "introduced": 2}
    assert note(more, "a.py") == ("Note: this edit left 2 new syntax errors (4 in the file) "
                                  "in a.py: line 1: x; line 2: x; line 3: x; ...")
    assert note({"errors": [], "total": 0, "introduced": 0}) is None
    assert note({"skipped": "file over 10 bytes"}) is None


def test_on_the_edit_corpora_introduced_is_exactly_a_result_that_does_not_parse() -> None:
    """tests/patch_kinds.py's rows and seeded one-line mutations of every sample, through
    file.patch with the gate off, judged by each language's own parser (GNU make's for
    Makefiles): no edit whose result parses reports an error, every one that breaks does."""
    from benchmarks.diagnostics import confusion
    matrix = confusion(mutations=12)
    assert matrix[True, False] == 0 and matrix[False, True] == 0, matrix
    assert matrix[True, True] >= 20 and matrix[False, False] >= 50, matrix


def test_a_recipe_line_that_lost_its_tab_is_an_error() -> None:
    before = "all: app\n\tcc -o app main.c\n"
    assert _reply("Makefile", before, "all: app\ncc -o app main.c\n")["errors"] == [
        {"line": 2, "column": 1, "message": "missing separator: a recipe line must start "
                                            "with a tab"}]
    fine = "all: app\n\tcc -o app main.c\n$(info built)\nVAR = 1\n"
    assert _reply("Makefile", before, fine)["total"] == 0


DEPTH = 100_000


@pytest.mark.parametrize("path, shallow, deep", [
    ("a.toml", "a = 1\n", "deep = " + "[" * DEPTH + "]" * DEPTH + "\n"),
    ("a.json", "[]\n", "[" * DEPTH + "]" * DEPTH + "\n"),
    ("a.yaml", "a: 1\n", "deep: " + "[" * DEPTH + "]" * DEPTH + "\n"),
    ("a.py", "a = 1\n", "deep = " + "-" * DEPTH + "1\n"),
])
def test_a_text_nested_deeper_than_its_parser_goes_is_not_judged(path: str, shallow: str,
                                                                 deep: str) -> None:
    """(issue 36, with w5-utf8's guard change) RecursionError, MemoryError or libyaml's
    quadratic time: the diagnostics say so, and the guard lets the edit through."""
    reason = "nested deeper than its parser goes"
    checked = ({"problems_checked": True, "problems": {"skipped": reason}}
               if path.endswith(".py") else {"problems_checked": False})
    assert _reply(path, shallow, deep) == {"skipped": reason, **checked}
    assert Judge(path, deep).guard(shallow, deep + "!@#[\n", "the change") is None
