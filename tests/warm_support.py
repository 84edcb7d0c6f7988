"""The warm/cold parity harness of issue 24: one workspace full of traps, a WARM server
(default options: the warm tree and the content index) and a COLD one (`--index-memory 0`:
every call walks) on it with the same engine and `--deny`, and a comparison of their full
answers, byte for byte, to the same request sent to both at the same moment."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Iterator

from legacy_texts import TEXTS
from rpc_client import RpcServer

ENGINES = ("ripgrep", "python")
DENY = ("--deny", "**/.env", "--deny", "*.pem", "--deny", "secrets/**")
WORKERS = ("--workers", "2")
# the dialect listing and search tools, which read the tree through the same walk
DIALECTS = ("--tools", "claude,gemini")
READY_INDEX = {"ready", "partial", "off"}
Call = tuple[str, dict[str, Any]]

# Text that trips Unicode case folding: KELVIN SIGN (folds to k), long s (folds to s),
# dotted capital I (no simple folding), next to their ASCII look-alikes; letters whose
# case pairs differ in their UTF-8 bytes.
FOLDING = ("temperature in \u212aelvin\nmi\u017f\u017fion control\n\u0130stanbul office\n"
           "Ärger über Öl, naïve STRASSE straße Σοφία\n")
LONG_LINE = "x" * 150_000 + " needle_in_a_long_line " + "y" * 50_000 + "\n"


def _write(root: Path, rel: str, data: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)


def source(name: str, index: int) -> str:
    """A small source-like text: a unique identifier, common words, a class and a TODO."""
    return (f"# module {name}\nimport os\n\nclass Widget{index}:\n"
            f"    def render_{index}(self):\n        return 'unique_ident_{index}'\n\n"
            f"# TODO: the common word appears in many files\nvalue = {index} * 2\n")


def build_tree(ws: Path, outside: Path) -> None:
    """The parity workspace: every kind of entry and rule the walk and the search treat
    specially, so a warm answer that cuts a corner differs from the cold one."""
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "canary.txt").write_text("CANARY_OUTSIDE\n")
    for i in range(12):
        _write(ws, f"src/pkg{i % 3}/mod_{i}.py", source(f"mod_{i}", i))
        _write(ws, f"src/pkg{i % 3}/sub/deep/leaf_{i}.py", source(f"leaf_{i}", 100 + i))
    for i in range(6):
        _write(ws, f"docs/guide_{i}.md", f"# Guide {i}\n\nTODO write guide {i}\n"
                                         f"See Widget{i} and render_{i}.\n")
    _write(ws, "README.md", "# Parity\nTODO: nothing\nfoo|bar baz\nThe End\n")
    _write(ws, "notes.txt", "alpha beta\ngamma\nalpha beta gamma delta\n")
    # ignore files at several levels, with negations
    _write(ws, ".gitignore", "*.log\n!keep.log\nbuild/\n/out\nnode_modules/\n")
    _write(ws, "app.log", "TODO ignored log\n")
    _write(ws, "keep.log", "TODO kept log\n")
    _write(ws, "build/gen.py", source("gen", 900))
    _write(ws, "out/result.txt", "TODO out\n")
    _write(ws, "sub/out/result.txt", "TODO not ignored: /out is anchored\n")
    _write(ws, "node_modules/pkg/index.js", "// TODO vendored\nmodule.exports = 1\n")
    _write(ws, "src/.gitignore", "*.tmp\n!important.tmp\n")
    _write(ws, "src/scratch.tmp", "TODO scratch\n")
    _write(ws, "src/important.tmp", "TODO important\n")
    _write(ws, "docs/.ignore", "draft*\n!draft_final.md\n")
    _write(ws, "docs/draft_1.md", "TODO draft\n")
    _write(ws, "docs/draft_final.md", "TODO final draft\n")
    _write(ws, ".rgignore", "scratch/\n!.github/\n")
    _write(ws, "scratch/s.txt", "TODO scratch dir\n")
    _write(ws, "src/pkg1/.rgignore", "sub/\n")
    # hidden entries, one re-included by a negation
    _write(ws, ".hidden.txt", "TODO hidden\n")
    _write(ws, ".config/settings.md", "# settings\nTODO hidden dir\n")
    _write(ws, ".github/workflow.yml", "on: push # TODO\n")
    _write(ws, "src/.secret.py", source("secret", 950))
    # denied paths (--deny)
    _write(ws, ".env", "TODO=denied\n")
    _write(ws, "src/.env", "TODO=denied\n")
    _write(ws, "keys/server.pem", "TODO denied pem\n")
    _write(ws, "secrets/token.txt", "TODO denied secret\n")
    # encodings and odd contents
    _write(ws, "data/blob.bin", b"\x00\x01binary_only_needle\x00TODO\n")
    _write(ws, "data/utf16.txt", "utf16_only_needle TODO\nsecond line\n".encode("utf-16"))
    _write(ws, "data/gbk.txt", TEXTS["zh_hans"].encode("gbk"))
    _write(ws, "data/crlf.txt", b"first line\r\nTODO crlf line\r\nlast\r\n")
    _write(ws, "data/empty.txt", b"")
    _write(ws, "data/long.txt", LONG_LINE)
    _write(ws, "data/folding.txt", FOLDING)
    _write(ws, "data/bom8.txt", "\ufeffbom8_needle TODO\n".encode())
    _write(ws, "data/cr_only.txt", b"one\rTODO cr only\rthree\r")
    _write(ws, "data/big.txt", "filler line of text\n" * 110_000 + "big_file_needle\n")
    _write(ws, "data/latin1.txt", "caf\xe9 na\xefve TODO\n".encode("latin-1"))
    # names with spaces and unicode; the d / d-old / d.py sort-order trap
    _write(ws, "dir with space/file name.md", "TODO spaced\n")
    _write(ws, "unicodé/naïve ☃.txt", "TODO snowman\n")
    _write(ws, "Ärger.md", "TODO umlaut\n")
    _write(ws, "d/x.py", source("d_x", 700))
    _write(ws, "d.py", source("d_py", 701))
    _write(ws, "d-old", "TODO d-old\n")
    _write(ws, "d-old.md", "TODO d-old md\n")
    _write(ws, "Readme.md", "TODO case twin\n")
    _write(ws, "new\nline.txt", "TODO a newline in the name\n")
    _write(ws, "/".join(f"n{i}" for i in range(24)) + "/bottom.py", "TODO deep bottom\n")
    _write(ws, ".chorus-tmp-outsider", "TODO a reserved name made by someone else\n")
    _write(ws, "src/.chorus-tmp-x/y.py", source("reserved", 960))
    fd = os.open(os.fsencode(ws / "data") + b"/bad\xffname.txt", os.O_CREAT | os.O_WRONLY)
    os.write(fd, b"TODO a name that is not UTF-8\n")
    os.close(fd)
    # symlinks (a loop too) and a FIFO
    os.symlink("loop_b", ws / "loop_a")
    os.symlink("loop_a", ws / "loop_b")
    os.symlink("src/pkg0/mod_0.py", ws / "link_file.py")
    os.symlink("src", ws / "link_dir")
    os.symlink("nowhere/at/all", ws / "dangling")
    os.symlink(os.path.relpath(outside / "canary.txt", ws), ws / "leads_out.txt")
    os.symlink(str(outside), ws / "abs_out")
    os.symlink(str(ws / "docs"), ws / "abs_inside")
    os.mkfifo(ws / "pipe")
    _write(ws, "sizes/small.txt", "TODO 1\n")
    _write(ws, "sizes/big.txt", "TODO big\n" * 400)
    os.utime(ws / "sizes/small.txt", ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    os.utime(ws / "sizes/big.txt", ns=(1_500_000_000_000_000_000, 1_500_000_000_000_000_000))


def list_queries() -> list[dict[str, Any]]:
    """file.list params: patterns, recursion, depth, exclude, hidden/ignored, sorts, caps."""
    queries: list[dict[str, Any]] = [
        {}, {"path": "src"}, {"path": "d"}, {"path": ""}, {"path": "link_dir"},
        {"pattern": "**/*.md"}, {"pattern": "**"}, {"pattern": "src/**/*.py"}, {"pattern": "*"},
        {"pattern": "*.py"}, {"pattern": "d*"}, {"pattern": "**/{d,d.py,d-old}"},
        {"pattern": "./docs/*.md"}, {"pattern": "**/*.txt", "path": "data"},
        {"pattern": "**/leaf_?.py", "path": "src"}, {"pattern": "**/[a-d]*"},
        {"recursive": True}, {"recursive": True, "path": "src/pkg1"},
        {"depth": 1}, {"depth": 2}, {"depth": 2, "pattern": "**/*.py"},
        {"recursive": True, "exclude": "pkg2"}, {"recursive": True, "exclude": ["*.md", "data"]},
        {"recursive": True, "exclude": "src/pkg0/sub"},
        {"recursive": True, "include_hidden": True},
        {"recursive": True, "include_ignored": True},
        {"recursive": True, "include_hidden": True, "include_ignored": True},
        {"pattern": "**/*.tmp", "include_ignored": True}, {"pattern": "**/.*"},
        {"pattern": "**/.*", "include_hidden": True}, {"path": "node_modules"},
        {"path": "node_modules", "recursive": True}, {"path": "build"}, {"path": ".config"},
        {"recursive": True, "sort": "modified"}, {"recursive": True, "sort": "size"},
        {"sort": "size", "path": "sizes"}, {"sort": "modified", "path": "sizes"},
        {"recursive": True, "max_results": 3}, {"pattern": "**", "max_results": 1},
        {"recursive": True, "sort": "size", "max_results": 5},
        {"recursive": True, "sort": "modified", "max_results": 4},
        {"path": "secrets"}, {"path": "keys", "recursive": True}, {"path": "missing"},
        {"path": "README.md"}, {"path": "dangling"}, {"path": "abs_out"}, {"path": "../x"},
    ]
    return queries


def search_queries() -> list[dict[str, Any]]:
    """file.search params: selective and common patterns, regex features, case folding,
    filters, start paths, output modes, context, multiline, caps, absent patterns."""
    patterns: list[dict[str, Any]] = [
        {"pattern": "unique_ident_7"}, {"pattern": "unique_ident_1"}, {"pattern": "TODO"},
        {"pattern": "import"}, {"pattern": r"class\s+Widget\d+"}, {"pattern": r"^# Guide"},
        {"pattern": r"line$"}, {"pattern": "render_(3|4|5)\\b"}, {"pattern": "(?i)todo"},
        {"pattern": r"[A-Z][a-z]+\d"}, {"pattern": "foo|bar"}, {"pattern": "a.b"},
        {"pattern": "foo|bar", "literal": True}, {"pattern": "unique_ident_(", "literal": True},
        {"pattern": "todo", "case_sensitive": False},
        {"pattern": "kelvin", "case_sensitive": False},
        {"pattern": "(?i)kelvin"}, {"pattern": "kel", "case_sensitive": False},
        {"pattern": "MISSION", "case_sensitive": False}, {"pattern": "(?i)miss"},
        {"pattern": "istanbul", "case_sensitive": False}, {"pattern": "İstanbul"},
        {"pattern": "\u212aelvin"}, {"pattern": "stanbul"},
        {"pattern": "TODO", "glob": "*.md"}, {"pattern": "TODO", "glob": ["!*.md", "!docs/**"]},
        {"pattern": "TODO", "glob": "src/**/*.py"}, {"pattern": "TODO", "type": "py"},
        {"pattern": "TODO", "type": ["md", "txt"]}, {"pattern": "TODO", "path": "src"},
        {"pattern": "TODO", "path": "src/pkg0/mod_0.py"}, {"pattern": "TODO", "path": "docs"},
        {"pattern": "TODO", "path": "link_dir"}, {"pattern": "TODO", "path": "link_file.py"},
        {"pattern": "TODO", "output_mode": "files_with_matches"},
        {"pattern": "TODO", "output_mode": "count"},
        {"pattern": "unique_ident", "output_mode": "count", "max_results": 3},
        {"pattern": "TODO", "context_lines": 2, "max_results": 40},
        {"pattern": "return", "before_context": 1, "after_context": 3},
        {"pattern": r"class Widget1\d*:\n\s+def", "multiline": True},
        {"pattern": r"(?s)TODO.*?value", "multiline": True, "max_results": 5},
        {"pattern": "TODO", "max_results": 2}, {"pattern": "TODO", "max_results": 1,
                                                 "output_mode": "files_with_matches"},
        {"pattern": "TODO", "include_hidden": True}, {"pattern": "TODO", "include_ignored": True},
        {"pattern": "TODO", "include_hidden": True, "include_ignored": True},
        {"pattern": "zq_absent_everywhere_qz"}, {"pattern": "zq_absent", "literal": True},
        {"pattern": "binary_only_needle"}, {"pattern": "utf16_only_needle"},
        {"pattern": "用户配置"}, {"pattern": "默认"}, {"pattern": "caf."}, {"pattern": "café"},
        {"pattern": "needle_in_a_long_line"}, {"pattern": "CANARY_OUTSIDE"},
        {"pattern": "denied"}, {"pattern": "TODO", "path": "secrets"},
        # patterns no index narrows: kept off data/big.txt, where they cost seconds
        {"pattern": "x", "glob": "!big.txt"}, {"pattern": ".", "glob": "!big.txt"},
        {"pattern": "ab"}, {"pattern": r"\w+_\d", "glob": "!big.txt"},
        {"pattern": r"(\w)\1", "glob": "!big.txt"},
        {"pattern": "(unclosed"}, {"pattern": r"(?<=def )render"},
        {"pattern": "a\nb"}, {"pattern": "TODO", "path": "missing"},
        {"pattern": "bom8_needle"}, {"pattern": "^bom8"}, {"pattern": "big_file_needle"},
        {"pattern": "cr only"},
        # what a content index must not narrow wrongly: non-ASCII case folding, escapes,
        # alternation, optional and zero-width parts, inline flags, verbose-mode comments
        {"pattern": "ärger", "case_sensitive": False}, {"pattern": "(?i)ÄRGER"},
        {"pattern": "NAÏVE", "case_sensitive": False}, {"pattern": "(?i)straße"},
        {"pattern": "(?i)strasse"}, {"pattern": "(?i)σοφ"},
        {"pattern": "ΣΟΦΊΑ", "case_sensitive": False},
        {"pattern": "KELVIN", "literal": True, "case_sensitive": False},
        {"pattern": r"\x4Belvin"}, {"pattern": r"K\x65lvin"}, {"pattern": r"(?i)\bkelvin\b"},
        {"pattern": "[k]elvin", "case_sensitive": False}, {"pattern": "(?i:KEL)vin"},
        {"pattern": "unique_ident_7|zq_absent_qz"}, {"pattern": "(unique_ident_7|zq_absent)"},
        {"pattern": "unique_ident_7(?:zzz)?"}, {"pattern": "(zzz)*unique_ident_7"},
        {"pattern": "unique_ident_7(zzz){0}"}, {"pattern": "unique_ident_7(zzz){0,2}"},
        {"pattern": "unique\\_ident_7"}, {"pattern": "unique.ident.7"},
        {"pattern": "(?x) unique _ident_7 # zzzcomment"}, {"pattern": "(?i)UNIQUE_IDENT_7"},
        {"pattern": "(?i:UNIQUE)_ident_7"}, {"pattern": "UNIQUE(?i)_ident_7"},
        {"pattern": "unique_ident_7", "case_sensitive": False, "literal": True},
        {"pattern": "[u]nique_ident_[7]"}, {"pattern": "unique_(ident|zzz)_7"},
        {"pattern": r"Widget\d+:\n\s+def", "multiline": True, "output_mode": "count"},
        {"pattern": "TODO$"}, {"pattern": "^TODO"}, {"pattern": r"\bTODO\b", "max_results": 5},
    ]
    return patterns


def dialect_queries() -> list[Call]:
    """The claude and gemini sets' listing and search tools."""
    return [
        ("LS", {"path": "."}), ("LS", {"path": "src", "ignore": ["pkg1"]}),
        ("LS", {"path": "link_dir"}), ("Glob", {"pattern": "**/*.py"}),
        ("Glob", {"pattern": "**/*"}), ("Glob", {"pattern": "*.md", "path": "docs"}),
        ("Grep", {"pattern": "unique_ident_3"}),
        ("Grep", {"pattern": "todo", "-i": True, "output_mode": "count"}),
        ("Grep", {"pattern": "Widget", "glob": "*.py", "output_mode": "content", "-C": 1}),
        ("list_directory", {"dir_path": "."}), ("list_directory", {"dir_path": "docs"}),
        ("glob", {"pattern": "**/*.MD"}), ("glob", {"pattern": "**/*.py", "dir_path": "src"}),
        ("glob", {"pattern": "**/*", "respect_git_ignore": False}),
        ("grep_search", {"pattern": "unique_ident_1"}),
        ("grep_search", {"pattern": "TODO", "names_only": True, "no_ignore": True}),
        ("grep_search", {"pattern": "kelvin", "include_pattern": "*.txt"}),
    ]


