"""How many definitions the symbols find (issue 33): Python's `ast` on the standard
library, and universal-ctags on real code in each other language (its classes, structs,
interfaces, enums, traits, types, functions and methods), as the share of the oracle's
definitions that are symbols whose range holds the oracle's line.

The corpora are Debian's packages where the machine has them (golang-1.19-src,
librust-*-dev, openjdk-17-source, linux-libc-dev and libstdc++'s headers) and the
`typescript` npm package's lib/*.d.ts, installed into the cache; a corpus or ctags that is
missing skips its row, saying so.
"""

from __future__ import annotations

import ast
import glob
import json
import random
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Callable, Iterator

from benchmarks.env import Env
from benchmarks.mcp_reference import Unavailable
from benchmarks.report import Measure
from chorus_tools.tools.code.symbols import supported, symbols

# ctags' kind names that are a definition the issue counts (a union is C's struct kind)
COMPARED = {"class", "struct", "interface", "enum", "trait", "typedef", "alias", "talias",
            "type", "function", "func", "method", "methodSpec", "generator", "union",
            "annotation", "record"}
TYPESCRIPT = "typescript@5.6.3"
Tag = tuple[str, str, int]  # name, kind, line


def ctags_definitions(files: list[Path]) -> dict[str, list[Tag]]:
    """(name, kind, line) per path of what ctags reports, named as the symbols name it
    (the last part of a scoped name, `operator <<` without its space); ctags' invented
    names of anonymous types are left out. One ctags process for every file."""
    ctags = shutil.which("ctags")
    if ctags is None:
        raise Unavailable("universal-ctags is not installed (Debian: universal-ctags)")
    run = subprocess.run([ctags, "-f", "-", "--output-format=json", "--fields=+Kn", "-L", "-"],
                         input="\n".join(map(str, files)), capture_output=True, text=True)
    found: dict[str, list[Tag]] = {}
    for line in run.stdout.splitlines():
        try:
            tag = json.loads(line)
        except ValueError:
            continue
        if tag.get("_type") == "tag" and tag.get("kind") in COMPARED \
                and not tag["name"].startswith(("__anon", "AnonymousFunction")):
            name = tag["name"]
            if not name.startswith("["):  # a computed member is named by its source text
                name = name.rsplit(".", 1)[-1].rsplit("::", 1)[-1].replace(" ", "")
            found.setdefault(tag["path"], []).append((name, tag["kind"], tag["line"]))
    return found


def artefact(path: Path, lines: list[bytes], tag: Tag) -> bool:
    """A ctags 5.9 JavaScript "class" that is none: an object literal (`var o = {`, a
    key's `{`, even a local one) or a function given a prototype (`F.prototype.m = ...`),
    told by the `class` keyword missing from its line."""
    name, kind, line = tag
    return kind == "class" and path.suffix in (".js", ".mjs", ".cjs") and \
        b"class" not in (lines[line - 1] if 0 < line <= len(lines) else b"class")


def missed(path: Path, data: bytes, wanted: list[Tag]) -> list[Tag]:
    """The oracle's definitions that are no symbol whose range holds their line."""
    ours: dict[str, list[tuple[int, int]]] = {}
    for s in symbols(str(path), data):
        name = s.name.replace(" ", "")
        ours.setdefault(name, []).append((s.line, s.end_line))
        if name.startswith("#"):  # ctags 5.9 names a private member without its `#` too
            ours.setdefault(name[1:], []).append((s.line, s.end_line))
    return [(name, kind, line) for name, kind, line in wanted
            if not any(a <= line <= b for a, b in ours.get(name, ()))]


