"""The hint of find_not_found: the closest region, so the agent can fix its find."""

from __future__ import annotations

import importlib
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzing import examples
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.patch.patch import patch
from chorus_tools.tools.patch.hint import MIN_SIMILARITY, closest_region, escaped_newlines

SOURCE = '''import os


class Store:
    def __init__(self, root):
        self.root = root
        self.cache = {}

    def load(self, name):
        path = os.path.join(self.root, name)
        with open(path) as fh:
            return fh.read()

    def save(self, name, data):
        path = os.path.join(self.root, name)
        with open(path, "w") as fh:
            fh.write(data)
        self.cache[name] = data
'''


def contains(hint: dict, first: int, last: int) -> bool:
    return hint["start_line"] <= first and last <= hint["end_line"]


def test_one_wrong_identifier() -> None:
    find = ('    def save(self, name, payload):\n'
            '        path = os.path.join(self.root, name)\n'
            '        with open(path, "w") as fh:\n')
    hint = closest_region(SOURCE, find)
    assert (hint["start_line"], hint["end_line"]) == (14, 16)
    assert hint["text"] == ('    def save(self, name, data):\n'
                            '        path = os.path.join(self.root, name)\n'
                            '        with open(path, "w") as fh:')
    assert 0.9 < hint["similarity"] < 1


def test_lost_indentation_and_a_wrong_identifier() -> None:
    find = ('def load(self, filename):\n'
            'path = os.path.join(self.root, name)\n'
            'with open(path) as fh:\n'
            'return fh.read()')
    hint = closest_region(SOURCE, find)
    assert (hint["start_line"], hint["end_line"]) == (9, 12)
    assert hint["text"].startswith("    def load(self, name):\n")


def test_a_missing_line_still_lands_on_the_region() -> None:
    find = ('    def __init__(self, root):\n'
            '        self.cache = {}\n')
    hint = closest_region(SOURCE, find)
    assert contains(hint, 5, 5) and hint["start_line"] >= 5 and hint["end_line"] <= 7


def test_nothing_close_gives_none() -> None:
    assert closest_region(SOURCE, "SELECT * FROM users WHERE id = 42;") is None
    assert closest_region("", "anything") is None
    assert closest_region(SOURCE, "   \n\n") is None


def test_similarity_is_a_ratio_and_text_is_the_files() -> None:
    text = "alpha();\r\nbeta(1);\r\ngamma();\r\n"
    hint = closest_region(text, "beta(2);\ngamma();")
    assert (hint["start_line"], hint["end_line"]) == (2, 3)
    assert hint["text"] == "beta(1);\r\ngamma();"
    assert MIN_SIMILARITY <= hint["similarity"] <= 1


def test_ten_thousand_lines() -> None:
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "value", "result", "index", "count"]
    lines = [f"{'    ' * rng.randint(0, 3)}{rng.choice(words)}_{i} = "
             f"{rng.choice(words)}({rng.choice(words)}, {i % 97})" for i in range(10_000)]
    text = "\n".join(lines) + "\n"
    find = "\n".join(line.strip() for line in lines[7000:7004]).replace("_7001", "_7101")
    hint = closest_region(text, find)
    assert (hint["start_line"], hint["end_line"]) == (7001, 7004)


@settings(max_examples=examples(60), deadline=None)
@given(seed=st.integers(0, 10_000), size=st.integers(1, 6), dedent=st.booleans())
def test_one_changed_identifier_is_found(seed: int, size: int, dedent: bool) -> None:
    rng = random.Random(seed)
    lines = [f"{'    ' * rng.randint(0, 2)}call_{i}(arg_{rng.randint(0, 50)}, "
             f"'{rng.choice(['x', 'y', 'z'])}')" for i in range(300)]
    start = rng.randint(0, len(lines) - size)
    wanted = lines[start:start + size]
    if dedent:
        wanted = [line.strip() for line in wanted]
    row = rng.randrange(size)
    wanted[row] = wanted[row].replace("call_", "invoke_", 1)
    hint = closest_region("\n".join(lines) + "\n", "\n".join(wanted))
    assert contains(hint, start + 1 + row, start + 1 + row)
    assert abs(hint["start_line"] - (start + 1)) <= 1


