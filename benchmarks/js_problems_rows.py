"""JavaScript and TypeScript problems (docs/protocol.md, Diagnostics): recall and false
positives of "introduced" no-undef on real code, and what oxlint costs a file.patch.

The corpus is real source: TypeScript of zod and ajv (their `src`/`lib`, not declaration
files; npm installs them into the bench cache with --install, pinned) and JavaScript of
npm's own node_modules. Each file is edited the ways that break a name without breaking
syntax: a top-level definition renamed where it is defined (every value read of the old
name must be reported introduced), a call's name mistyped, an import line removed (every
value read of its names; an import used only in types must bring nothing: type
positions are excepted); and neutral edits (a comment, a new constant) must bring nothing.
The oracle is tree-sitter's: identifiers in value positions (`type_identifier`s are
types), a name taken only when the file declares it once. Run in-process through the
Judge every reply's diagnostics come from (`python -m benchmarks.js_problems_rows`).

The cost rows: an exact file.patch of a TypeScript file holding two undefined names,
with the reply's problems, against the same patch with `--oxlint none` (syntax only).
"""

from __future__ import annotations

import glob
import os
import random
import shutil
import subprocess
import tempfile
from pathlib import Path
from collections.abc import Callable
from typing import Any

from benchmarks.env import Env
from benchmarks.mcp_reference import Unavailable
from benchmarks.problems_rows import cost_rows, judged_rows
from benchmarks.scenarios import Scenario, _typescript
from chorus_tools.tools.code.languages import parser
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.patch import oxlint
from chorus_tools.tools.patch.diagnostics import Judge

PACKAGES = ("zod@4.6.7", "ajv@8.20.0")
NEUTRAL = 300
FILES = 60  # of each language
_MAX_BYTES = 60_000
_DECLARING = {"variable_declarator", "function_declaration", "class_declaration",
              "required_parameter", "optional_parameter", "formal_parameters",
              "import_specifier", "import_clause", "namespace_import", "catch_clause",
              "arrow_function", "function_expression", "class", "for_in_statement",
              "array_pattern", "assignment_pattern", "rest_pattern", "pair_pattern",
              "object_pattern", "method_definition", "generator_function_declaration",
              "function_signature", "enum_declaration", "internal_module", "export_specifier",
              "labeled_statement", "abstract_class_declaration"}
_READS = ("identifier", "shorthand_property_identifier", "shorthand_property_identifier_pattern")
_TYPES = {"nested_type_identifier", "type_annotation", "type_arguments", "type_parameters",
          "type_alias_declaration", "interface_declaration", "implements_clause",
          "extends_type_clause", "generic_type", "object_type", "function_type"}
_STATEMENTS = {"program", "statement_block", "class_body"}


def _files(cache: Path, install: bool) -> list[tuple[str, str]]:
    """(name, text) of the corpus: FILES TypeScript and FILES JavaScript files."""
    prefix = cache / "npm-ts-src"
    if not (prefix / "node_modules" / "zod").is_dir():
        npm = shutil.which("npm")
        if npm is None or not install:
            raise Unavailable(f"{', '.join(PACKAGES)} not installed (npm, or --install)")
        subprocess.run([npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
                        "--loglevel", "error", *PACKAGES], capture_output=True, check=False)
    ts = [Path(p) for p in glob.glob(str(prefix / "node_modules/*/**/*.ts"), recursive=True)
          if not p.endswith(".d.ts")]
    js = [Path(p) for p in glob.glob("/usr/lib/node_modules/npm/node_modules/**/*.js",
                                     recursive=True)]
    found = []
    for paths in (ts, js):
        paths = sorted(p for p in paths if p.is_file() and 500 < p.stat().st_size < _MAX_BYTES)
        random.Random(44).shuffle(paths)
        found += [(f"{i}-{p.name}", p.read_text("utf-8", "replace")) for i, p in
                  enumerate(paths[:FILES])]
    return found


def _grammar(name: str) -> str:
    return "typescript" if name.endswith(".ts") else "javascript"


def _nodes(tree: Any) -> list[Any]:
    out, pending = [], [tree.root_node]
    while pending:
        node = pending.pop()
        if node.type in _READS:
            out.append(node)
        pending.extend(node.children)
    return out


def _declaring(node: Any) -> bool:
    return node.type == "shorthand_property_identifier_pattern" or (
        node.parent is not None and node.parent.type in _DECLARING)


def _read(node: Any) -> bool:
    """A value read: not a declaration, nor in a type (`z` of `z.infer<T>`), except
    under `typeof` (a type query reads the value)."""
    if _declaring(node):
        return False
    up = node.parent
    while up is not None and up.type not in _STATEMENTS:
        if up.type == "type_query":
            return True
        if up.type in _TYPES:
            return False
        up = up.parent
    return True


def _splice(text: str, node: Any, new: str) -> str:
    data = text.encode()
    return (data[:node.start_byte] + new.encode() + data[node.end_byte:]).decode()


