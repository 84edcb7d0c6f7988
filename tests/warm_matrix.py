"""The parity suite's workspace of traps (issue 24) and the list/search questions asked of
it: every kind of entry, rule and content the walk, the search engines and a content index
treat specially, so a warm answer that cuts a corner shows."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from legacy_texts import TEXTS

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
        # a pattern without '/' (issue 35): at the top, or at any depth with recursive or
        # depth; an empty answer's hint counts **/PATTERN under the same rules
        {"pattern": "*.py", "recursive": True}, {"pattern": "*.py", "depth": 3},
        {"pattern": "mod_*", "depth": 2}, {"pattern": "*.md", "path": "src"},
        {"pattern": "*.tmp"}, {"pattern": "*.tmp", "include_ignored": True},
        {"pattern": "leaf_*", "exclude": "pkg1"}, {"pattern": "*.nothing"},
        {"pattern": ".*", "recursive": True}, {"pattern": "*.pem"},
        # a trailing '/' matches directories only; './' alone is no pattern
        {"pattern": "*/"}, {"pattern": "src/**/"}, {"pattern": "sub/", "recursive": True},
        {"pattern": "deep/"}, {"pattern": "./", "path": "src"},
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
        {"pattern": "cr only"}, {"pattern": "only$"}, {"pattern": "^three"},
        {"pattern": r"one\s"}, {"pattern": r"\Aunique_ident_7"},
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
        ("Glob", {"pattern": "*.py"}),
        ("Grep", {"pattern": "unique_ident_3"}),
        ("Grep", {"pattern": "todo", "-i": True, "output_mode": "count"}),
        ("Grep", {"pattern": "Widget", "glob": "*.py", "output_mode": "content", "-C": 1}),
        ("list_directory", {"dir_path": "."}), ("list_directory", {"dir_path": "docs"}),
        ("glob", {"pattern": "**/*.MD"}), ("glob", {"pattern": "**/*.py", "dir_path": "src"}),
        ("glob", {"pattern": "**/*", "respect_git_ignore": False}),
        ("glob", {"pattern": "*.py"}),
        ("grep_search", {"pattern": "unique_ident_1"}),
        ("grep_search", {"pattern": "TODO", "names_only": True, "no_ignore": True}),
        ("grep_search", {"pattern": "kelvin", "include_pattern": "*.txt"}),
    ]


def code_queries() -> list[Call]:
    """code.symbols, code.references, code.outline and code.map (issue 33): names in many
    files and in one, name paths, match modes, kinds, the selection's filters and start
    paths, limits, and what is no code."""
    symbols: list[dict[str, Any]] = [
        {"query": "Widget7"}, {"query": "render_7"}, {"query": "Widget", "match": "prefix"},
        {"query": "widget1", "match": "prefix", "case_sensitive": False},
        {"query": "ender_1", "match": "substring"}, {"query": "Widget7/render_7"},
        {"query": "/render_7"}, {"query": "/Widget7"}, {"query": "value"},
        {"query": "value", "kind": "variable", "max_results": 3},
        {"query": "render", "match": "prefix", "kind": "method", "max_results": 5},
        {"query": "Guide", "match": "prefix"}, {"query": "guide 3", "case_sensitive": False},
        {"query": "Widget", "match": "prefix", "glob": "*.py", "path": "src"},
        {"query": "Widget950"}, {"query": "Widget950", "include_hidden": True},
        {"query": "Widget900", "include_ignored": True}, {"query": "Widget701"},
        {"query": "Widget0", "path": "src/pkg0/mod_0.py"}, {"query": "Widget0", "path": "link_dir"},
        {"query": "zq_absent_qz"}, {"query": "x", "path": "missing"},
        {"query": "x", "path": "secrets"}, {"query": "Settings", "include_hidden": True},
    ]
    references: list[dict[str, Any]] = [
        {"name": "Widget7"}, {"name": "os"}, {"name": "value", "max_results": 4},
        {"name": "render_3", "include_definitions": True},
        {"name": "self", "path": "src/pkg1", "context_lines": 1},
        {"name": "Widget1", "glob": "!**/sub/**"}, {"name": "zq_absent_qz"},
        {"name": "x", "path": "missing"},
    ]
    outlines = ["src/pkg0/mod_0.py", "README.md", "d.py", "notes.txt", "data/blob.bin",
                "missing.py", "link_file.py", "src/.env"]
    maps: list[dict[str, Any]] = [
        {}, {"path": "src"}, {"max_bytes": 300}, {"focus": ["src/pkg1"]},
        {"focus": ["Widget3"], "max_bytes": 200}, {"glob": "*.md"}, {"path": "missing"}]
    return ([("code.symbols", q) for q in symbols]
            + [("code.references", q) for q in references]
            + [("code.outline", {"path": p}) for p in outlines]
            + [("code.map", q) for q in maps])


def matrix() -> list[Call]:
    return ([("file.list", q) for q in list_queries()]
            + [("file.search", q) for q in search_queries()] + dialect_queries()
            + code_queries())