def test_long_find_keeps_the_line_with_the_typo() -> None:
    lines = [f"    def method_{i}(self, value):  # comment about {i % 13}" for i in range(3000)]
    text = "\n".join(lines) + "\n"
    for k in (0, 25, 49):
        find = "\n".join(lines[1000:1050]).replace(f"method_{1000 + k}(", f"methd_{1000 + k}(")
        hint = closest_region(text, find)
        assert (hint["start_line"], hint["end_line"]) == (1001, 1050)
        assert 0.99 < hint["similarity"] < 1


# --- a find sent with literal backslash-n instead of line breaks (issue 15) ---------------

def _stdlib_region(module: str, first: str, size: int) -> tuple[str, int, list[str]]:
    """A module's source, and the 1-based line and text of `size` lines from `first`."""
    source = Path(importlib.import_module(module).__file__).read_text()
    lines = source.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(first))
    return source, start + 1, lines[start:start + size]


STDLIB = [("textwrap", "    indents = _leading_whitespace_re.findall(text)", 4),
          ("argparse", "    def add_argument_group(self, *args, **kwargs):", 4),
          ("shutil", "def copyfileobj(fsrc, fdst, length=0):", 6),
          ("json.decoder", "    def raw_decode(self, s, idx=0):", 3)]


@pytest.mark.parametrize(("module", "first", "size"), STDLIB)
def test_escaped_newlines_land_on_the_region(module: str, first: str, size: int) -> None:
    source, line, region = _stdlib_region(module, first, size)
    find = "\\n".join(region)  # what a double JSON-escaping client sends
    assert "\n" not in find
    hint = closest_region(source, find)
    assert (hint["start_line"], hint["end_line"]) == (line, line + size - 1)
    assert hint["text"] == "\n".join(region)


@pytest.mark.parametrize(("module", "first", "size"), STDLIB)
def test_escaped_newlines_and_a_typo_still_land_on_the_region(module: str, first: str,
                                                              size: int) -> None:
    source, line, region = _stdlib_region(module, first, size)
    typo = [region[0].replace("def ", "def  ").replace("=", "= ", 1)] + region[1:]
    escaped = "\\n".join(line.replace("    ", "\\t") for line in typo)  # tabs escaped too
    hint = closest_region(source, escaped)
    assert (hint["start_line"], hint["end_line"]) == (line, line + size - 1)
    assert hint["similarity"] < 1


def test_a_literal_backslash_n_that_belongs_to_the_code_keeps_its_line() -> None:
    text = 'def show(x):\n    print("value\\n")\n    print("other\\t")\n    return x\n'
    hint = closest_region(text, 'print("valeu\\n")')
    assert (hint["start_line"], hint["end_line"]) == (2, 2)
    assert not escaped_newlines('print("a")\nprint("b\\n")')
    assert escaped_newlines('a()\\nb()') and not escaped_newlines("a()\nb()")


def test_patch_says_so_and_leaves_the_file(ctx: ToolContext, root: Path) -> None:
    source, line, region = _stdlib_region("textwrap", "    for indent in indents:", 3)
    (root / "textwrap.py").write_text(source)
    find = "\\n".join(region)
    with pytest.raises(ToolError) as info:
        patch(ctx, "textwrap.py", [{"find": find, "replace": "pass"}])
    err = info.value
    assert err.code == "find_not_found"
    assert ("patches[0].find contains the two characters \\n; did you mean a line break?"
            in err.message)
    assert (err.details["hint"]["start_line"], err.details["hint"]["end_line"]) == (
        line, line + 2)
    assert (root / "textwrap.py").read_text() == source


def test_patch_does_not_ask_about_a_find_with_real_line_breaks(ctx: ToolContext,
                                                               root: Path) -> None:
    (root / "a.py").write_text('print("a\\n")\nprint("b")\n')
    with pytest.raises(ToolError) as info:
        patch(ctx, "a.py", [{"find": 'print("a\\n")\nprint("c")', "replace": "pass"}])
    assert "did you mean a line break" not in info.value.message