def _breaking(name: str, text: str, rng: random.Random,
              known: Callable[[str], bool]) -> list[tuple[str, str, str, int]]:
    """(kind, text after, the names, value reads expected introduced) edits of `text`; a
    definition whose name is also a known global (`name`, `status`: browser globals) is
    not renamed, its reads would still be defined (`known` says which are)."""
    tree = parser(_grammar(name)).parse(text.encode())
    nodes = _nodes(tree)
    by_name: dict[str, list[Any]] = {}
    for n in nodes:
        by_name.setdefault(n.text.decode(), []).append(n)
    edits = []
    tops = [n for n in nodes if _declaring(n) and n.parent.parent is not None
            and n.parent.parent.type in ("program", "lexical_declaration", "export_statement")
            and n.parent.type in ("function_declaration", "variable_declarator",
                                  "class_declaration")]
    for n in tops:
        word = n.text.decode()
        same = by_name[word]
        if sum(map(_declaring, same)) != 1 or known(word) or any(
                m.parent.type == "export_specifier" for m in same):
            continue
        reads = [m for m in same if _read(m)]
        if reads:
            edits.append(("renamed definition", _splice(text, n, word + "Renamed"), word,
                          len(reads)))
            break
    calls = [n for n in nodes if n.parent is not None and n.parent.type == "call_expression"
             and n.type == "identifier" and n.parent.child_by_field_name("function") == n
             and sum(map(_declaring, by_name[n.text.decode()])) == 1]
    if calls:
        n = rng.choice(calls)
        edits.append(("typo in a call", _splice(text, n, n.text.decode() + "Typo"),
                      n.text.decode() + "Typo", 1))
    imports = [n for n in tree.root_node.children if n.type == "import_statement"
               and n.start_point[0] == n.end_point[0]]
    for statement in imports:
        bound = {n.text.decode() for n in _bound(statement)}
        if not bound or any(sum(map(_declaring, by_name[w])) != 1 for w in bound):
            continue
        reads = sum(_read(m) for w in bound for m in by_name[w])
        lines = text.split("\n")
        lines[statement.start_point[0]] = ""
        kind = "removed import" if reads else "removed type-only import"
        edits.append((kind, "\n".join(lines), " ".join(sorted(bound)), reads))
        break
    return edits


def _bound(statement: Any) -> list[Any]:
    """The local names an import statement binds."""
    out, pending = [], list(statement.children)
    while pending:
        n = pending.pop()
        if n.type == "identifier" and n.parent.type != "import_specifier" or (
                n.parent.type == "import_specifier"
                and n == (n.parent.child_by_field_name("alias")
                          or n.parent.child_by_field_name("name"))):
            out.append(n)
        pending.extend(n.children)
    return out


def _neutral(text: str, count: int) -> list[str]:
    lines = text.split("\n")
    tops = [i for i, line in enumerate(lines) if line.startswith(("export ", "function ",
                                                                  "const ", "class "))] or [0]
    edits = []
    for i in range(count):
        if i % 2:
            edits.append(text + f"\nconst benchNeutral{i} = {i};\n")
        else:
            at = tops[i % len(tops)]
            edits.append("\n".join([*lines[:at], f"// a neutral comment {i}", *lines[at:]]))
    return edits


def corpus(env: Env | None = None) -> dict[str, Any]:
    """Run the corpus: reads found/expected per kind, edits fully found, and neutral edits
    with anything marked introduced."""
    binary = oxlint.find_oxlint()
    if binary is None:
        raise Unavailable("oxlint is not installed (pip install oxlint)")
    cache = env.cache if env is not None else Path.home() / ".cache" / "chorus-tools-bench"
    files = _files(cache, env.install if env is not None else False)
    rng = random.Random(44)
    found: dict[str, list[int]] = {}
    wrong = neutral = unjudged = 0
    per = -(-NEUTRAL // len(files)) + 1
    with tempfile.TemporaryDirectory() as tmp:
        ctx = ToolContext(ws=Workspace(tmp), oxlint=oxlint.start(binary))
        globals_: dict[str, bool] = {}

        def known(word: str) -> bool:
            if word not in globals_:
                probe = Judge.of(ctx, "probe.js", "").diagnosis(None, f"{word};\n")
                globals_[word] = bool(probe and probe.problems and not probe.problems.found)
            return globals_[word]
        for name, text in files:
            own = Judge.of(ctx, name, text).diagnosis(None, text)
            if own is None or own.errors or own.problems is None or own.problems.skipped:
                unjudged += 1  # our parser or oxlint's does not take the file as it is
                continue
            for kind, after, word, reads in _breaking(name, text, rng, known):
                got = Judge.of(ctx, name, after).diagnosis(text, after)
                assert got is not None and got.problems is not None
                hits = sum(f.message in {f"'{w}' is not defined" for w in word.split()}
                           for f in got.problems.introduced)
                tally = found.setdefault(kind, [0, 0, 0, 0])
                tally[0] += min(hits, reads)
                tally[1] += reads
                tally[2] += hits == reads and len(got.problems.introduced) == reads
                tally[3] += 1
            for after in _neutral(text, per):
                if neutral >= NEUTRAL:
                    break
                got = Judge.of(ctx, name, after).diagnosis(text, after)
                if got is None or got.errors:
                    continue
                neutral += 1
                wrong += bool(got.problems and got.problems.introduced)
        os.close(ctx.ws.root_fd)
    reads_found = sum(f[0] for f in found.values())
    reads = sum(f[1] for f in found.values())
    return {"by_kind": found, "found": reads_found, "expected": reads, "neutral": neutral,
            "false_positives": wrong, "files": len(files), "unjudged": unjudged}


def _with_problems(size: int) -> str:
    """About `size` bytes of TypeScript (the diagnostics rows' file) holding two undefined
    names."""
    return _typescript(size) + "export const broken = [missingOne, missingTwo];\n"


SCENARIOS: list[Scenario] = [
    *judged_rows("js_problems", corpus,
                 "no-undef: introduced reads found, zod/ajv/npm edit corpus",
                 "no-undef: neutral edits with one marked introduced (of 300)"),
    *cost_rows("js_problems", ("file.patch, 4 KiB TypeScript with problems (oxlint)",
                               "file.patch, 200 KiB TypeScript with problems (oxlint)"),
               "the same patch with --oxlint none (syntax only)", ".ts", _with_problems, ";",
               "--oxlint", "none"),
]

if __name__ == "__main__":
    print(corpus())