def matrix() -> list[Call]:
    return ([("file.list", q) for q in list_queries()]
            + [("file.search", q) for q in search_queries()] + dialect_queries())


def canonical(reply: dict[str, Any]) -> str:
    """The part of a reply parity compares (its result or its error), as sorted-key JSON."""
    body = {"result": reply["result"]} if "result" in reply else {"error": reply["error"]}
    return json.dumps(body, sort_keys=True)


def describe(warm: str, cold: str) -> str:
    """Where two canonical answers part: per field, the entries only one side has (or
    the same entries in another order), else both values."""
    w, c = json.loads(warm), json.loads(cold)
    if w.keys() != c.keys():
        return f"warm: {warm[:600]}\n    cold: {cold[:600]}"
    (kind, w), (_, c) = next(iter(w.items())), next(iter(c.items()))
    parts = []
    for key in sorted(set(w) | set(c)):
        a, b = w.get(key), c.get(key)
        if a == b:
            continue
        if isinstance(a, list) and isinstance(b, list):
            only_w = [x for x in a if x not in b][:4]
            only_c = [x for x in b if x not in a][:4]
            parts.append(f"{kind}.{key}: " + (f"warm only {only_w}, cold only {only_c}"
                                              if only_w or only_c else "same, other order"))
        else:
            parts.append(f"{kind}.{key}: warm {str(a)[:300]}, cold {str(b)[:300]}")
    return "\n    ".join(parts)


