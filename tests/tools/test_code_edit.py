"""code.edit (docs/protocol.md, "Code by structure"): each action's exact resulting bytes in
Python, TypeScript, Go and Rust (methods in classes, impls and on structs, decorated and
documented symbols, the last symbol of a file, nested functions), text re-indented onto
the symbol by one mapping, blank lines from the neighbours, and every error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chorus_tools.tools.code.edit import edit
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError

PY = '''import os


class Parser:
    """Doc."""

    def __init__(self):
        self.x = 1

    @property
    def name(self):
        return "p"

    # a comment
    def parse(self, text):
        def inner():
            return 1
        return text


def main():
    pass
'''

TS = '''import { x } from "y";

/** A shape. */
export class Shape {
  private size = 1;

  /** Its area. */
  area(): number {
    return this.size * 2;
  }

  @logged
  grow(by: number): void {
    this.size += by;
  }
}

export function last(): number {
  return 1;
}
'''

GO = '''package main

// Point is a point.
type Point struct {
\tX int
}

// Len measures.
func (p Point) Len() int {
\treturn p.X
}

func main() {
\tprintln(1)
}
'''

RS = '''/// A point.
struct Point {
    x: i32,
}

impl Point {
    /// Its length.
    #[inline]
    fn len(&self) -> i32 {
        self.x
    }

    fn twice(&self) -> i32 {
        self.x * 2
    }
}

fn main() {
    fn nested() -> i32 {
        1
    }
    let _ = nested();
}
'''

# (file, its text, the call, the text after); every `text` is indented its own way
CASES: dict[str, tuple[str, str, dict[str, Any], str]] = {
    "python: a decorated method replaced, flush-left text with tabs": (
        "a.py", PY, {"symbol": "Parser/name", "action": "replace",
                     "text": "@property\ndef name(self):\n\treturn 'q'\n"},
        PY.replace('        return "p"\n', "        return 'q'\n")),
    "python: a documented method (its comment with it) replaced": (
        "a.py", PY, {"symbol": "Parser/parse", "action": "replace",
                     "text": "def parse(self, text):\n    return text.strip()\n"},
        PY.replace("    # a comment\n    def parse(self, text):\n        def inner():\n"
                   "            return 1\n        return text\n",
                   "    def parse(self, text):\n        return text.strip()\n")),
    "python: a nested function replaced at its depth": (
        "a.py", PY, {"symbol": "Parser/parse/inner", "action": "replace",
                     "text": "def inner():\n    return 2\n"},
        PY.replace("            return 1\n", "            return 2\n")),
    "python: a method after, one blank line as its neighbours": (
        "a.py", PY, {"symbol": "Parser/parse", "action": "insert_after",
                     "text": "    def extra(self):\n        return 2\n"},
        PY.replace("        return text\n", "        return text\n\n    def extra(self):\n"
                   "        return 2\n")),
    "python: a function before the last one, two blank lines": (
        "a.py", PY, {"symbol": "main", "action": "insert_before",
                     "text": "def helper():\n  return 3"},
        PY.replace("def main():", "def helper():\n    return 3\n\n\ndef main():")),
    "python: the last symbol of the file deleted with the blank lines before it": (
        "a.py", PY, {"symbol": "main", "action": "delete"},
        PY.replace("\n\ndef main():\n    pass\n", "")),
    "python: a decorated method deleted with the blank line after it": (
        "a.py", PY, {"symbol": "Parser/name", "action": "delete"},
        PY.replace('    @property\n    def name(self):\n        return "p"\n\n', "")),
    "typescript: a documented method replaced, 4-space text into a 2-space class": (
        "a.ts", TS, {"symbol": "Shape/area", "action": "replace",
                     "text": "/** Twice. */\narea(): number {\n    return this.size * 4;\n}\n"},
        TS.replace("  /** Its area. */\n", "  /** Twice. */\n").replace("* 2;", "* 4;")),
    "typescript: a decorated method deleted": (
        "a.ts", TS, {"symbol": "Shape/grow", "action": "delete"},
        TS.replace("\n  @logged\n  grow(by: number): void {\n    this.size += by;\n  }\n", "")),
    "typescript: a getter before a documented method": (
        "a.ts", TS, {"symbol": "Shape/area", "action": "insert_before",
                     "text": "  get half(): number {\n    return this.size / 2;\n  }\n"},
        TS.replace("  /** Its area. */\n", "  get half(): number {\n    return this.size / 2;"
                   "\n  }\n\n  /** Its area. */\n")),
    "typescript: after the last symbol, a missing final break supplied": (
        "a.ts", TS, {"symbol": "last", "action": "insert_after",
                     "text": "export function after(): number {\n  return 2;\n}"},
        TS + "\nexport function after(): number {\n  return 2;\n}\n"),
    "go: a method replaced, spaces written as the file's tabs": (
        "a.go", GO, {"symbol": "Point/Len", "action": "replace",
                     "text": "// Len doubles.\nfunc (p Point) Len() int {\n"
                             "    return p.X * 2\n}\n"},
        GO.replace("// Len measures.", "// Len doubles.").replace("p.X\n", "p.X * 2\n")),
    "go: a method after a method": (
        "a.go", GO, {"symbol": "Point/Len", "action": "insert_after",
                     "text": "func (p Point) Zero() bool {\n\treturn p.X == 0\n}\n"},
        GO.replace("\treturn p.X\n}\n", "\treturn p.X\n}\n\nfunc (p Point) Zero() bool {\n"
                   "\treturn p.X == 0\n}\n")),
    "go: the last function deleted": (
        "a.go", GO, {"symbol": "main", "action": "delete"},
        GO.replace("\nfunc main() {\n\tprintln(1)\n}\n", "")),
    "rust: an impl method with doc and attribute replaced, 2-space text": (
        "a.rs", RS, {"symbol": "Point/len", "action": "replace",
                     "text": "fn len(&self) -> i32 {\n  self.x.abs()\n}\n"},
        RS.replace("    /// Its length.\n    #[inline]\n", "").replace(
            "        self.x\n", "        self.x.abs()\n")),
    "rust: the last method of an impl deleted with the blank line before it": (
        "a.rs", RS, {"symbol": "Point/twice", "action": "delete"},
        RS.replace("\n    fn twice(&self) -> i32 {\n        self.x * 2\n    }\n", "")),
    "rust: a nested function replaced": (
        "a.rs", RS, {"symbol": "main/nested", "action": "replace",
                     "text": "fn nested() -> i32 {\n    2\n}\n"},
        RS.replace("        1\n", "        2\n")),
    "rust: one of two symbols named alike, chosen by line": (
        "a.rs", RS, {"symbol": "Point", "action": "delete", "line": 1},
        RS.replace("/// A point.\nstruct Point {\n    x: i32,\n}\n\n", "")),
}


@pytest.mark.parametrize("name", list(CASES))
def test_each_action_writes_exactly(ctx: ToolContext, root: Path, name: str) -> None:
    path, before, call, after = CASES[name]
    (root / path).write_text(before)
    done = edit(ctx, path, **call)
    assert (root / path).read_text() == after
    assert done["success"] and done["matches"][0]["tier"] == "exact"
    assert {k: done["diagnostics"][k] for k in ("errors", "total", "introduced")} == {
        "errors": [], "total": 0, "introduced": 0}
    assert done["diagnostics"].get("problems_introduced", 0) == 0
    assert done["diff"].startswith(f"--- a/{path}\n")


def test_crlf_and_dry_run_follow_file_patch(ctx: ToolContext, root: Path) -> None:
    f = root / "a.py"
    f.write_bytes(PY.replace("\n", "\r\n").encode())
    shown = edit(ctx, "a.py", "main", "replace", "def main():\n    return 0\n", dry_run=True)
    assert "+    return 0" in shown["diff"] and f.read_bytes() == PY.replace(
        "\n", "\r\n").encode()
    edit(ctx, "a.py", "main", "replace", "def main():\n    return 0\n",
         expected_version=shown["version"])
    assert f.read_bytes() == PY.replace("    pass\n", "    return 0\n").replace(
        "\n", "\r\n").encode()


def _fails(ctx: ToolContext, code: str, *args: Any, **kw: Any) -> ToolError:
    with pytest.raises(ToolError) as info:
        edit(ctx, *args, **kw)
    assert info.value.code == code, info.value.message
    return info.value


def test_errors_change_nothing(ctx: ToolContext, root: Path) -> None:
    (root / "a.py").write_text(PY)
    (root / "a.rs").write_text(RS)
    (root / "notes.txt").write_text("x\n")
    missing = _fails(ctx, "symbol_not_found", "a.py", "Parser/pars", "delete")
    assert missing.details["closest"][0] == "Parser/parse"
    assert "Parser/parse" in missing.message
    elsewhere = _fails(ctx, "symbol_not_found", "a.rs", "Point", "delete", line=3)
    assert elsewhere.details["closest"] == ["Point", "Point"]
    many = _fails(ctx, "symbol_not_unique", "a.rs", "Point", "delete")
    assert many.details["candidates"] == [{"name_path": "Point", "line": 1},
                                          {"name_path": "Point", "line": 6}]
    other = _fails(ctx, "unsupported_language", "notes.txt", "x", "delete")
    assert other.details["language"] == "txt"
    assert _fails(ctx, "invalid_params", "a.py", "main", "replace").details["param"] == "text"
    assert _fails(ctx, "invalid_params", "a.py", "main", "delete",
                  text="x").details["param"] == "text"
    assert _fails(ctx, "invalid_params", "a.py", "a//b", "delete").details["param"] == "symbol"
    assert _fails(ctx, "invalid_params", "a.py", "main", "replace",
                  text="def main():\n    pass\n").details["param"] == "text"
    misfit = _fails(ctx, "invalid_params", "a.py", "main", "replace",
                    text="    def main():\n  pass\n")
    assert "text line 2" in misfit.message
    broken = _fails(ctx, "edit_breaks_syntax", "a.py", "Parser/parse", "replace",
                    text="def parse(self, text):\nreturn 1\n")
    assert broken.details["line"] == 15 and "+    return 1" in broken.details["diff"]
    assert "code.edit's replace of Parser/parse" in broken.message
    _fails(ctx, "conflict", "a.py", "main", "delete", expected_version="0-0-0")
    _fails(ctx, "file_not_found", "gone.py", "main", "delete")
    assert (root / "a.py").read_text() == PY and (root / "a.rs").read_text() == RS


def test_the_guard_gives_way_with_the_gate_off(ctx: ToolContext, root: Path) -> None:
    (root / "a.py").write_text(PY)
    ctx.syntax_gate = "off"
    done = edit(ctx, "a.py", "main", "replace", "def main():\nreturn 1\n")
    assert done["diagnostics"]["introduced"] == 1
    assert (root / "a.py").read_text().endswith("def main():\nreturn 1\n")
