"""The incremental problems check (tools/patch/pyincremental.py) against the whole one: on
real standard-library modules edited at random (seeded) inside function and method bodies,
on def lines, at module level, by renames, deletions, inserted `global`s, star imports and
`__all__` entries, every edit the incremental check answers must give exactly the whole
check's findings (line, column, code, message) and the same "introduced" ones, also when
a chain of edits builds each check on the last incremental one. The default run takes
seconds; `-m long` runs many more modules and edits."""

from __future__ import annotations

import ast
import keyword
import random
import re
import sysconfig
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from chorus_tools.tools.code.bounds import Budget
from chorus_tools.tools.patch import problems, pyincremental
from chorus_tools.tools.patch.problems import compare, introduced
from chorus_tools.tools.patch.pyfindings import Checked, Finding
from chorus_tools.tools.patch.pyincremental import update
from chorus_tools.tools.patch.pyproblems import Modules, findings

CHAIN = 6  # edits built one on another (a `global` or star import ends increments)
_WORD = re.compile(r"\b[A-Za-z_]\w*\b")
_TOP = ("import json", "value_{n} = missing_{n}", "del {name}", "from os.path import *",
        "__all__ = ['{name}', 'nowhere_{n}']", "{name}: int", "global {name}",
        "def {name}():\n    return undefined_{n}", "import {name}", "if {name} is 'x':\n    pass")
_BODY = ("print(unknown_{n})", "{name} = {other}", "del {name}", "import {name}",
         "global {name}", "nonlocal {name}", "if {name} is 1: pass", "{name}: int",
         "def {name}(): return {other}", "class {name}: pass", "return {other}",
         "from __future__ import annotations", "print({name}); {name} = 1",
         "x_{n}: '{other}' = 1", "lambda: {name}_{n}", "[{name} for {name} in {other}]")


