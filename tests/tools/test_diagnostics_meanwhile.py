"""Diagnostics judged while the write syncs (tools/patch/diagnostics.py, Judge.meanwhile):
a long text no gate and no checker waits on is judged in the diagnosis thread, and the
reply's diagnostics are exactly those judged in the call's thread; a gate that refuses by
them, a checker, a dry run or a short text keep the judgement in the call's thread, and
the refusal still leaves the file as it was."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.patch.diagnostics import MEANWHILE_CHARS, Judge
from chorus_tools.tools.patch.patch import patch

CLASS = "export class C{i} {{\n  run(x: number): number {{\n    return x + {i};\n  }}\n}}\n\n"


def _long_ts() -> str:
    text, i = "", 0
    while len(text) < MEANWHILE_CHARS + 1000:
        text += CLASS.format(i=i)
        i += 1
    return text


@pytest.fixture
def threads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads each judgement of a change ran in."""
    seen: list[str] = []
    judge = Judge.diagnosis

    def recorded(self: Judge, before: str | None, after: str) -> Any:
        seen.append(threading.current_thread().name)
        return judge(self, before, after)
    monkeypatch.setattr(Judge, "diagnosis", recorded)
    return seen


def _ctx(root: Path, **options: Any) -> ToolContext:
    return ToolContext(ws=Workspace(str(root)), **options)


@pytest.mark.parametrize("replace", ["return x + 11;", "return x + (11;"])
def test_a_long_text_is_judged_beside_its_write_as_in_the_call(
        tmp_path: Path, threads: list[str], replace: str) -> None:
    text = _long_ts()
    (tmp_path / "a.ts").write_text(text)
    ctx = _ctx(tmp_path)
    done = patch(ctx, "a.ts", [{"find": "return x + 10;", "replace": replace}])
    assert threads and threads[-1].startswith("diagnosis")
    after = text.replace("return x + 10;", replace)
    assert (tmp_path / "a.ts").read_text() == after
    here = Judge.of(ctx, "a.ts", text).diagnosis(text, after)
    assert here is not None
    assert done["diagnostics"] == here.reply()
    assert done["diagnostics"]["introduced"] == (1 if "(" in replace else 0)


def test_a_gate_keeps_the_judgement_in_the_call_and_refuses(
        tmp_path: Path, threads: list[str]) -> None:
    text = _long_ts()
    (tmp_path / "a.ts").write_text(text)
    with pytest.raises(ToolError) as refused:
        patch(_ctx(tmp_path, syntax_gate="all"), "a.ts",
              [{"find": "return x + 10;", "replace": "return x + (10;"}])
    assert refused.value.code == "edit_breaks_syntax"
    assert threads == ["MainThread"]
    assert (tmp_path / "a.ts").read_text() == text


def test_a_dry_run_a_short_text_and_a_checked_one_are_judged_in_the_call(
        tmp_path: Path, threads: list[str]) -> None:
    text = _long_ts()
    (tmp_path / "a.ts").write_text(text)
    (tmp_path / "b.ts").write_text(CLASS.format(i=1))
    (tmp_path / "c.py").write_text("".join(f"def f{i}():\n    return {i}\n\n\n"
                                           for i in range(2000)))
    ctx = _ctx(tmp_path)
    patch(ctx, "a.ts", [{"find": "return x + 10;", "replace": "return x + 11;"}], dry_run=True)
    patch(ctx, "b.ts", [{"find": "return x + 1;", "replace": "return x + 2;"}])
    done = patch(ctx, "c.py", [{"find": "return 7\n", "replace": "return seven\n"}])
    assert threads == ["MainThread"] * 3
    assert done["diagnostics"]["problems_introduced"] == 1  # pyflakes ran: F821
