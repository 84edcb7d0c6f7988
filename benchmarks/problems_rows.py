"""Problems (docs/protocol.md, Diagnostics): recall and false positives of "introduced", and
what the check costs a file.patch.

The corpus is our own: modules of the standard library, each edited the ways that break
meaning without breaking syntax (a definition renamed at its `def`, a typo in a call, an
import line removed, a relative import to a module that is not there, a local read
before its assignment), and neutral edits (a comment, a constant changed, a new top-level
assignment) that must bring nothing. An edit is found when the diagnostics of the change
mark a problem introduced with the expected code and name. Run in-process through the
Judge every reply's diagnostics come from (`python -m benchmarks.problems_rows` prints
the counts).

The cost rows: an exact file.patch of a Python file holding problems, with the reply's
diagnostics, against the same patch of the same `.py` file on a server started with
`--problems off` (syntax-only diagnostics, the baseline issue 44 names), at 4 KiB and
200 KiB.
"""

from __future__ import annotations

import ast
import builtins
import os
import random
import sysconfig
import tempfile
from pathlib import Path
from collections.abc import Callable
from typing import Any

from benchmarks.diagnostics import _exact_edits
from benchmarks.env import Env
from benchmarks.report import Measure, Target
from benchmarks.scenarios import Scenario, _python_4k
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.patch.diagnostics import Judge

NEUTRAL = 300
MODULES = 60
_MAX_BYTES = 60_000


def _stdlib() -> list[tuple[str, str]]:
    """(name, text) of standard library modules that compile and hold no problem
    `introduced` could be confused by (their own problems are the "before")."""
    root = Path(sysconfig.get_paths()["stdlib"])
    found = []
    for path in sorted(root.glob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if len(text) > _MAX_BYTES:
            continue
        try:
            ast.parse(text)
        except SyntaxError:
            continue
        found.append((path.name, text))
    return found[:MODULES]


def _functions(tree: ast.Module) -> list[ast.FunctionDef]:
    return [n for n in tree.body if isinstance(n, ast.FunctionDef)]


def _breaking(text: str, rng: random.Random) -> list[tuple[str, str, str]]:
    """(kind, text after, (code, name) expected as "code name") edits of `text`. A module
    with a star import reports no F821 (docs/protocol.md, Diagnostics): only the relative
    import is asked of it; a builtin's name renamed away is still defined: not asked."""
    tree = ast.parse(text)
    lines = text.split("\n")
    edits = [("relative import to nowhere",
              text + "\nfrom .no_such_module_here import thing\n", "I001 no_such_module_here")]
    if "import *" in text:
        return edits
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)}
    for f in _functions(tree):
        if f.name in read and not hasattr(builtins, f.name):
            line = lines[f.lineno - 1]
            lines2 = list(lines)
            lines2[f.lineno - 1] = line.replace(f"def {f.name}(", f"def {f.name}_renamed(", 1)
            edits.append(("renamed definition", "\n".join(lines2), f"F821 {f.name}"))
            break
    defined = {f.name for f in _functions(tree)}
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name) and n.func.id in defined]
    if calls:
        func = rng.choice(calls).func
        assert isinstance(func, ast.Name)
        lines2 = list(lines)
        line = lines2[func.lineno - 1]
        at = func.col_offset
        rest = line[at + len(func.id):]
        lines2[func.lineno - 1] = f"{line[:at]}{func.id}_typo{rest}"
        edits.append(("typo in a call", "\n".join(lines2), f"F821 {func.id}_typo"))
    for node in tree.body:
        if not isinstance(node, ast.Import):
            continue
        if len(node.names) == 1 and node.names[0].asname is None and "." not in node.names[0].name \
                and node.names[0].name in read and node.end_lineno == node.lineno:
            lines2 = list(lines)
            lines2[node.lineno - 1] = ""
            edits.append(("removed import", "\n".join(lines2), f"F821 {node.names[0].name}"))
            break
    for f in _functions(tree):
        body = f.body
        first = body[0]
        assigned = [t.id for s in body[1:] if isinstance(s, ast.Assign)
                    for t in s.targets if isinstance(t, ast.Name)]
        given = {a.arg for a in ast.walk(f.args) if isinstance(a, ast.arg)}
        declared = {n for s in ast.walk(f) if isinstance(s, (ast.Global, ast.Nonlocal))
                    for n in s.names}
        if assigned and first.lineno > f.lineno and first.col_offset > 0:
            name = assigned[0]
            if name in given | declared or any(
                    isinstance(n, ast.Name) and n.id == name for n in ast.walk(first)):
                continue
            lines2 = list(lines)
            indent = " " * first.col_offset
            lines2.insert(first.lineno - 1, f"{indent}print({name})")
            # a global of the same name makes it F823, none F821: either names it
            edits.append(("read before assignment", "\n".join(lines2), f"F8 {name}"))
            break
    return edits


