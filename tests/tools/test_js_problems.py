"""JavaScript and TypeScript problems (issue 44, docs/protocol.md Diagnostics): oxlint's
no-undef through the same Judge as Python's problems. A rename reports every read, a moved
problem is not new, TypeScript's type positions and the browser/Node/ES globals are not
reported, each suffix is read as its language, columns count characters; and a checker
that is absent, hangs, crashes or prints garbage changes no edit's outcome."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from collections.abc import Iterator
from typing import Any

import pytest
from fake_elf import CRASH, HANG, prints, write_elf

from chorus_tools.tools.code.check import check
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import Limits, ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.mutate.write import write
from chorus_tools.tools.patch import oxlint
from chorus_tools.tools.patch.diagnostics import Judge
from chorus_tools.tools.patch.note import note
from chorus_tools.tools.patch.patch import patch

BINARY = oxlint.find_oxlint()
assert BINARY is not None, "oxlint is a dependency (pyproject.toml): pip install -e ."
CALLS = ("export function parseConfig(text: string): Config { return { text }; }\n"
         "interface Config { text: string }\n"
         "const a = parseConfig('a');\nexport const b = [a, parseConfig('b')];\n")


@pytest.fixture(scope="module")
def checker() -> oxlint.Oxlint:
    return oxlint.start(BINARY)  # type: ignore[arg-type]


@pytest.fixture
def ctx(root: Path) -> Iterator[ToolContext]:
    """One workspace mode only: how a path is opened is not what these tests are about,
    and each check spawns a process."""
    ws = Workspace(str(root))
    yield ToolContext(ws=ws)
    os.close(ws.root_fd)


@pytest.fixture
def js(ctx: ToolContext, checker: oxlint.Oxlint) -> ToolContext:
    ctx.oxlint = checker
    return ctx


def _reply(ctx: ToolContext, path: str, before: str | None, after: str,
           **limits: float) -> dict[str, Any]:
    judge = Judge(path, after, Limits(**limits), ctx=ctx)  # type: ignore[arg-type]
    judged = judge.diagnosis(before, after)
    assert judged is not None
    return judged.reply()


def _found(ctx: ToolContext, path: str, text: str) -> list[tuple[int, int, str]]:
    got = _reply(ctx, path, None, text)
    assert got["problems_checked"] is True and got["total"] == 0, got
    return [(p["line"], p["column"], p["message"]) for p in got["problems"]]


def test_a_rename_reports_every_read_and_a_moved_problem_is_not_new(js: ToolContext) -> None:
    renamed = _reply(js, "src/app.ts", CALLS, CALLS.replace("function parseConfig",
                                                            "function loadConfig"))
    assert (renamed["problems_total"], renamed["problems_introduced"]) == (2, 2)
    assert [(p["line"], p["column"], p["code"], p["message"], p["introduced"])
            for p in renamed["problems"]] == [
        (3, 11, "no-undef", "'parseConfig' is not defined", True),
        (4, 22, "no-undef", "'parseConfig' is not defined", True)]
    old = "import { x } from './x';\nx(typo);\n"
    moved = _reply(js, "m.mjs", old, "// a comment\n\n" + old)
    assert (moved["problems_total"], moved["problems_introduced"]) == (1, 0)
    assert moved["problems"][0]["line"] == 4 and moved["problems"][0]["introduced"] is False
    assert _reply(js, "m.mjs", old, old + "x(1);\n")["problems_introduced"] == 0


@pytest.mark.parametrize("text", [
    "interface A { b: B<C> }\ntype D = E | F[];\nexport type { A, D };\n",
    "declare const g: number;\ndeclare function h(): void;\nh(); g;\n",
    "declare module 'm' { export const q: Q; }\ndeclare global { interface Window { w: W } }\n",
    "namespace N { export namespace M { export const k = 1; } }\nN.M.k;\n",
    "enum E { A, B = A + 1 }\nE.B;\n",
    "class C<T extends Record<string, unknown>> { x!: T; m(this: C<T>): void {} }\nnew C();\n",
    "import type { T } from './t';\nlet t: T | undefined; t;\n",
    "const o = { a: 1 } satisfies Record<string, number>;\ntype K = keyof typeof o;\n",
])
def test_type_positions_are_not_reported(js: ToolContext, text: str) -> None:
    assert _found(js, "a.ts", text) == []


def test_typeof_in_a_type_reads_a_value(js: ToolContext) -> None:
    assert _found(js, "a.ts", "let v: typeof gone;\nv;\n") == [
        (1, 15, "'gone' is not defined")]


def test_browser_node_and_es_globals_are_known(js: ToolContext) -> None:
    text = ("window.x; document.body; fetch('/'); localStorage; process.env; require('fs');\n"
            "module.exports = Buffer.from(__dirname); setTimeout(() => {}, 1);\n"
            "structuredClone(1); queueMicrotask(() => {}); new WeakRef({});\n"
            "globalThis; new AggregateError([]); Atomics; new FinalizationRegistry(() => {});\n"
            "console.log(Symbol(), BigInt(1), Promise.withResolvers);\n")
    assert _found(js, "a.js", text) == []


@pytest.mark.parametrize("path, text, column", [
    ("a.js", "const el = <div>{missing}</div>;\n", 18),
    ("a.jsx", "const el = <Missing />;\n", 13),
    ("a.mjs", "export default missing + 1;\n", 16),
    ("a.cjs", "module.exports = missing;\n", 18),
    ("a.ts", "export const n: number = missing;\n", 26),
    ("a.mts", "export const n: number = missing;\n", 26),
    ("a.cts", "const n: number = missing;\nexport = n;\n", 19),
    ("a.tsx", "export const f = <T,>(a: T) => <b>{a}{missing}</b>;\n", 39),
])
def test_each_suffix_is_read_as_its_language(js: ToolContext, path: str, text: str,
                                             column: int) -> None:
    assert [(line, col) for line, col, _ in _found(js, path, text)] == [(text.count(
        "\n", 0, text.lower().index("missing")) + 1, column)]


def test_an_export_of_a_name_nothing_defines_is_reported(js: ToolContext) -> None:
    before = "function parse() {}\nexport { parse };\n"
    got = _reply(js, "a.mjs", before, before.replace("function parse", "function load"))
    assert [(p["line"], p["column"], p["message"], p["introduced"])
            for p in got["problems"]] == [(2, 10, "Export 'parse' is not defined", True)]


def test_a_declaration_file_declares(js: ToolContext) -> None:
    assert _found(js, "a.d.ts", "declare const n: N;\nexport default m;\nexport { k };\n") \
        == []


def test_columns_count_characters_and_lines_split_at_newlines(js: ToolContext) -> None:
    text = "\ufeffconst s = 'héllo€'; ab;\r\n// 😀\r\nconst t = '😀'; cd;\r\n"
    assert _found(js, "u.js", text) == [(1, 22, "'ab' is not defined"),
                                        (3, 16, "'cd' is not defined")]


def test_a_file_with_syntax_errors_is_not_checked(js: ToolContext) -> None:
    assert _reply(js, "a.ts", "let x = 1;\n", "let x = (1;\n")["problems"] == {
        "skipped": "the file has syntax errors"}


def test_past_the_size_bound_it_is_skipped(js: ToolContext) -> None:
    got = _reply(js, "a.js", "x;\n", "y;\n" * 10, syntax_max_bytes=10)
    assert got["problems"] == {"skipped": "file over 10 bytes"}


def test_without_oxlint_nothing_is_claimed(ctx: ToolContext, root: Path) -> None:
    assert ctx.oxlint is None
    assert _reply(ctx, "a.ts", "", "undefinedThing();\n") == {
        "errors": [], "total": 0, "introduced": 0, "problems_checked": False}
    assert oxlint.find_oxlint(str(root / "nowhere")) is None
    script = root / "oxlint"
    script.write_text("#!/bin/sh\necho '{}'\n")
    script.chmod(0o755)
    assert oxlint.find_oxlint(str(script)) is None  # a script cannot run confined


@pytest.mark.parametrize("code, reason", [
    (HANG, "parsing took over 0.5 s"),
    (CRASH, "the checker (oxlint) failed (exit status -4)"),
    (prints(b"not json\n"), "the checker (oxlint) printed a report that could not be read"),
    (prints(b'{"diagnostics": [], "number_of_files": 0}'),
     "the checker (oxlint) did not read the file"),
    (prints(b'{"diagnostics": [{"message": "Unexpected token", "labels": []}], '
            b'"number_of_files": 1}'),
     "the checker (oxlint) could not judge the text: Unexpected token"),
])
def test_a_checker_gone_wrong_skips_problems_and_the_edit_lands(
        ctx: ToolContext, root: Path, tmp_path: Path, code: bytes, reason: str) -> None:
    fake = oxlint.start(str(write_elf(tmp_path / "oxlint", code)))
    ctx.oxlint = fake
    ctx.limits = Limits(syntax_timeout=0.5)
    (root / "a.ts").write_text("let x = 1;\n")
    done = patch(ctx, "a.ts", [{"find": "x = 1", "replace": "x = missing"}])
    assert done["diagnostics"] == {"errors": [], "total": 0, "introduced": 0,
                                   "problems_checked": True, "problems": {"skipped": reason}}
    assert (root / "a.ts").read_text() == "let x = missing;\n"
    assert os.listdir(fake.directory) == [oxlint.CONFIG]  # its text removed


def test_a_binary_gone_after_start_skips(ctx: ToolContext, root: Path, tmp_path: Path) -> None:
    copy = tmp_path / "oxlint"
    copy.write_bytes(Path(BINARY).read_bytes())  # type: ignore[arg-type]
    copy.chmod(0o755)
    ctx.oxlint = oxlint.start(str(copy))
    copy.unlink()
    done = write(ctx, "a.js", "missing();\n")
    assert done["diagnostics"]["problems"]["skipped"].startswith(
        "the checker (oxlint) could not start")
    assert (root / "a.js").read_text() == "missing();\n"


def test_its_directory_removed_under_a_running_server_skips(ctx: ToolContext, root: Path) -> None:
    """A /tmp cleaner may remove the private directory of a long-running server."""
    ctx.oxlint = oxlint.start(BINARY)  # type: ignore[arg-type]
    shutil.rmtree(ctx.oxlint.directory)
    done = write(ctx, "a.js", "missing();\n")
    assert done["diagnostics"]["problems"] == {
        "skipped": "the checker (oxlint) could not be given the text: No such file or "
                   "directory"}
    assert (root / "a.js").read_text() == "missing();\n"


def test_the_gate_refuses_and_writes_nothing(js: ToolContext, root: Path) -> None:
    js.problems_gate = "introduced"
    (root / "app.ts").write_text(CALLS)
    with pytest.raises(ToolError) as err:
        patch(js, "app.ts", [{"find": "function parseConfig", "replace": "function load"}])
    assert err.value.code == "edit_breaks_syntax" and err.value.details["reason"] == "problems"
    assert err.value.details["diagnostics"]["problems_introduced"] == 2
    assert (root / "app.ts").read_text() == CALLS
    assert os.listdir(root) == ["app.ts"]  # nothing of the check is in the workspace


def test_the_note_and_file_check(js: ToolContext, root: Path) -> None:
    done = write(js, "a.js", "const a = 1;\nconsole.log(b);\n")
    assert note(done["diagnostics"]) == ("Note: this edit introduced 1 problem: line 2: "
                                         "'b' is not defined (no-undef)")
    checked = check(js, "a.js")
    assert checked["language"] == "javascript"
    assert checked["diagnostics"]["problems"] == [
        {"line": 2, "column": 13, "code": "no-undef", "message": "'b' is not defined",
         "introduced": False}]
    assert "broken_imports" not in checked["diagnostics"]