def _modules(count: int, most: int, seed: int) -> list[tuple[str, str]]:
    """`count` standard-library modules under `most` bytes that parse, chosen by seed."""
    root = Path(sysconfig.get_paths()["stdlib"])
    found = []
    for path in sorted(root.glob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if 2000 < len(text) <= most:
            found.append((path.name, text))
    return random.Random(seed).sample(found, min(count, len(found)))


def _bodies(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Top-level functions and the methods of top-level classes."""
    found = []
    for node in tree.body:
        inner = node.body if isinstance(node, ast.ClassDef) else [node]
        found += [n for n in inner if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return found


def _edit(text: str, rng: random.Random, n: int) -> str:
    """One random edit of `text` (which parses)."""
    tree = ast.parse(text)
    lines = text.split("\n")
    names = sorted({w for w in _WORD.findall(text) if not keyword.iskeyword(w)})
    fill = {"n": n, "name": rng.choice(names), "other": rng.choice(names)}
    bodies = _bodies(tree)
    kind = rng.choice(["body word", "body insert", "body delete", "body word", "def line",
                       "top insert", "top delete", "rename", "duplicate"])
    if kind.startswith("body") and bodies:
        f = rng.choice(bodies)
        at = rng.randint(f.body[0].lineno, f.end_lineno or f.body[0].lineno) - 1
        line = lines[at]
        if kind == "body word":
            words = list(_WORD.finditer(line))
            if words:
                w = rng.choice(words)
                new = rng.choice([w.group() + "_x", fill["other"], "print", "self"])
                lines[at] = line[:w.start()] + new + line[w.end():]
        elif kind == "body insert":
            indent = line[:len(line) - len(line.lstrip())] or "    "
            lines.insert(at, indent + rng.choice(_BODY).format(**fill))
        else:
            del lines[at]
    elif kind == "def line" and bodies:
        f = rng.choice(bodies)
        at = f.lineno - 1
        lines[at] = rng.choice([lines[at].replace(f"def {f.name}(", f"def {f.name}_x(", 1),
                                lines[at].replace("(", f"(p_{n}=undefined_{n}, ", 1),
                                lines[at].replace("self", "this", 1)])
    elif kind in ("top insert", "top delete") and tree.body:
        node = rng.choice(tree.body)
        decorators = getattr(node, "decorator_list", None)
        at = (decorators[0] if decorators else node).lineno
        if kind == "top insert":
            lines.insert(at - 1, rng.choice(_TOP).format(**fill))
        else:
            del lines[at - 1:(node.end_lineno or at)]
    elif kind == "rename":
        old = rng.choice([n.name for n in tree.body if isinstance(
            n, (ast.FunctionDef, ast.ClassDef))] or [fill["name"]])
        at = rng.randrange(len(lines))
        lines[at] = re.sub(rf"\b{re.escape(old)}\b", f"{old}_renamed", lines[at])
    elif bodies:
        f = rng.choice(bodies)
        start = (f.decorator_list[0] if f.decorator_list else f).lineno - 1
        lines[start:start] = lines[start:f.end_lineno or start]
    return "\n".join(lines)


def _compiles(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<edited>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def _same(whole: Checked, step: Checked) -> None:
    assert sorted(map(_key, step.found)) == sorted(map(_key, whole.found))
    assert step.names == whole.names


def _key(f: Finding) -> tuple[int, int, str, str]:
    return f.line, f.column, f.code, f.message


def _walk(modules: list[tuple[str, str]], edits: int, seed: int) -> Iterator[bool]:
    """For each module, chains of random edits (`edits` in all, from the module as it is
    every CHAIN edits); yields, per edit that compiles, whether the incremental check
    answered it (having asserted it agrees)."""
    rng = random.Random(seed)
    budget = Budget(1 << 30, 600.0)
    for name, original in modules:
        for n in range(edits):
            if n % CHAIN == 0:
                text, prior = original, findings(name, original, budget, None)
            after = _edit(text, rng, n)
            if not _compiles(after):
                continue
            whole = findings(name, after, budget, None)
            step = update(name, text, prior, after, budget, None)
            if step is not None:
                _same(whole, step)
                assert [_key(f) for f in introduced(text, after, prior.found, step.found)] \
                    == [_key(f) for f in introduced(text, after, prior.found, whole.found)]
            yield step is not None
            # the chain goes on from the incremental check when there was one
            text, prior = after, step or whole


@pytest.mark.long  # random edits over the standard library: ~5 s
def test_incremental_agrees_with_the_whole_check_on_random_stdlib_edits() -> None:
    answered = list(_walk(_modules(12, 14_000, 44), 30, 44))
    assert len(answered) >= 250
    assert sum(answered) >= len(answered) // 4  # the edits inside bodies, and more


@pytest.mark.long
def test_incremental_agrees_on_many_more_modules_and_edits() -> None:
    answered = list(_walk(_modules(80, 60_000, 7), 40, 7))
    assert sum(answered) >= len(answered) // 4


def test_what_it_declines_is_checked_whole() -> None:
    """A `global` anywhere, a changed def line, a new top-level statement: no increment;
    a changed body: one, whose F811 names the moved line."""
    budget = Budget(1 << 30, 60.0)
    text = ("import os\n\n\ndef f():\n    return os.sep\n\n\n"
            "def dup():\n    pass\n\n\ndef dup():\n    pass\n")
    prior = findings("m.py", text, budget, None)
    longer = text.replace("    return os.sep\n", "    x = 1\n    return undefined_y\n")
    step = update("m.py", text, prior, longer, budget, None)
    assert step is not None
    assert [_key(f) for f in step.found] == [
        (6, 12, "F821", "undefined name 'undefined_y'"),
        (13, 1, "F811", "redefinition of unused 'dup' from line 9")]
    assert update("m.py", text, prior, text.replace("def f():", "def f(a):"), budget,
                  None) is None
    assert update("m.py", text, prior, text + "y = 1\n", budget, None) is None
    with_global = text.replace("    return os.sep", "    global g\n    return os.sep")
    assert findings("m.py", with_global, budget, None).statements is None
    shadowing = text.replace("    return os.sep", "    import os\n    return os.sep")
    assert update("m.py", text, prior, shadowing, budget, None) is None


CASES = {
    # F822: an `__all__` entry nothing defines, after the changed body, moved with it
    "__all__": ("__all__ = ['f', 'gone']\n\n\ndef f():\n    return 1\n",
                "    return 1\n", "    x = 2\n    return x\n", True),
    # a module-level read before its definition, and a class body run at once
    "read before": ("y = later()\n\n\nclass C:\n    z = nope\n\n    def m(self):\n"
                    "        return 1\n\n    def n(self):\n        return yes\n\n\n"
                    "def later():\n    return 1\n",
                    "        return 1\n", "        a = 1\n        return a + missing\n", True),
    # F823 against a module binding, and F821 gone when the body stops reading it
    "F823": ("value = 1\n\n\ndef f():\n    return value\n",
             "    return value\n", "    print(value)\n    value = 2\n", True),
    "fixed": ("def f():\n    return undefined\n", "undefined", "f", True),
    # a bare annotation binds nothing a body can read; the future import changes that
    # only in annotations
    "annotation": ("from __future__ import annotations\nname: int\n\n\ndef f():\n"
                   "    return 1\n", "    return 1\n", "    x: name = 1\n    return name\n",
                   True),
    # the module deletes a builtin: a body reading it is F821
    "del builtin": ("print = None\ndel print\n\n\ndef f():\n    return 1\n",
                    "return 1", "return print", True),
    # a class method gets longer: the methods after it move, their F811 with them
    "class F811": ("class C:\n    def a(self):\n        return 1\n\n    def b(self):\n"
                   "        pass\n\n    def b(self):\n        pass\n",
                   "        return 1\n", "        x = 1\n        return x\n", True),
    # names the module imports from typing keep what they are: `overload` lets a nested
    # def be defined twice, `Literal`'s strings are no names
    "typing": ("from typing import Literal, overload\n\n\ndef f():\n    return 1\n",
               "    return 1\n", "    @overload\n    def g(x: int) -> int: ...\n"
               "    @overload\n    def g(x: str) -> str: ...\n    def g(x): return x\n"
               "    y: Literal['foo'] = 'foo'\n    return g(y)\n", True),
    # a star import: nothing incremental
    "star": ("from os import *\n\n\ndef f():\n    return sep\n", "sep", "nope", False),
    # a `global` anywhere: nothing incremental
    "global": ("def g():\n    global late\n    late = 1\n\n\ndef f():\n    return 1\n",
               "return 1", "return late", False),
    # an import a nested scope rebinds, named in the change: checked whole (the body
    # stops using it, so the parameter's rebinding becomes F811)
    "rebound": ("import os\n\n\ndef g(os):\n    return os\n\n\ndef f():\n    return os\n",
                "def f():\n    return os\n", "def f():\n    return 1\n", False),
    # a body imports again what the module imports and no one uses: F811 then, checked
    # whole
    "import again": ("import os\n\n\ndef f():\n    return 1\n", "    return 1\n",
                     "    import os\n    return os\n", False),
    # a decorator changed: checked whole
    "decorator": ("def d(x):\n    return x\n\n\n@d\ndef f():\n    return 1\n",
                  "@d\n", "@e\n", False),
    # the last statement, without a final newline
    "last": ("def f():\n    return 1", "return 1", "return nope", True),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_case_agrees_with_the_whole_check(case: str) -> None:
    text, old, new, incremental = CASES[case]
    budget = Budget(1 << 30, 60.0)
    after = text.replace(old, new, 1)
    assert after != text and _compiles(after)
    prior = findings("m.py", text, budget, None)
    step = update("m.py", text, prior, after, budget, None)
    assert (step is not None) == incremental
    if step is not None:
        _same(findings("m.py", after, budget, None), step)


def test_i001_is_found_again_for_each_edit_never_kept() -> None:
    """A relative import to a module that is missing, then created, then removed again:
    the incremental check says so each time (the workspace is read again)."""
    files: dict[str, bytes] = {}
    modules = Modules(files.get, lambda rel: rel == "pkg")
    budget = Budget(1 << 30, 60.0)
    text = "from .helper import run\n\n\ndef f():\n    return run()\n"
    prior = findings("pkg/m.py", text, budget, modules)
    assert [f.code for f in prior.found] == ["I001"]
    files["pkg/helper.py"] = b"def run():\n    pass\n"
    after = text.replace("return run()", "return run() + 1")
    step = update("pkg/m.py", text, prior, after, budget, modules)
    assert step is not None and step.found == []
    del files["pkg/helper.py"]
    again = after.replace("+ 1", "+ 2")
    last = update("pkg/m.py", after, step, again, budget, modules)
    assert last is not None
    assert [(f.code, f.line) for f in last.found] == [("I001", 1)]


def test_an_increment_that_fails_leaves_it_to_the_whole_check(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a checker bug")

    budget = Budget(1 << 30, 60.0)
    text = "def f():\n    return 1\n"
    after = text.replace("return 1", "return nope")
    assert compare("inc.py", None, text, budget, None).found == []  # kept for the next
    monkeypatch.setattr(pyincremental, "run", broken)
    assert update("inc.py", text, findings("inc.py", text, budget, None), after, budget,
                  None) is None
    found = compare("inc.py", text, after, budget, None)
    assert found.skipped is None
    assert [(f.code, f.message) for f in found.introduced] == [
        ("F821", "undefined name 'nope'")]


def test_a_cut_inside_a_statement_keeps_nothing_for_an_increment() -> None:
    """pychunk cuts after a line ending in `+`; the line after starts a statement too, but
    not at column 0: the cut is inside the first statement, so no increment is offered."""
    budget = Budget(1 << 30, 60.0)
    text = "x = (1 +\n2); y = 3\n\n\ndef f():\n    pass\n"
    assert findings("m.py", text, budget, None).statements is None
    assert findings("m.py", "@d\ndef f():\n    pass\n", budget, None).statements is not None


def test_only_the_latest_checks_keep_what_an_increment_needs() -> None:
    """A module's bindings are ~1 MB at 200 KiB: of the 256 checks kept, only the latest
    few keep them; an older text still gives its problems, checked whole from it on."""
    budget = Budget(1 << 30, 60.0)
    texts = [f"def f():\n    return {i}\n" for i in range(problems._KEPT_INCREMENTAL + 1)]
    for text in texts:
        compare("keep.py", None, text, budget, None)
    oldest = problems._kept["keep.py", problems._digest(texts[0])]
    assert oldest.statements is None and oldest.found == []
    assert problems._kept["keep.py", problems._digest(texts[-1])].statements is not None
