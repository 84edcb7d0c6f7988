"""What the cheaper paths of problems (issue 44) must not change: broken_imports reads an
importer's `from` statements alone, and falls back to parsing it whole wherever that
reading could miss or invent one; the top-level names it compares come from the check's
own parse, kept by the text's hash."""

from __future__ import annotations

from pathlib import Path

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.patch.patch import patch
from chorus_tools.tools.patch.problems import top_level

IMPORTERS = {
    "parens.py": ("from pkg.mod import (\n    other,  # (a comment)\n    load,\n)\n", 1),
    "backslash.py": ("import os\nfrom pkg.mod \\\n    import load\n", 2),
    "inline.py": ("x = 1; from pkg.mod import load\n", 1),
    "nested.py": ("if True:\n    from pkg.mod import load as loaded\n", 2),
    "relative.py": ("from .mod import load\n", 1),  # pkg/relative.py
    "after_docstring.py": ('"""Uses load:\n\nfrom x import y\n"""\nfrom pkg.mod import load\n',
                           5),
    "unparsable.py": ("from pkg.mod import load\ndef (:\n", 1),  # it imports it all the same
}
NOT_IMPORTERS = {
    "docstring.py": '"""An example:\n\nfrom pkg.mod import load\n"""\n',
    "mixed_quotes.py": "'''An example: \"\"\"\nfrom pkg.mod import load\n'''\n",
    "comment.py": "# from pkg.mod import load\nload = 1\n",
    "elsewhere.py": "from other.mod import load\n",
}


def test_every_form_of_import_is_found_and_nothing_else(ctx: ToolContext, root: Path) -> None:
    (root / "pkg").mkdir()
    (root / "pkg/__init__.py").write_text("")
    (root / "pkg/mod.py").write_text("def load():\n    pass\n\ndef other():\n    pass\n")
    for name, (text, _) in IMPORTERS.items():
        (root / ("pkg" if name == "relative.py" else ".") / name).write_text(text)
    for name, text in NOT_IMPORTERS.items():
        (root / name).write_text(text)
    done = patch(ctx, "pkg/mod.py", [{"find": "def load():", "replace": "def load_all():"}])
    found = {(f["path"], f["line"]) for f in done["diagnostics"]["broken_imports"]}
    expected = {("pkg/relative.py" if name == "relative.py" else name, line)
                for name, (_, line) in IMPORTERS.items()}
    assert found == expected
    assert done["diagnostics"]["broken_imports_total"] == len(found)


def test_top_level_names_come_from_the_kept_check_or_a_parse(ctx: ToolContext,
                                                            root: Path) -> None:
    (root / "m.py").write_text("def f():\n    pass\n")
    patch(ctx, "m.py", [{"find": "def f():", "replace": "def g():\n    pass\ndef f():"}])
    assert top_level("m.py", (root / "m.py").read_text()) == {"f", "g"}  # kept
    assert top_level("m.py", "from x import *\n") is None  # parsed: may define any
    assert top_level("m.py", "X = 1\nclass C:\n    y = 2\n") == {"X", "C"}


def test_i001_still_finds_relative_imports_written_oddly(ctx: ToolContext, root: Path) -> None:
    """The walk for relative imports is skipped only where none can be."""
    (root / "pkg").mkdir()
    (root / "pkg/__init__.py").write_text("")
    text = ("def f():\n    from .gone import a\n\nfrom\\\n    .lost import b\n"
            "from.nowhere import c\n")
    done = patch(ctx, "pkg/new.py", [{"find": "", "replace": text}])
    assert [(p["line"], p["code"]) for p in done["diagnostics"]["problems"]] == [
        (2, "I001"), (4, "I001"), (6, "I001")]
