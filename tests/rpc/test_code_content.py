"""What a model reads from the code tools (rpc/mcp/code_content.py): lines, not JSON, and
a note when an answer is cut, empty or met syntax errors."""

from __future__ import annotations

from chorus_tools.rpc.mcp.content import content

OUTLINE = {"path": "a.py", "language": "python", "total": 3, "truncated": False,
           "syntax_errors": 0, "symbols": [
               {"name": "A", "kind": "class", "name_path": "A", "line": 1, "end_line": 9,
                "signature": "class A:", "children": [
                    {"name": "f", "kind": "method", "name_path": "A/f", "line": 2,
                     "end_line": 2, "signature": "def f(self): pass"}]},
               {"name": "X", "kind": "constant", "name_path": "X", "line": 11, "end_line": 11,
                "signature": "X = 1"}]}


def texts(shown_as: str, result: dict) -> list[str]:
    return [block["text"] for block in content(shown_as, result)]


def test_an_outline_is_indented_lines_of_ranges_and_signatures() -> None:
    """A constant by its name: its value is in the JSON (an outline must cost less than
    a tenth of the file: docs/benchmarks.md)."""
    assert texts("outline", OUTLINE) == ["1-9 class A:\n 2 def f(self): pass\n11 X"]
    cut = {**OUTLINE, "truncated": True, "syntax_errors": 2}
    assert texts("outline", cut)[1] == ("3 symbols in all; raise max_results to see more. "
                                        "2 syntax errors: outlined as far as it parses.")
    assert texts("outline", {**OUTLINE, "symbols": [], "total": 0}) == ["", "No symbols in a.py."]


def test_symbols_and_references_are_search_like_lines() -> None:
    found = {"symbols": [{"path": "a.py", "name": "f", "kind": "method", "name_path": "A/f",
                          "line": 2, "end_line": 4, "signature": "def f(self):"}],
             "total": 3, "truncated": True, "files_parsed": 1, "files_skipped": 0}
    assert texts("symbols", found) == [
        "a.py:2-4: method A/f: def f(self):",
        "[3 in all: narrow path or glob, or raise max_results.]"]
    refs = {"references": [{"path": "b.py", "line": 7, "column": 5, "text": "    f()",
                            "kind": "call", "in": "main"},
                           {"path": "b.py", "line": 1, "column": 1, "text": "import f",
                            "kind": "import", "in": ""}],
            "total": 2, "truncated": False, "files_searched": 1, "files_skipped": 0}
    assert texts("references", refs) == ["b.py:7:5: call in main: f()\nb.py:1:1: import: import f"]
    assert texts("references", {**refs, "references": [], "total": 0}) == ["", "No references."]


def test_a_map_is_its_text() -> None:
    result = {"map": "a.py:\n  def f():", "files": 1, "symbols": 1, "truncated": True}
    assert texts("map", result) == [
        "a.py:\n  def f():",
        "[More definitions exist: raise max_bytes, or narrow path, glob or focus.]"]
