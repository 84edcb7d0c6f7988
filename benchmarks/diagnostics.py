"""Diagnostics and code.edit (docs/protocol.md, Diagnostics and "Code by structure").

Rows: an exact-tier edit of a parsed file (its reply carries syntax diagnostics) against
the same edit of a `.txt` copy (no parse), for 4 KiB of Python and 200 KiB of TypeScript,
on a server started with `--problems off`, in paired rounds: issue 45's target is the
syntax diagnostics' cost, and problems (pyflakes, oxlint) have their own rows
(benchmarks/problems_rows.py, js_problems_rows.py); the same edit with problems on,
against the same `.txt` copy, is beside them as information (no target); and the bytes of
a code.edit `replace` of a 40-line method against the file.patch that makes the same
change (`find` = the old body), their results checked byte-identical; code.edit's text is
sent flush left, as re-indentation onto the symbol allows.

`confusion()` (also `python -m benchmarks.diagnostics`) runs the edit corpora through
file.patch with the gate off and sets `introduced > 0` against whether the result parses,
by each language's own parser: tests/patch_kinds.py's rows, the guard's good and bad
lines per language, and seeded one-line mutations of every sample in tests/samples.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import random
import subprocess
import sys
import tempfile
import textwrap
import tomllib
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import yaml

from benchmarks import paired
from benchmarks.env import REPO, Env
from benchmarks.loadclient import Call, StdioServer, is_success
from benchmarks.report import Measure, Target
from benchmarks.scenarios import (GUARD_TS_BYTES, WARMUP, Scenario, _python_4k, _sequential_rate,
                                  _typescript)
from chorus_tools.tools.code import languages
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.patch.patch import patch

_NAMES = itertools.count()


Edits = tuple[Callable[[int], Call], Callable[[dict[str, Any]], str | None]]


def _edits(env: Env, suffix: str, text: str, semicolon: str, *options: str) -> Edits:
    """Exact patches of `counter = N` in a new file, each on from the one before, and the
    check of a reply (diagnostics in it; none of problems when `options` turn them off)."""
    name = f"diag-{next(_NAMES)}{suffix}"
    (env.scratch / name).write_text(text)
    prefix = "let " if semicolon else ""
    made = itertools.count()

    def call(_: int) -> Call:
        i = next(made)
        return "file.patch", {"path": name, "patches": [
            {"find": f"{prefix}counter = {i}{semicolon}\n",
             "replace": f"{prefix}counter = {i + 1}{semicolon}\n"}]}

    def diagnosed(reply: dict[str, Any]) -> str | None:
        wrong = is_success(reply)
        if wrong is None and suffix != ".txt" and "diagnostics" not in reply["result"]:
            return "no diagnostics in the reply"
        if wrong is None and options == SYNTAX_ONLY \
                and reply["result"]["diagnostics"].get("problems_checked") is not False:
            return "problems checked under --problems off"
        return wrong
    return call, diagnosed


def _exact_edits(env: Env, suffix: str, text: str, semicolon: str, *options: str) -> Measure:
    """The edits one call at a time on a server started with `options`."""
    call, diagnosed = _edits(env, suffix, text, semicolon, *options)
    with env.ours(env.scratch, *options) as server:
        return _sequential_rate(server, call, env.scale.mutations, diagnosed)


def _paired_edits(env: Env, suffix: str, text: str, semicolon: str) -> Measure:
    """The syntax-only edits of a parsed file against the same edits of a `.txt` copy, both
    servers up at once and measured in the same rounds (benchmarks/paired.py): measured
    one after the other, the .txt side alone read 603 and 756 req/s on the same quiet
    machine, so the ratio was the disk's mood as much as the check's cost."""
    edits = {SYNTAX_ONLY: _edits(env, suffix, text, semicolon, *SYNTAX_ONLY),
             (): _edits(env, ".txt", text, semicolon)}
    by_pid: dict[int, Edits] = {}

    @contextmanager
    def started(options: tuple[str, ...]) -> Iterator[StdioServer]:
        with env.ours(env.scratch, *options) as server:
            by_pid[server.pid] = edits[options]
            yield server

    count = max(10, env.scale.mutations // 8)

    def rate(server: StdioServer) -> float:
        call, diagnosed = by_pid[server.pid]
        return _sequential_rate(server, call, count, diagnosed).value
    return paired.measure(env, lambda: started(SYNTAX_ONLY), lambda: started(()), rate,
                          count + WARMUP)


SYNTAX_ONLY = ("--problems", "off")


def diag_py_ours(env: Env) -> Measure:
    return _paired_edits(env, ".py", _python_4k(), "")


def diag_py_problems(env: Env) -> Measure:
    return _exact_edits(env, ".py", _python_4k(), "")


def diag_py_txt(env: Env) -> Measure:
    return _exact_edits(env, ".txt", _python_4k(), "")


def diag_ts_ours(env: Env) -> Measure:
    return _paired_edits(env, ".ts", _typescript(GUARD_TS_BYTES), ";")


def diag_ts_problems(env: Env) -> Measure:
    return _exact_edits(env, ".ts", _typescript(GUARD_TS_BYTES), ";")


def diag_ts_txt(env: Env) -> Measure:
    return _exact_edits(env, ".txt", _typescript(GUARD_TS_BYTES), ";")


def _method_file() -> tuple[str, str, str]:
    """A module with a class whose 40-line method is to be changed: (the file, the old
    method, the new one)."""
    body = "".join(f"        total += self.step({i}) * {i}\n" for i in range(37))
    old = f"    def compute(self, x):\n        total = 0\n{body}        return total\n"
    new = old.replace("return total", "return total // 2")
    helpers = "".join(f"    def step{i}(self):\n        return {i}\n\n" for i in range(20))
    text = f"class Engine:\n{helpers}{old}\n    def stop(self):\n        pass\n"
    return text, old, new


def _edit_bytes(env: Env, method: str) -> Measure:
    text, old, new = _method_file()
    name = f"engine-{next(_NAMES)}.py"
    (env.scratch / name).write_text(text)
    params: dict[str, Any] = (  # code.edit's text at no indentation: the server places it
        {"path": name, "symbol": "Engine/compute", "action": "replace",
         "text": textwrap.dedent(new)}
        if method == "code.edit" else
        {"path": name, "patches": [{"find": old, "replace": new}]})
    with env.ours(env.scratch) as server:
        server.request(method, params, is_success)
    written = (env.scratch / name).read_text()
    if written != text.replace(old, new):
        raise RuntimeError(f"{method} did not write the intended bytes")
    request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return Measure("bytes", len(json.dumps(request, separators=(",", ":")).encode()),
                   {"file_bytes": len(text.encode())})


def code_edit_ours(env: Env) -> Measure:
    return _edit_bytes(env, "code.edit")


def code_edit_patch(env: Env) -> Measure:
    return _edit_bytes(env, "file.patch")


SCENARIOS: list[Scenario] = [
    Scenario("diag_py", "file.patch, exact tier, 4 KiB Python (reply with syntax "
             "diagnostics, --problems off)", "the same patch on a .txt copy (no parse)",
             Target("≥", 0.9), diag_py_ours, paired.baseline_of),
    Scenario("diag_ts", "file.patch, exact tier, 200 KiB TypeScript (reply with syntax "
             "diagnostics, --problems off)", "the same patch on a .txt copy (no parse)",
             Target("≥", 0.9), diag_ts_ours, paired.baseline_of),
    Scenario("diag_py_problems", "file.patch, exact tier, 4 KiB Python (reply with "
             "diagnostics and problems, the default)", "the same patch on a .txt copy "
             "(no parse)", None, diag_py_problems, diag_py_txt),
    Scenario("diag_ts_problems", "file.patch, exact tier, 200 KiB TypeScript (reply with "
             "diagnostics and problems: oxlint, the default)", "the same patch on a .txt "
             "copy (no parse)", None, diag_ts_problems, diag_ts_txt),
    Scenario("code_edit_bytes", "code.edit replace of a 40-line method: request bytes",
             "file.patch of the same change (find = the old body)", Target("≤", 0.5),
             code_edit_ours, code_edit_patch),
]


# the confusion matrix ----------------------------------------------------------------------

def parses(path: str, text: str) -> bool:
    """Whether `text` parses, by the language's own parser (independent of the judge)."""
    language = languages.language_of(path, text[:65536].encode("utf-8", "surrogatepass"))
    name = None if language is None else language.name
    try:
        if name == "make":
            return _make_reads(text)
        if name == "python":
            compile(text, path, "exec", dont_inherit=True)
        elif name == "json":
            json.loads(text)
        elif name == "toml":
            tomllib.loads(text)
        elif name == "yaml":
            list(yaml.safe_load_all(text))
        elif language is not None and language.grammar and name != "markdown":
            return not languages.parser(language.grammar).parse(
                text.encode("utf-8", "surrogatepass")).root_node.has_error
    except (SyntaxError, ValueError, tomllib.TOMLDecodeError, yaml.YAMLError):
        return False
    return True


