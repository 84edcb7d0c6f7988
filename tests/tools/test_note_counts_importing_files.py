"""Bug: the note a model reads counted broken_imports' entries as files and listed each
entry as a place: a file importing two removed names on one line read as "2 files import
the removed names 'a', 'b': app.py:1, app.py:1". broken_imports has an entry per (file,
line, name); the note counts files and names each place once (docs/protocol.md,
Diagnostics: "3 files import the removed name 'load': app.py:1, ...")."""

from __future__ import annotations

from pathlib import Path

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.patch.note import note
from chorus_tools.tools.patch.problems import SHOWN
from chorus_tools.tools.mutate.write import write


def _broken(*entries: tuple[str, int, str], total: int | None = None) -> dict:
    shown = [{"path": p, "line": line, "name": n} for p, line, n in entries]
    return {"errors": [], "total": 0, "introduced": 0, "problems": [], "problems_total": 0,
            "problems_introduced": 0, "broken_imports": shown,
            "broken_imports_total": len(shown) if total is None else total}


def test_one_line_importing_two_removed_names_is_one_file_and_one_place() -> None:
    said = note(_broken(("app.py", 1, "a"), ("app.py", 1, "b"), ("lib.py", 3, "a")))
    assert said == ("Note: this edit broke imports: 2 files import the removed names "
                    "'a', 'b': app.py:1, lib.py:3")


def test_a_cut_list_says_at_least() -> None:
    entries = [(f"m{i:02}.py", 1, "a") for i in range(SHOWN)]
    said = note(_broken(*entries, total=SHOWN + 5))
    assert said is not None
    assert f"at least {SHOWN} files import the removed name 'a': m00.py:1, m01.py:1, " \
           "m02.py:1, ..." in said


def test_through_a_write(ctx: ToolContext, root: Path) -> None:
    (root / "m.py").write_text("def a():\n    pass\n\n\ndef b():\n    pass\n")
    (root / "app.py").write_text("from m import a, b\n")
    got = write(ctx, "m.py", "def c():\n    pass\n")
    assert got["diagnostics"]["broken_imports_total"] == 2
    assert note(got["diagnostics"]) == ("Note: this edit broke imports: 1 file imports the "
                                        "removed names 'a', 'b': app.py:1")