def ctags_recall(files: list[Path]) -> Measure:
    wanted = ctags_definitions(files)
    total = lost = 0
    examples: list[str] = []
    for path in files:
        data = path.read_bytes()
        lines = data.splitlines()
        tags = [t for t in wanted.get(str(path), ()) if not artefact(path, lines, t)]
        if not tags or supported(str(path), data) is None:
            continue
        gone = missed(path, data, tags)
        total += len(tags)
        lost += len(gone)
        examples += [f"{path}:{line} {kind} {name}" for name, kind, line in gone[:2]]
    if not total:
        raise Unavailable("ctags found no definition in the corpus")
    return Measure("share", (total - lost) / total, {
        "definitions": total, "missed": lost, "files": len(files),
        "missed_examples": examples[:10]})


def ast_recall(env: Env) -> Measure:
    """Every class, function and method `ast` finds in the standard library."""
    total = found = 0
    lost: list[str] = []
    files = sorted(env.stdlib.rglob("*.py"))
    for path in files:
        data = path.read_bytes()
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError):
            continue
        ranges: dict[str, list[tuple[int, int]]] = {}
        for s in symbols(str(path), data):
            ranges.setdefault(s.name, []).append((s.line, s.end_line))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                total += 1
                if any(a <= node.lineno <= b for a, b in ranges.get(node.name, ())):
                    found += 1
                elif len(lost) < 10:
                    lost.append(f"{path.relative_to(env.stdlib)}:{node.lineno} {node.name}")
    return Measure("share", found / total, {"definitions": total, "missed": total - found,
                                            "files": len(files), "missed_examples": lost})


def _sample(env: Env, paths: Iterator[Path]) -> list[Path]:
    files = sorted(p for p in paths if p.is_file())
    if not files:
        raise Unavailable("no files in the corpus")
    random.Random(33).shuffle(files)
    return files[:100 if env.quick else 1500]


def _corpus(*patterns: str) -> Callable[[Env], list[Path]]:
    def find(env: Env) -> list[Path]:
        return _sample(env, (Path(p) for pattern in patterns
                             for p in glob.glob(pattern, recursive=True)))
    return find


def _typescript(env: Env) -> list[Path]:
    lib = env.cache / "npm-typescript" / "node_modules" / "typescript" / "lib"
    if not lib.is_dir():
        npm = shutil.which("npm")
        if npm is None or not env.install:
            raise Unavailable(f"{TYPESCRIPT} not installed (npm, or --install)")
        subprocess.run([npm, "install", "--prefix", str(lib.parents[2]), "--no-audit",
                        "--no-fund", TYPESCRIPT], capture_output=True, check=False)
    return _sample(env, lib.glob("*.d.ts"))


def _java(env: Env) -> list[Path]:
    where = env.cache / "openjdk-17-src"
    if not where.is_dir():
        found = sorted(glob.glob("/usr/lib/jvm/*17*/lib/src.zip"))
        if not found:
            raise Unavailable("no OpenJDK 17 sources (Debian: openjdk-17-source)")
        with zipfile.ZipFile(found[0]) as archive:
            archive.extractall(where, [n for n in archive.namelist()
                                       if n.startswith("java.base/java/") and n.endswith(".java")])
    return _sample(env, where.rglob("*.java"))


CORPORA: dict[str, tuple[str, Callable[[Env], list[Path]]]] = {
    "go": ("Go's standard library (golang-1.19-src)", _corpus("/usr/share/go-*/src/**/*.go")),
    "rust": ("Rust crates (librust-*-dev)", _corpus("/usr/share/cargo/registry/**/*.rs")),
    "c": ("the kernel's headers (/usr/include/linux)", _corpus("/usr/include/linux/**/*.h")),
    "cpp": ("libstdc++'s headers (/usr/include/c++)", _corpus("/usr/include/c++/*/**/*.h")),
    "typescript": (f"{TYPESCRIPT}'s lib/*.d.ts", _typescript),
    "javascript": ("npm's own node_modules (`npm root -g`/npm/node_modules)",
                   _corpus("/usr/lib/node_modules/npm/node_modules/**/*.js")),
    "java": ("OpenJDK 17's java.base (openjdk-17-source)", _java),
}


def recall_of(language: str) -> Callable[[Env], Measure]:
    return lambda env: ctags_recall(CORPORA[language][1](env))