def report(calls: list[Call], answers: list[tuple[str, str]], context: str = "") -> list[str]:
    """One readable entry per call whose two answers differ."""
    return [f"{context}{method} {json.dumps(params)}\n    {describe(warm, cold)}"
            for (method, params), (warm, cold) in zip(calls, answers) if warm != cold]


class Pair:
    """A warm and a cold server on one workspace, asked the same things at once."""

    def __init__(self, ws: Path, engine: str, *extra: str) -> None:
        self.ws, self.engine = ws, engine
        common = ("--search-engine", engine, *WORKERS, *DENY, *DIALECTS, "--allow-root",
                  *extra)
        self.warm = RpcServer(ws, *common)
        self.cold = RpcServer(ws, *common, "--index-memory", "0")

    def ask(self, method: str, params: dict[str, Any]) -> tuple[str, str]:
        """Send the request to both before reading either answer: (warm, cold)."""
        warm_id = self.warm.request(method, params)
        cold_id = self.cold.request(method, params)
        warm, cold = self.warm.recv(60), self.cold.recv(60)
        assert warm["id"] == warm_id and cold["id"] == cold_id, (warm, cold)
        return canonical(warm), canonical(cold)

    def ask_all(self, calls: list[Call]) -> list[tuple[str, str]]:
        """Every request in flight on both servers at once (for a tree nobody changes
        meanwhile): (warm, cold) per call."""
        warm = self.warm.call_many(calls, timeout=120)
        cold = self.cold.call_many(calls, timeout=120)
        return [(canonical(w), canonical(c)) for w, c in zip(warm, cold)]

    def differences(self, calls: list[Call], context: str = "") -> list[str]:
        """One readable entry per call whose warm answer is not the cold one's, each call
        asked of both servers at the same moment."""
        return report(calls, [self.ask(method, params) for method, params in calls],
                      f"{context}{self.engine} ")

    def status(self) -> dict[str, Any]:
        """The warm server's workspace.status."""
        reply = self.warm.call("workspace.status", timeout=60)
        assert "result" in reply, reply
        return reply["result"]

    def wait_warm(self, guard: float = 60.0) -> dict[str, Any]:
        """Poll until the tree is ready and the index settled (a hang guard, not a timing
        check); the last status."""
        end = time.monotonic() + guard
        while True:
            status = self.status()
            if status["tree"] == "ready" and status["index"] in READY_INDEX:
                return status
            if time.monotonic() > end:
                raise TimeoutError(f"the warm server never got ready: {status}")
            time.sleep(0.02)

    def close(self) -> None:
        for server in (self.warm, self.cold):
            server.__exit__(None, None, None)


def assert_warm(pair: Pair) -> None:
    """The warm server really serves from its tree (else parity would be trivial)."""
    status = pair.status()
    assert status["tree"] == "ready", status


def paired(ws: Path, engine: str, *warm_args: str, ready: bool = True) -> Iterator[Pair]:
    """A fixture body: the pair on `ws` (`warm_args` given to both, the cold one's
    `--index-memory 0` last), warm and ready unless `ready` is False."""
    pair = Pair(ws, engine, *warm_args)
    try:
        if ready:
            pair.wait_warm()
        yield pair
    finally:
        pair.close()