def _make_reads(text: str) -> bool:
    """GNU make's own reading of a Makefile (a dry run in an empty directory)."""
    with tempfile.TemporaryDirectory() as empty:
        Path(empty, "Makefile").write_text(text)
        run = subprocess.run(["make", "-n", "-f", "Makefile"], cwd=empty, capture_output=True,
                             text=True, timeout=30)
    return not any(why in run.stderr for why in ("missing separator",
                                                  "recipe commences before first target"))


def _corpus(mutations: int) -> list[tuple[str, str, str, str]]:
    """(path, before, find, replace) edits whose `before` parses."""
    spec = importlib.util.spec_from_file_location("patch_kinds", REPO / "tests/patch_kinds.py")
    assert spec is not None and spec.loader is not None
    kinds = importlib.util.module_from_spec(spec)
    sys.modules["patch_kinds"] = kinds  # its dataclasses look themselves up there
    spec.loader.exec_module(kinds)
    edits = [(row.path, row.before, row.find, row.replace) for row in kinds.ROWS.values()]
    rng = random.Random(34)
    samples = [p for p in (REPO / "tests" / "samples").rglob("*") if p.is_file()]
    for sample in samples:
        text = sample.read_text()
        lines = text.splitlines(keepends=True)
        for _ in range(mutations):
            i = rng.randrange(len(lines))
            line = lines[i]
            if not line.strip():
                continue
            cut = rng.randrange(len(line.rstrip("\n")) + 1)
            changed = rng.choice([
                line[:cut] + line[cut + 1:],  # a character dropped
                line[:cut] + rng.choice("([{}]):;,'\"") + line[cut:],  # one added
                "    " + line, line.lstrip(), line + line,  # moved, repeated
            ])
            if changed != line and text.count(line) == 1:
                edits.append((sample.name, text, line, changed))
    return [e for e in edits if parses(e[0], e[1])]


def confusion(mutations: int = 40) -> Counter[tuple[bool, bool]]:
    """(introduced > 0, the result does not parse) for every edit of the corpora."""
    counts: Counter[tuple[bool, bool]] = Counter()
    with tempfile.TemporaryDirectory() as root:
        ctx = ToolContext(ws=Workspace(root), syntax_gate="off")
        for n, (path, before, find, replace) in enumerate(_corpus(mutations)):
            name = f"{n}/{path}"
            Path(root, name).parent.mkdir()
            Path(root, name).write_text(before)
            try:
                done = patch(ctx, name, [{"find": find, "replace": replace}])
            except Exception:  # noqa: BLE001 - a refusal (no mapping fits): not an edit
                continue
            diagnostics = done.get("diagnostics")
            if diagnostics is None:
                continue  # a language the server does not parse
            after = Path(root, name).read_text()
            counts[diagnostics.get("introduced", 0) > 0, not parses(path, after)] += 1
    return counts


if __name__ == "__main__":
    matrix = confusion()
    print("                  result parses   result broken")
    print(f"introduced = 0    {matrix[False, False]:>13}   {matrix[False, True]:>13}")
    print(f"introduced > 0    {matrix[True, False]:>13}   {matrix[True, True]:>13}")
