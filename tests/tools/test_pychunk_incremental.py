"""pychunk's cuts and syntax errors of an edited text, cut from a kept text (tools/patch/
pychunk.py), against a scan of the whole text from nothing: on real standard-library
modules edited at random (seeded), in chains where each text is cut from the last one and
sometimes from an older one, by edits that move what a cut depends on (triple quotes
opened and closed, decorators, lines ending in an open bracket, comments and blank lines,
`else`/`finally` lines, `from __future__` imports, broken statements). The oracle's scan
is the rule itself, written the plain way (every line start, one at a time); the errors
are those of the same text judged with nothing kept, and the module compiles exactly
when there are none. The default run takes seconds; `-m long` runs many more modules."""

from __future__ import annotations

import random
import re
import sysconfig
import warnings
from pathlib import Path

import pytest

from chorus_tools.tools.code.bounds import Budget
from chorus_tools.tools.patch import pychunk

_PIECES = ('"""', "'''", '"""doc"""', "(", ")", "[", ",", "\\", ":", "@", "#", " ", "\n",
           "\n\n", "x", "else:", "finally:", "def", "pass\n", "@decorator\n", "# note\n",
           "from __future__ import annotations\n", "if x:\n    pass\nelse:\n    pass\n",
           "'''\nnot code (\n'''\n", 'r"""', "\t", "\r\n", "return 1\n", "class A(\n")


def _plain_starts(text: str) -> list[int]:
    """The cut rule of pychunk's docstring, line by line: a line at column 0 that is not
    blank, a comment, a closing bracket, `else`/`elif`/`except`/`finally`, outside a
    triple-quoted string, whose last code line neither is a decorator nor ends open."""
    cuts = [0]
    lines = text.split("\n")
    offset, quotes, last_code = 0, 0, ""
    for number, line in enumerate(lines):
        if number:
            candidate = re.match(r"(?!(?:else|elif|except|finally)\b)[^\s#)\]}]", line)
            if candidate and quotes % 2 == 0 and not last_code.startswith("@") \
                    and not last_code.rstrip().endswith(("(", "[", "{", ",", "\\")):
                cuts.append(offset)
        quotes += line.count('"""') + line.count("'''")
        if line.strip() and not line.lstrip().startswith("#"):
            last_code = line
        offset += len(line) + 1
    return cuts


def _fresh(text: str) -> tuple[list[int], list[pychunk.Found]]:
    """The cuts and errors of `text` with no text's cuts kept."""
    kept = dict(pychunk._cuts)
    pychunk._cuts.clear()
    try:
        return list(pychunk.starts(text)), pychunk.errors(text, Budget(1 << 30, 60))
    finally:
        pychunk._cuts.clear()
        pychunk._cuts.update(kept)


def _modules(count: int, most: int, seed: int) -> list[str]:
    root = Path(sysconfig.get_paths()["stdlib"])
    found = [p for p in sorted(root.glob("*.py")) if 2000 < p.stat().st_size <= most]
    return [p.read_text(encoding="utf-8", errors="replace")
            for p in random.Random(seed).sample(found, min(count, len(found)))]


def _edit(text: str, rng: random.Random) -> str:
    """One random edit: a piece inserted, a span deleted or replaced, a line moved."""
    at = rng.randrange(len(text) + 1)
    lines = text.split("\n")
    kind = rng.choice(["insert", "insert", "delete", "replace", "line", "indent"])
    if kind == "insert":
        return text[:at] + rng.choice(_PIECES) + text[at:]
    if kind == "delete":
        return text[:at] + text[at + rng.randint(1, 40):]
    if kind == "replace":
        return text[:at] + rng.choice(_PIECES) + text[at + rng.randint(1, 12):]
    i = rng.randrange(len(lines))
    if kind == "line":
        moved = lines.pop(i)
        lines.insert(rng.randrange(len(lines) + 1), moved)
    else:
        lines[i] = lines[i].lstrip() if lines[i].startswith(" ") else "    " + lines[i]
    return "\n".join(lines)


def _compiles(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<test>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def _chains(modules: list[str], edits: int, seed: int) -> int:
    """Edit each module `edits` times, one edit on another (and now and then from an older
    text); every text's cuts and errors must be the fresh ones. Returns the texts judged."""
    rng = random.Random(seed)
    judged = 0
    for text in modules:
        texts = [text]
        for _ in range(edits):
            text = _edit(rng.choice(texts[-3:]) if rng.random() < 0.2 else text, rng)
            texts.append(text)
            budget = Budget(1 << 30, 60)
            cuts, found = list(pychunk.starts(text)), pychunk.errors(text, budget)
            assert cuts == _plain_starts(text)
            assert (cuts, found) == _fresh(text)
            assert (found == []) == _compiles(text)
            if found:
                assert found[0] == pychunk.compile_error(text)
            judged += 1
    return judged


def test_cuts_and_errors_from_a_kept_text_are_the_fresh_ones() -> None:
    assert _chains(_modules(8, 12_000, seed=45), edits=40, seed=45) == 320


def test_a_one_line_edit_scans_only_near_it() -> None:
    """A statement changed in the middle of a long module: the cuts are the fresh ones, and
    only the statements around the change are compiled again."""
    body = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(400))
    before = body + "value = 0\n"
    pychunk._cuts.clear()
    assert pychunk.errors(before, Budget(1 << 30, 60)) == []
    after = before.replace("return x + 200\n", "return x - 200\n")
    compiled: list[str] = []
    judge = pychunk._statement
    pychunk._statement = lambda chunk: compiled.append(chunk) or judge(chunk)  # type: ignore
    try:
        assert pychunk.errors(after, Budget(1 << 30, 60)) == []
    finally:
        pychunk._statement = judge  # type: ignore[assignment]
    assert compiled and all("f200" in c or "f199" in c or "f201" in c for c in compiled)
    assert pychunk.starts(after) == _plain_starts(after)


def test_an_edit_that_opens_a_string_cuts_the_rest_again() -> None:
    """A triple quote inserted flips what every later line is: no kept cut after it
    stands, and the module's error is the compiler's."""
    text = "".join(f"def f{i}():\n    pass\n\n" for i in range(50))
    pychunk.starts(text)
    broken = text.replace("def f10():\n", 'def f10():\n    """\n')
    assert pychunk.starts(broken) == _plain_starts(broken) == [0, *[
        broken.index(f"def f{i}():") for i in range(1, 11)]]
    found = pychunk.errors(broken, Budget(1 << 30, 60))
    assert found and found[0] == pychunk.compile_error(broken)


@pytest.mark.parametrize("broken", range(8, 16))
def test_errors_kept_from_the_text_before_are_found_wherever_they_are(broken: int) -> None:
    """A statement that does not compile, before, at or after where the scan of an edit
    stops: its error is found as in a fresh judgement."""
    text = "".join(f"def f{i}():\n    return {i}\n\n" for i in range(30))
    text = text.replace(f"def f{broken}():", f"def f{broken}(:")
    pychunk._cuts.clear()
    first = pychunk.errors(text, Budget(1 << 30, 60))
    assert first and first[0][0] == 3 * broken + 1
    after = text.replace("return 10\n", "return 11\n")
    assert pychunk.errors(after, Budget(1 << 30, 60)) == _fresh(after)[1] == first


@pytest.mark.long
def test_cuts_and_errors_from_a_kept_text_many_modules() -> None:
    assert _chains(_modules(80, 60_000, seed=46), edits=60, seed=46) == 80 * 60