def _neutral(text: str, rng: random.Random, count: int) -> list[str]:
    lines = text.split("\n")
    tops = [i for i, line in enumerate(lines) if line[:1].isalpha() and not line.startswith(
        ("else", "elif", "except", "finally"))] or [0]
    edits = []
    for i in range(count):
        kind = i % 3
        if kind == 0:
            at = rng.choice(tops)
            edits.append("\n".join([*lines[:at], f"# a neutral comment {i}", *lines[at:]]))
        elif kind == 1:
            edits.append(text + f"\n_benchmark_constant_{i} = {i}\n")
        else:
            edits.append(text.replace("\n\n\n", f"\n\n_neutral_{i} = {i!r}\n\n", 1))
    return edits


def _judge(ctx: ToolContext, name: str, text: str) -> Judge:
    return Judge.of(ctx, name, text)


def corpus() -> dict[str, Any]:
    """Run the corpus: found/expected per kind, and neutral edits with anything marked
    introduced."""
    rng = random.Random(44)
    found: dict[str, list[int]] = {}
    wrong = neutral = 0
    modules = _stdlib()
    per = -(-NEUTRAL // len(modules)) + 1  # a spare: an edit that does not parse is skipped
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ctx = ToolContext(ws=Workspace(str(root)))  # one: each holds the root's descriptor
        for name, text in modules:
            (root / name).write_text(text)
            for kind, after, expected in _breaking(text, rng):
                diagnosis = _judge(ctx, name, after).diagnosis(text, after)
                assert diagnosis is not None
                reply = diagnosis.reply()
                code, wanted = expected.split(" ")
                problems = reply.get("problems")
                hit = isinstance(problems, list) and any(
                    p["introduced"] and p["code"].startswith(code) and wanted in p["message"]
                    for p in problems)
                tally = found.setdefault(kind, [0, 0])
                tally[0] += hit
                tally[1] += 1
            for after in _neutral(text, rng, per):
                if neutral >= NEUTRAL:
                    break
                try:
                    ast.parse(after)
                except SyntaxError:
                    continue  # a comment put inside a string's lines: not an edit to count
                neutral += 1
                diagnosis = _judge(ctx, name, after).diagnosis(text, after)
                assert diagnosis is not None
                wrong += bool(diagnosis.reply().get("problems_introduced"))
        os.close(ctx.ws.root_fd)
    hits = sum(f[0] for f in found.values())
    total = sum(f[1] for f in found.values())
    return {"by_kind": found, "found": hits, "expected": total, "neutral": neutral,
            "false_positives": wrong}


def _with_problems(size: int) -> str:
    """A Python module of about `size` bytes (the 4 KiB one of the other rows, padded with
    functions) with problems in it (F821, F811)."""
    problems = "\nprint(undefined_name)\n\ndef dup():\n    pass\n\ndef dup():\n    pass\n"
    text = _python_4k() + problems
    pads = []
    while len(text) + sum(map(len, pads)) < size:
        pads.append(f"\n\ndef pad_{len(pads)}(x):\n    return x + {len(pads)}\n")
    return text + "".join(pads)


def judged_rows(prefix: str, corpus_of: Callable[[Env], dict[str, Any]], found: str,
                false: str) -> list[Scenario]:
    """The recall and false-positive rows of an edit corpus, `corpus_of(env)` run once for
    both (its counts: found, expected, false_positives, neutral)."""
    runs: dict[Path, dict[str, Any]] = {}

    def once(env: Env) -> dict[str, Any]:
        if env.cache not in runs:
            runs[env.cache] = corpus_of(env)
        return runs[env.cache]

    def recall(env: Env) -> Measure:
        got = once(env)
        return Measure("share", got["found"] / got["expected"], got)

    def false_positives(env: Env) -> Measure:
        got = once(env)
        return Measure("share", got["false_positives"] / got["neutral"], got)
    return [Scenario(f"{prefix}_recall", found, "—",
                     Target("≥", 0.98, absolute=True, unit="%"), recall, None),
            Scenario(f"{prefix}_false", false, "—",
                     Target("≤", 0.0, absolute=True, unit="%"), false_positives, None)]


def cost_rows(prefix: str, titles: tuple[str, str], baseline: str, suffix: str,
              text: Callable[[int], str], find: str, *off: str) -> list[Scenario]:
    """An exact file.patch of `text(size)` (a `suffix` file) with its problems in the reply,
    at 4 KiB and 200 KiB (`titles`), against the same patch on a server started with `off`
    (syntax diagnostics only)."""
    def row(key: str, size: int, title: str, target: float) -> Scenario:
        return Scenario(f"{prefix}_cost_{key}", title, baseline, Target("≥", target),
                        lambda env: _exact_edits(env, suffix, text(size), find),
                        lambda env: _exact_edits(env, suffix, text(size), find, *off))
    return [row("4k", 4096, titles[0], 0.5), row("200k", 200 << 10, titles[1], 0.7)]


SCENARIOS: list[Scenario] = [
    *judged_rows("problems", lambda _env: corpus(),
                 "problems: introduced ones found, stdlib edit corpus",
                 "problems: neutral edits with one marked introduced (of 300)"),
    *cost_rows("problems", ("file.patch, 4 KiB Python with problems (reply with them)",
                            "file.patch, 200 KiB Python with problems"),
               "the same patch with --problems off (syntax only)", ".py", _with_problems, "",
               "--problems", "off"),
]

if __name__ == "__main__":
    print(corpus())
