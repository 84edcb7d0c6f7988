"""Syntax errors of tree-sitter languages from a kept tree parsed incrementally (tools/code/
parse.py, tools/patch/syntax.py) against a parse from nothing: the repository's samples
of every tree-sitter language, made longer, edited at random (seeded) in chains, each
text parsed from the tree of the one before, by edits that open and close brackets,
strings, template literals and comments; the errors (line, column, message) must be the
fresh parse's, every time. An incremental parse of a text with errors may recover from
them otherwise than a fresh one (TypeScript did in 4 of 900 such edits), so such a text
is parsed again from nothing; a text without errors is answered from the incremental
tree, and it must have none fresh either."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from chorus_tools.tools.code import languages, parse
from chorus_tools.tools.code.bounds import Budget
from chorus_tools.tools.patch import syntax

SAMPLES = Path(__file__).parent.parent / "samples" / "code"
_PIECES = ("{", "}", "(", ")", "[", "]", ";", "\n", "\"", "'", "`", "${", "/*", "*/", "//",
           "x", " ", "<", ">", "#", "\\", "é", "fn ", "class ", "return ", "\n}\n")


def _fresh(language: str, text: str) -> list[syntax.Problem]:
    grammar = languages.LANGUAGES[language].grammar
    assert grammar is not None
    data = text.encode("utf-8", "surrogatepass")
    tree = languages.parser(grammar).parse(data)
    return syntax._tree_errors(tree.root_node, data, Budget(1 << 30, 60))


def _edit(text: str, rng: random.Random) -> str:
    at = rng.randrange(len(text) + 1)
    kind = rng.random()
    if kind < 0.5:
        return text[:at] + rng.choice(_PIECES) + text[at:]
    if kind < 0.8:
        return text[:at] + text[at + rng.randint(1, 8):]
    return text[:at] + rng.choice(_PIECES) + text[at + rng.randint(1, 8):]


def _samples() -> list[Path]:
    found = [p for p in sorted(SAMPLES.iterdir())
             if (syntax.language_of(p.name) or "") in ("javascript", "typescript", "tsx",
                                                        "go", "rust", "java", "c", "cpp")]
    assert len(found) >= 8  # every tree-sitter language of the samples
    return found


@pytest.mark.parametrize("sample", _samples(), ids=lambda p: p.name)
def test_errors_from_an_incremental_parse_are_the_fresh_ones(sample: Path) -> None:
    language = syntax.language_of(sample.name)
    assert language is not None
    original = sample.read_text() * 6  # long enough that edits land far from the start
    rng = random.Random(sample.name)
    text, broken = original, 0
    path = f"incremental/{sample.name}"
    syntax.problems(language, path, text, Budget(1 << 30, 60))
    for step in range(80):
        text = original if step % 30 == 29 else _edit(text, rng)  # back to a clean text
        found = syntax.problems(language, path, text, Budget(1 << 30, 60))
        assert found == _fresh(language, text), step
        broken += bool(found)
    assert 0 < broken < 80  # both kinds of text were judged


def test_the_points_of_an_edit_far_down_a_file_are_its_rows_and_columns() -> None:
    """The rows of an edit's ends are counted from the node the old tree has there: the
    errors' lines and columns are the fresh parse's."""
    text = "".join(f"function f{i}(x) {{\n  return x + {i};\n}}\n" for i in range(3000))
    parse.parse("javascript", "points.js", text.encode())
    for i in (0, 1500, 2999):
        broken = text.replace(f"return x + {i};", f"return x + ({i};")
        found = syntax.problems("javascript", "points.js", broken, Budget(1 << 30, 60))
        assert found and found == _fresh("javascript", broken)
        assert found[0].line == 3 * i + 2


def test_common_prefix_and_suffix_are_the_plain_ones() -> None:
    """The compares in place (bytes through a view) give what a character-by-character
    walk gives, on texts and bytes edited at random."""
    rng = random.Random(45)
    for _ in range(2000):
        a = "".join(rng.choice("ab\né") for _ in range(rng.randint(0, 700)))
        b = list(a)
        for _ in range(rng.randint(0, 3)):
            at = rng.randint(0, len(b))
            b[at:at + rng.randint(0, 3)] = rng.choice(["", "a", "xy", "b\n"])
        for x, y in ((a, "".join(b)), (a.encode(), "".join(b).encode())):
            size = min(len(x), len(y))
            head = next((i for i in range(size) if x[i] != y[i]), size)
            tail = next((i for i in range(size) if x[-1 - i] != y[-1 - i]), size)
            assert (parse.common_prefix(x, y), parse.common_suffix(x, y)) == (head, tail)
