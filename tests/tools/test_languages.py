"""The one language table: every consumer (the guard, diagnostics, code by structure)
sees a file as the same language."""

from __future__ import annotations

import pytest

from chorus_tools.tools.code import languages
from chorus_tools.tools.code.languages import language_of, name_of
from chorus_tools.tools.patch import syntax
from chorus_tools.tools.patch.diagnostics import Judge


@pytest.mark.parametrize(("path", "expected"), [
    ("a.py", "python"), ("stubs/a.pyi", "python"), ("app.jsx", "javascript"),
    ("m.mjs", "javascript"), ("a.ts", "typescript"), ("v.tsx", "tsx"), ("main.go", "go"),
    ("lib.rs", "rust"), ("A.java", "java"), ("x.c", "c"), ("x.cc", "cpp"),
    ("x.hpp", "cpp"), ("x.hh", "cpp"), ("x.cxx", "cpp"), ("vec.tcc", "cpp"),
    ("impl.inl", "cpp"), ("README.md", "markdown"), ("A.PY", "python"),
    ("Makefile", "make"), ("rules.mk", "make"), ("a.json", "json"), ("c.toml", "toml"),
    ("d.yml", "yaml"), ("notes.txt", None), ("Dockerfile", None), ("LICENSE", None)])
def test_language_by_name(path: str, expected: str | None) -> None:
    found = language_of(path)
    assert (found.name if found else None) == expected


def test_header_is_c_unless_it_holds_cplusplus() -> None:
    c_header = b"/* licence */\n#ifndef X_H\n#define X_H\nstruct point { int x; };\n#endif\n"
    cpp_header = b"#pragma once\nnamespace geo {\nclass Point {};\n}\n"
    qualified = b"int f(void);\nint g() { return std::max(1, 2); }\n"
    assert language_of("x.h", c_header).name == "c"
    assert language_of("x.h", cpp_header).name == "cpp"
    assert language_of("x.h", qualified).name == "cpp"
    assert language_of("x.h").name == "cpp"  # nothing to read: the superset grammar


@pytest.mark.parametrize(("head", "expected"), [
    (b"#!/usr/bin/env python3\nprint(1)\n", "python"),
    (b"#!/usr/bin/python3.11 -u\n", "python"),
    (b"#!/usr/bin/env node\nconsole.log(1)\n", "javascript"),
    (b"#!/bin/sh\necho hi\n", None),
    (b"print(1)  # no shebang\n", None)])
def test_shebang_decides_an_extensionless_script(head: bytes, expected: str | None) -> None:
    found = language_of("bin/tool", head)
    assert (found.name if found else None) == expected
    assert language_of("tool.sh", head) is None  # a shebang never overrides a suffix


def test_unsupported_language_is_named_by_its_extension() -> None:
    assert name_of("a.json") == "json"
    assert name_of("x.kt") == "kt"
    assert name_of("Dockerfile") == "unknown"
    assert "json" not in languages.SUPPORTED and "python" in languages.SUPPORTED


def test_every_grammar_loads_and_parses() -> None:
    samples = {"python": b"def f():\n    return 1\n", "javascript": b"function f() {}\n",
               "typescript": b"let x: number = 1;\n", "tsx": b"const a = <b/>;\n",
               "go": b"package m\nfunc f() {}\n", "rust": b"fn f() {}\n",
               "java": b"class A {}\n", "c": b"int f(void) { return 0; }\n",
               "cpp": b"class A {};\n", "markdown": b"# Title\n\ntext\n"}
    languages.preload()
    for grammar, text in samples.items():
        tree = languages.parser(grammar).parse(text)
        assert not tree.root_node.has_error, grammar


def test_guard_judges_what_the_table_names() -> None:
    assert syntax.language_of("x.h", "struct s { int a; };\n") == "c"
    assert syntax.language_of("bin/run", "#!/usr/bin/env python\n") == "python"
    assert syntax.language_of("README.md") == "markdown"
    assert syntax.language_of("notes.txt") is None
    judge = Judge("bin/run", "#!/usr/bin/env python\nx = 1\n")
    assert judge.language == "python"
    assert judge.guard("#!/usr/bin/env python\nx = 1\n", "#!/usr/bin/env python\nx = (1\n",
                       "the change") is not None
