"""The syntax guard over the real server on input nested deeper than its parsers go (issue
36): a looser-tier patch of such a file is applied or refused with a proper error, never
`internal_error` (tomllib's RecursionError, Python's parser stack overflow), never a
syntax error the parser could not show (json's RecursionError), and never held up for a
minute (libyaml's time grows with the square of the depth)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rpc_client import RpcServer

DEPTH = 100_000
BRACKETS = "[" * DEPTH + "]" * DEPTH
TOML, YAML = f"deep = {BRACKETS}", f"deep: {BRACKETS}"
UNARY, SUM = "deep = " + "-" * DEPTH + "1", "deep = 1" + " + 1" * DEPTH
# (the file, a line of it, what the line becomes): first an edit beside the deep text,
# then an edit that writes it into a file that parsed
CASES = {
    "a.toml": [(f'name = "x"\n{TOML}\n', 'name = "x"', 'name = "y"'),
               ('name = "x"\n', 'name = "x"', TOML)],
    "a.json": [(f"[1,\n{BRACKETS}]\n", "[1,", "[2,"), ("[1]\n", "[1]", BRACKETS)],
    "a.yaml": [(f"name: x\n{YAML}\n", "name: x", "name: y"), ("name: x\n", "name: x", YAML)],
    "a.py": [(f"name = 'x'\n{UNARY}\n", "name = 'x'", "name = 'y'"),
             ("name = 'x'\n", "name = 'x'", UNARY)],
    "b.py": [(f"name = 'x'\n{SUM}\n", "name = 'x'", "name = 'y'"),
             ("name = 'x'\n", "name = 'x'", SUM)],
}


@pytest.mark.parametrize("name", CASES)
def test_regression_deeply_nested_file_made_a_looser_tier_patch_internal_error(
        tmp_path: Path, name: str) -> None:
    f = tmp_path / name
    with RpcServer(tmp_path, "--workers", "1") as srv:
        for text, line, new in CASES[name]:
            f.write_text(text)
            # trailing blanks: the indentation tier matches, so the guard parses the result
            got = srv.result("file.patch", {"path": name, "patches": [
                {"find": line + "   \n", "replace": new + "\n"}]})
            assert got["matches"][0]["tier"] == "indentation"
            assert f.read_text() == text.replace(line + "\n", new + "\n", 1)
