"""Regression: an edit that fixed a file's syntax error reported no problems at all
(`problems: {skipped: "the checker failed: SyntaxError"}`, or oxlint's "could not judge
the text"), because the checker was also run on the text before, which does not parse.
So a model that fixed the syntax and left an undefined name got no note, and
`--problems-gate introduced` let it through. The text before had no problem that could
be found: every problem of the text after is new (docs/protocol.md, Diagnostics)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rpc_client import RpcServer, error_code

CASES = {  # path, a text that does not parse, the fix that reads an undefined name
    "python": ("m.py", "def f(:\n    pass\n", "def f():\n    return undefined_name\n",
               "F821", 2),
    "python, an indentation error": ("i.py", "\tx = 1\n", "print(undefined_name)\n",
                                     "F821", 1),
    "javascript": ("m.js", "foo(1, 2;\n", "console.log(undefinedName);\n", "no-undef", 1),
    "typescript": ("m.ts", "let x: = 1;\n", "let x: number = undefinedName;\n",
                   "no-undef", 1),
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_fix_of_a_syntax_error_reports_its_problems(tmp_path: Path, name: str) -> None:
    path, broken, fixed, code, line = CASES[name]
    (tmp_path / path).write_text(broken)
    with RpcServer(tmp_path, "--history", "0") as server:
        got = server.result("file.write", {"path": path, "content": fixed})["diagnostics"]
    assert got["total"] == 0 and got["problems_checked"] is True, got
    assert [(p["line"], p["code"], p["introduced"]) for p in got["problems"]] == [
        (line, code, True)], got
    assert got["problems_introduced"] == 1


def test_the_problems_gate_refuses_such_a_fix(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def f(:\n    pass\n")
    with RpcServer(tmp_path, "--history", "0", "--problems-gate", "introduced") as server:
        refused = server.call("file.write", {"path": "m.py",
                                             "content": "def f():\n    return nme\n"})
        assert error_code(refused) == "edit_breaks_syntax", refused
        assert refused["error"]["data"]["reason"] == "problems"
        assert (tmp_path / "m.py").read_text() == "def f(:\n    pass\n"
        server.result("file.write", {"path": "m.py", "content": "def f():\n    return 1\n"})
    assert (tmp_path / "m.py").read_text() == "def f():\n    return 1\n"
