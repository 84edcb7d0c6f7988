"""The indentation tier writes the replacement in the file's unit (issue 15).

Each row patches a real file through file.patch with a `find` indented another way than
the file, and checks the exact bytes written; when the file is Python, the result must
still compile (the bug was tab-indented lines landing in a space-indented function).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.patch.patch import patch
from fuzzing import examples

CASES = {
    "tabs to 4 spaces": (
        "a.py",
        "def start():\n    reset()\n    ht()\n\n\ndef stop():\n    pass\n",
        "def start():\n\treset()\n\tht()\n",
        "def start():\n\treset_v2()\n\tif ready():\n\t\tht()\n",
        "def start():\n    reset_v2()\n    if ready():\n        ht()\n\n\n"
        "def stop():\n    pass\n"),
    "2 spaces to 4 spaces": (
        "a.py",
        "class A:\n    def f(self):\n        x = 1\n        return x\n",
        "def f(self):\n  x = 1\n  return x\n",
        "def f(self):\n  x = 1\n  for i in range(3):\n    x += i\n  return x\n",
        "class A:\n    def f(self):\n        x = 1\n        for i in range(3):\n"
        "            x += i\n        return x\n"),
    "4 spaces to tabs": (
        "a.py",
        "def f(a):\n\tif a:\n\t\treturn 1\n\treturn 2\n",
        "    if a:\n        return 1\n",
        "    if a:\n        if a > 1:\n            return 1\n        return 0\n",
        "def f(a):\n\tif a:\n\t\tif a > 1:\n\t\t\treturn 1\n\t\treturn 0\n\treturn 2\n"),
    "nested blocks, a line shallower than find's first": (
        "a.py",
        "class C:\n    def run(self):\n        for x in self.items:\n            if x:\n"
        "                self.use(x)\n        self.done()\n",
        "\t\tif x:\n\t\t\tself.use(x)\n\tself.done()\n",
        "\t\tif x:\n\t\t\tself.use(x)\n\t\telse:\n\t\t\tself.skip(x)\n\tself.done()\n",
        "class C:\n    def run(self):\n        for x in self.items:\n            if x:\n"
        "                self.use(x)\n            else:\n                self.skip(x)\n"
        "        self.done()\n"),
    "blank lines stay empty": (
        "a.py",
        "def f():\n    a = 1\n    b = 2\n",
        "\ta = 1\n\tb = 2\n",
        "\ta = 1\n\t\n\tb = 2\n\n\tc = 3\n",
        "def f():\n    a = 1\n\n    b = 2\n\n    c = 3\n"),
    "aligned continuation, tabs to spaces": (
        "a.py",
        "def f():\n    total = compute(1,\n                    2)\n    return total\n",
        "\ttotal = compute(1,\n\t                2)\n",
        "\ttotal = compute(1,\n\t                2,\n\t                3)\n",
        "def f():\n    total = compute(1,\n                    2,\n                    3)\n"
        "    return total\n"),
    "aligned continuation, 2 spaces to 4": (
        "a.py",
        "if x:\n    y = call(a,\n             b)\n",
        "  y = call(a,\n           b)\n",
        "  y = call(a,\n           b,\n           c)\n  z = y\n",
        "if x:\n    y = call(a,\n             b,\n             c)\n    z = y\n"),
    "hanging continuation, tabs to spaces": (
        "a.py",
        "def f():\n    result = g(\n        1,\n    )\n    return result\n",
        "\tresult = g(\n\t\t1,\n\t)\n",
        "\tresult = g(\n\t\t1,\n\t\t2,\n\t)\n",
        "def f():\n    result = g(\n        1,\n        2,\n    )\n    return result\n"),
    "backslash continuation, spaces to tabs": (
        "a.py",
        "def f():\n\tx = 1 + \\\n\t    2\n\treturn x\n",
        "    x = 1 + \\\n        2\n",
        "    x = 1 + \\\n        2 + \\\n        3\n",
        "def f():\n\tx = 1 + \\\n\t    2 + \\\n\t    3\n\treturn x\n"),
    "the region's step comes from the file when the region has one depth": (
        "a.py",
        "def f(x):\n  return 1\n",
        "\treturn 1\n",
        "\tif x:\n\t\treturn 1\n\treturn 0\n",
        "def f(x):\n  if x:\n    return 1\n  return 0\n"),
    "a file mixing units keeps the unit of the region matched (spaces)": (
        "a.py",
        "def tabbed():\n\treturn 1\n\n\ndef spaced():\n    return 2\n",
        "def spaced():\n\treturn 2\n",
        "def spaced():\n\tif True:\n\t\treturn 3\n",
        "def tabbed():\n\treturn 1\n\n\ndef spaced():\n    if True:\n        return 3\n"),
    "a file mixing units keeps the unit of the region matched (tabs)": (
        "a.py",
        "def tabbed():\n\treturn 1\n\n\ndef spaced():\n    return 2\n",
        "def tabbed():\n  return 1\n",
        "def tabbed():\n  if True:\n    return 3\n",
        "def tabbed():\n\tif True:\n\t\treturn 3\n\n\ndef spaced():\n    return 2\n"),
    "a whitespace-only line does not decide the region's unit": (
        "a.py",
        "def f():\n\t\n    a = 1\n",
        "\n\ta = 1\n",
        "\n\tif a:\n\t\ta = 1\n",
        "def f():\n\n    if a:\n        a = 1\n"),
    "javascript, tabs to 2 spaces": (
        "a.js",
        "function f(a) {\n  if (a) {\n    return 1;\n  }\n}\n",
        "\tif (a) {\n\t\treturn 1;\n\t}\n",
        "\tif (a) {\n\t\tlog(a);\n\t\treturn 1;\n\t}\n",
        "function f(a) {\n  if (a) {\n    log(a);\n    return 1;\n  }\n}\n"),
    "CRLF file, tabs to 4 spaces": (
        "a.py",
        "def f():\r\n    a()\r\n    b()\r\n",
        "\ta()\n\tb()\n",
        "\ta()\n\tif b():\n\t\tc()\n",
        "def f():\r\n    a()\r\n    if b():\r\n        c()\r\n"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_replacement_is_written_in_the_files_unit(ctx: ToolContext, root: Path,
                                                 name: str) -> None:
    path, before, find, replace, expected = CASES[name]
    f = root / path
    f.write_bytes(before.encode())
    res = patch(ctx, path, [{"find": find, "replace": replace}])
    assert res["matches"][0]["tier"] == "indentation"
    assert f.read_bytes() == expected.encode()
    if path.endswith(".py"):
        compile(f.read_bytes(), path, "exec")


def test_every_occurrence_of_replace_all_takes_its_own_regions_unit(ctx: ToolContext,
                                                                     root: Path) -> None:
    f = root / "a.py"
    f.write_text("def a():\n\tx = 1\n\n\ndef b():\n    x = 1\n")
    # the trailing blanks keep the exact tiers from matching: only the indentation tier does
    res = patch(ctx, "a.py", [{"find": "  x = 1  \n", "replace": "  if x:\n    x = 2\n",
                               "replace_all": True}])
    assert res["matches"][0]["tier"] == "indentation"
    # the tab region takes a change of unit (2 spaces to a tab); the space region a shift
    # of 2 columns, which replace goes through too (docs/protocol.md, file.patch: a shift
    # first)
    assert f.read_text() == ("def a():\n\tif x:\n\t\tx = 2\n\n\n"
                             "def b():\n    if x:\n      x = 2\n")
    compile(f.read_text(), "a.py", "exec")


# --- any nesting, any pair of units ----------------------------------------------------

UNITS = ["\t", "  ", "    "]


@st.composite
def blocks(draw: st.DrawFn) -> list[int]:
    """The levels of a block of statements, relative to its first: each line at most one
    deeper than the one before (which then opens a block), never above the first."""
    levels = [0]
    for _ in range(draw(st.integers(0, 7))):
        levels.append(draw(st.integers(0, levels[-1] + 1)))
    return levels


def render(levels: list[int], unit: str, base: int, tag: str) -> str:
    """Python statements at `levels` (plus `base`), a line opening a block where the next
    one is deeper; `tag` names the statements, so find and replace differ."""
    out = []
    for i, level in enumerate(levels):
        deeper = i + 1 < len(levels) and levels[i + 1] > level
        body = f"if {tag}_{i}:" if deeper else f"{tag}_{i} = {i}"
        out.append(unit * (base + level) + body + "\n")
    return "".join(out)


def enclosing(unit: str, base: int) -> str:
    """`base` levels of enclosing blocks, in `unit`."""
    return "".join(unit * k + (f"def outer_{k}():\n" if k == 0 else f"if c_{k}:\n")
                   for k in range(base))


@settings(max_examples=examples(100), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(levels=blocks(), new_levels=blocks(), file_unit=st.sampled_from(UNITS),
       agent_unit=st.sampled_from(UNITS), file_base=st.integers(1, 3),
       agent_base=st.integers(0, 2))
def test_any_block_lands_in_the_files_unit(ctx: ToolContext, root: Path, levels: list[int],
                                           new_levels: list[int], file_unit: str,
                                           agent_unit: str, file_base: int,
                                           agent_base: int) -> None:
    head = enclosing(file_unit, file_base)
    tail = file_unit * (file_base - 1) + "done = True\n"  # a line after, one level up
    region = render(levels, file_unit, file_base, "old")
    find = render(levels, agent_unit, agent_base, "old")
    # a find found as it is belongs to the exact tier, which writes replace as given
    assume(find not in region)
    # a find of one depth in another unit fits a shift first (docs/protocol.md,
    # file.patch), which writes replace in the agent's columns:
    # tests/tools/test_patch_kinds.py holds those
    assume(max(levels) > 0 or agent_unit == file_unit)
    f = root / "prop.py"
    f.write_text(head + region + tail)
    res = patch(ctx, "prop.py", [{"find": find, "replace": render(new_levels, agent_unit,
                                                                  agent_base, "new")}])
    assert res["matches"][0]["tier"] == "indentation"
    after = f.read_text()
    assert after == head + render(new_levels, file_unit, file_base, "new") + tail
    compile(after, "prop.py", "exec")
