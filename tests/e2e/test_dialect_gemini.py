"""The `gemini` tool set (docs/protocol.md, "Tool set `gemini`") over the real server and
plain JSON-RPC: Gemini CLI's read_file, write_file, replace, glob, grep_search,
list_directory and read_many_files with their current parameters and the harness's texts;
a table of cases per tool, the search tools on both engines, bad input for every parameter
(a clear error, nothing written)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_support import tool_set_server
from rpc_client import REPO, RpcServer, error_code, snapshot

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 20
APP = "import os\n\ndef main():\n    return os.getcwd()\n\n\nMAIN = 1\n"


def _build(root: Path) -> None:
    (root / "src/sub").mkdir(parents=True)
    (root / "src/app.py").write_text(APP)
    (root / "src/sub/util.ts").write_text("// TODO one\nexport const Main = 2;\n")
    (root / "README.md").write_text("intro\nTODO: two\nend\n")
    (root / "img.png").write_bytes(PNG)
    (root / "bin.dat").write_bytes(b"\0\1\2")
    (root / ".hidden.txt").write_text("TODO hidden\n")
    (root / ".gitignore").write_text("build/\nnode_modules/\n")
    (root / "build").mkdir()
    (root / "build/out.txt").write_text("TODO built\n")
    (root / "node_modules/pkg").mkdir(parents=True)
    (root / "node_modules/pkg/index.js").write_text("TODO dep\n")
    (root / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 2501)))
    old = time.time() - 3 * 86400
    os.utime(root / "README.md", (old, old))


@pytest.fixture(scope="module", params=["ripgrep", "python"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[RpcServer]:
    """A gemini-set server on a tree no test changes, once per search engine."""
    root = tmp_path_factory.mktemp("gemini")
    _build(root)
    with tool_set_server(root, "gemini", request.param) as srv:
        yield srv


@pytest.fixture
def editor(tmp_path: Path) -> Iterator[RpcServer]:
    _build(tmp_path)
    with RpcServer(tmp_path, "--tools", "gemini", "--workers", "2") as srv:
        srv.root = tmp_path  # type: ignore[attr-defined]
        yield srv


def _out(srv: RpcServer, method: str, **params: Any) -> str:
    return srv.result(method, params)["output"]


def _err(srv: RpcServer, method: str, **params: Any) -> dict[str, Any]:
    return srv.error(method, params)


# read_file --------------------------------------------------------------------------------

def test_read_file_is_the_plain_text(server: RpcServer) -> None:
    got = server.result("read_file", {"file_path": "src/app.py"})
    assert got["output"] == APP.rstrip("\n")
    assert (got["start_line"], got["end_line"], got["total_lines"]) == (1, 7, 7)


def test_absolute_paths_inside_are_accepted_and_never_echoed(server: RpcServer) -> None:
    root = server.root  # type: ignore[attr-defined]
    assert _out(server, "read_file", file_path=str(root / "src/app.py")) == APP.rstrip("\n")
    for method, params in [("read_file", {"file_path": str(root / "img.png")}),
                           ("list_directory", {"dir_path": str(root)}),
                           ("glob", {"pattern": "*.md", "dir_path": str(root)}),
                           ("grep_search", {"pattern": "TODO", "dir_path": str(root)})]:
        got = server.result(method, params)
        assert str(root) not in got["output"], got["output"]


def test_edits_by_absolute_path_answer_with_relative_ones(editor: RpcServer) -> None:
    root = str(editor.root)  # type: ignore[attr-defined]
    for method, params in [
            ("write_file", {"file_path": f"{root}/w.txt", "content": "a\n"}),
            ("replace", {"file_path": f"{root}/w.txt", "old_string": "a", "new_string": "b"}),
            ("replace", {"file_path": f"{root}/n.txt", "old_string": "", "new_string": "n"})]:
        got = editor.result(method, params)
        assert root not in got["output"] and got["path"] in got["output"], got


@pytest.mark.parametrize("params, shown, first, last, total", [
    ({"start_line": 3, "end_line": 4}, "def main():\n    return os.getcwd()", 3, 4, 7),
    ({"start_line": 7}, "MAIN = 1", 7, 7, 7),
])
def test_read_file_window_says_it_is_truncated(server: RpcServer, params: dict[str, Any],
                                               shown: str, first: int, last: int,
                                               total: int) -> None:
    out = _out(server, "read_file", file_path="src/app.py", **params)
    assert out == (f"\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines "
                   f"{first}-{last} of {total} total lines.\nAction: To read more of the "
                   "file, you can use the 'start_line' and 'end_line' parameters in a "
                   "subsequent 'read_file' call. For example, to read the next section of the "
                   f"file, use start_line: {last + 1}.\n\n--- FILE CONTENT (truncated) ---\n"
                   f"{shown}")


def test_read_file_shows_2000_lines_by_default(server: RpcServer) -> None:
    got = server.result("read_file", {"file_path": "long.txt"})
    assert got["end_line"] == 2000 and got["total_lines"] == 2500
    assert got["output"].endswith("line 2000") and "use start_line: 2001" in got["output"]


def test_read_file_image_is_an_image_block_over_mcp(server: RpcServer) -> None:
    got = server.result("read_file", {"file_path": "img.png"})
    assert got["mime_type"] == "image/png" and got["output"] == "Read image file: img.png"
    blocks = server.result("tools/call", {"name": "read_file", "arguments": {
        "file_path": "img.png"}})["content"]
    assert [b["type"] for b in blocks] == ["text", "image"]


@pytest.mark.parametrize("params, code, message", [
    ({"file_path": "nope.py"}, "file_not_found", "File not found: nope.py"),
    ({"file_path": "src"}, "is_directory", "Path is a directory, not a file: src"),
    ({"file_path": "bin.dat"}, "binary_file", ("Cannot display content of binary file: "
                                              "bin.dat")),
    ({"file_path": "../x"}, "path_outside_workspace", None),
    ({"file_path": "src/app.py", "start_line": 4, "end_line": 3}, "invalid_params",
     "start_line cannot be greater than end_line"),
])
def test_read_file_refusals(server: RpcServer, params: dict[str, Any], code: str,
                            message: str | None) -> None:
    err = _err(server, "read_file", **params)
    assert err["data"]["error"] == code
    if message:
        assert err["message"] == message


# write_file -------------------------------------------------------------------------------

def test_write_file_creates_then_overwrites(editor: RpcServer) -> None:
    root = editor.root  # type: ignore[attr-defined]
    assert _out(editor, "write_file", file_path="new/deep/n.txt", content="a\n") == (
        "Successfully created and wrote to new file: new/deep/n.txt.")
    assert _out(editor, "write_file", file_path="new/deep/n.txt", content="b\n") == (
        "Successfully overwrote file: new/deep/n.txt.")
    assert (root / "new/deep/n.txt").read_text() == "b\n"


# replace ----------------------------------------------------------------------------------

def test_replace_answers_with_the_updated_code(editor: RpcServer) -> None:
    root = editor.root  # type: ignore[attr-defined]
    got = editor.result("replace", {"file_path": "src/app.py", "instruction": "rename",
                                    "old_string": "MAIN = 1", "new_string": "MAIN = 2"})
    assert (root / "src/app.py").read_text() == APP.replace("MAIN = 1", "MAIN = 2")
    assert got["output"] == ("Successfully modified file: src/app.py (1 replacements). Here "
                             "is the updated code:\n...\n\ndef main():\n    return "
                             "os.getcwd()\n\n\nMAIN = 2")
    assert got["replacements"] == 1 and "+MAIN = 2" in got["diff"]


def test_replace_allow_multiple_replaces_every_occurrence(editor: RpcServer) -> None:
    root = editor.root  # type: ignore[attr-defined]
    (root / "m.txt").write_text("".join(f"x{n}\ny\n" for n in range(20)))
    got = editor.result("replace", {"file_path": "m.txt", "old_string": "y",
                                    "new_string": "z\nz", "allow_multiple": True})
    assert got["replacements"] == 20
    assert (root / "m.txt").read_text() == "".join(f"x{n}\nz\nz\n" for n in range(20))
    assert got["output"].endswith("x19\nz\nz")


def test_replace_with_empty_old_string_creates_a_file(editor: RpcServer) -> None:
    root = editor.root  # type: ignore[attr-defined]
    assert _out(editor, "replace", file_path="made.txt", old_string="",
                new_string="made\n") == "Created new file: made.txt with provided content."
    assert (root / "made.txt").read_text() == "made\n"
    err = _err(editor, "replace", file_path="made.txt", old_string="", new_string="again")
    assert err["data"]["error"] == "already_exists"
    assert err["message"].startswith("File already exists, cannot create: made.txt.")


@pytest.mark.parametrize("params, code, start", [
    ({"old_string": "return os.getcwd(", "new_string": "x"}, None, None),
    ({"old_string": "MAIN = 9", "new_string": "x"}, "find_not_found",
     ("Failed to edit, 0 occurrences found for old_string in src/app.py. Ensure you're not "
     "escaping content incorrectly and check whitespace, indentation, and context. Use "
     "read_file tool to verify. The closest region is lines 7-7")),
    ({"old_string": "\n\n", "new_string": "\n"}, "find_not_unique",
     ("Failed to edit, Expected 1 occurrence but found 3 for old_string in file: "
     "src/app.py. If you intended to replace multiple occurrences, set 'allow_multiple' "
     "to true. It occurs at lines [1, 4, 5].")),
    ({"old_string": "MAIN", "new_string": "MAIN"}, "invalid_params",
     ("No changes to apply. The old_string and new_string are identical in file: "
     "src/app.py")),
])
def test_replace_refusals_change_nothing(editor: RpcServer, params: dict[str, Any],
                                         code: str | None, start: str | None) -> None:
    root = editor.root  # type: ignore[attr-defined]
    reply = editor.call("replace", {"file_path": "src/app.py", **params})
    if code is None:  # a valid edit for contrast: the core's exact tier
        assert "result" in reply
        return
    assert error_code(reply) == code
    assert reply["error"]["message"].startswith(start)
    assert (root / "src/app.py").read_text() == APP


def test_replace_in_a_missing_file_says_how_to_create(editor: RpcServer) -> None:
    err = _err(editor, "replace", file_path="no.txt", old_string="a", new_string="b")
    assert err["data"]["error"] == "file_not_found"
    assert err["message"] == ("File not found: no.txt. Cannot apply edit. Use an empty "
                              "old_string to create a new file.")


def test_replace_goes_through_the_indentation_tier(editor: RpcServer) -> None:
    root = editor.root  # type: ignore[attr-defined]
    editor.result("replace", {"file_path": "src/app.py", "old_string": "def main():\n"
                              "  return os.getcwd()", "new_string": "def main():\n"
                              "  return os.sep"})
    assert (root / "src/app.py").read_text() == APP.replace("os.getcwd()", "os.sep")


# glob -------------------------------------------------------------------------------------

def test_glob_newest_first_then_by_path(server: RpcServer) -> None:
    got = server.result("glob", {"pattern": "**/*.*"})
    recent = [p for p in got["files"] if p != "README.md"]
    assert got["files"][-1] == "README.md"  # older than a day: after the recent ones
    assert set(recent) == {"src/app.py", "src/sub/util.ts", "img.png", "bin.dat",
                           "long.txt"}
    assert got["output"] == (f'Found {len(got["files"])} file(s) matching "**/*.*" within '
                             "., sorted by modification time (newest first):\n"
                             + "\n".join(got["files"]))


@pytest.mark.parametrize("params, files", [
    ({"pattern": "**/*.PY"}, ["src/app.py"]),
    ({"pattern": "**/*.PY", "case_sensitive": True}, []),
    ({"pattern": "*.ts", "dir_path": "src/sub"}, ["src/sub/util.ts"]),
    ({"pattern": "**/*.txt"}, ["long.txt"]),
    ({"pattern": "**/*.txt", "respect_git_ignore": False}, ["build/out.txt", "long.txt"]),
])
def test_glob_table(server: RpcServer, params: dict[str, Any], files: list[str]) -> None:
    got = server.result("glob", params)
    assert sorted(got["files"]) == files
    if not files:
        assert got["output"] == (f'No files found matching pattern "{params["pattern"]}" '
                                 "within .")


# grep_search (both engines) ---------------------------------------------------------------

def test_grep_search_text(server: RpcServer) -> None:
    assert _out(server, "grep_search", pattern="todo") == (
        'Found 2 matches for pattern "todo" in path ".":\n---\nFile: README.md\n'
        "L2: TODO: two\n---\nFile: src/sub/util.ts\nL1: // TODO one\n---")


@pytest.mark.parametrize("params, files, matches", [
    ({"pattern": "todo", "case_sensitive": True}, [], 0),
    ({"pattern": "TODO", "include_pattern": "*.ts"}, ["src/sub/util.ts"], 1),
    ({"pattern": "TODO", "no_ignore": True}, ["README.md", "build/out.txt",
                                              "node_modules/pkg/index.js",
                                              "src/sub/util.ts"], 4),
    ({"pattern": "TODO", "exclude_pattern": "one"}, ["README.md"], 1),
    ({"pattern": "o.", "fixed_strings": True}, [], 0),
    ({"pattern": "line \\d+", "total_max_matches": 3}, ["long.txt"], 3),
    ({"pattern": "TODO|main", "max_matches_per_file": 1},
     ["README.md", "src/app.py", "src/sub/util.ts"], 3),
    ({"pattern": "TODO", "dir_path": "src"}, ["src/sub/util.ts"], 1),
])
def test_grep_search_table(server: RpcServer, params: dict[str, Any], files: list[str],
                           matches: int) -> None:
    got = server.result("grep_search", params)
    assert sorted(got["files"]) == files and got["matches"] == matches
    assert got["engine"] == server.engine  # type: ignore[attr-defined]
    if not matches:
        assert got["output"].startswith(f'No matches found for pattern "{params["pattern"]}"')


def test_grep_search_names_only(server: RpcServer) -> None:
    assert _out(server, "grep_search", pattern="TODO", names_only=True) == (
        'Found 2 files with matches for pattern "TODO" in path ".":\nREADME.md\n'
        "src/sub/util.ts")


def test_regression_names_only_with_context_and_exclude_failed_inside(
        server: RpcServer) -> None:
    """Found by the params fuzzer at 20,000 examples: names_only asked rg for no context
    but read the lines as if it had, so a match below line 1 with `context` and an
    `exclude_pattern` (which needs the lines) was internal_error."""
    assert _out(server, "grep_search", pattern="TODO", names_only=True, context=1,
                exclude_pattern="two") == (
        'Found 1 files with matches for pattern "TODO" in path ".":\nsrc/sub/util.ts')
    assert _out(server, "grep_search", pattern="TODO", names_only=True, before=3,
                max_matches_per_file=1) == _out(server, "grep_search", pattern="TODO",
                                                names_only=True)


def test_grep_search_context_marks_context_lines(server: RpcServer) -> None:
    assert _out(server, "grep_search", pattern="getcwd", context=1) == (
        'Found 1 match for pattern "getcwd" in path ".":\n---\nFile: src/app.py\n'
        "L3- def main():\nL4:     return os.getcwd()\nL5- \n---")
    out = _out(server, "grep_search", pattern="getcwd", before=2, after=0)
    assert "L2- \nL3- def main():\nL4:     return os.getcwd()\n---" in out


def test_grep_search_limit_is_said(server: RpcServer) -> None:
    out = _out(server, "grep_search", pattern="line", total_max_matches=2)
    assert out.startswith('Found 2 matches for pattern "line" in path "." (results limited '
                          "to 2 matches for performance):")


# list_directory ---------------------------------------------------------------------------

def test_list_directory_directories_first(server: RpcServer) -> None:
    root = server.root  # type: ignore[attr-defined]
    sizes = {name: (root / name).stat().st_size for name in (".gitignore", "long.txt")}
    assert _out(server, "list_directory", dir_path=".") == (
        f"Directory listing for .:\n[DIR] src\n.gitignore ({sizes['.gitignore']} bytes)\n"
        ".hidden.txt (12 bytes)\nbin.dat (3 bytes)\nimg.png (28 bytes)\nlong.txt "
        f"({sizes['long.txt']} bytes)\nREADME.md (20 bytes)")


@pytest.mark.parametrize("params, names", [
    ({"dir_path": "src"}, ["sub", "app.py"]),
    ({"dir_path": ".", "ignore": ["*.txt"]},
     ["src", ".gitignore", "bin.dat", "img.png", "README.md"]),
    ({"dir_path": "build"}, ["out.txt"]),
    ({"dir_path": ".", "file_filtering_options": {"respect_git_ignore": False},
      "ignore": [".*", "*.*"]}, ["build", "node_modules", "src"]),
])
def test_list_directory_table(server: RpcServer, params: dict[str, Any],
                              names: list[str]) -> None:
    assert [e["name"] for e in server.result("list_directory", params)["entries"]] == names


# read_many_files --------------------------------------------------------------------------

def test_read_many_files_concatenates(server: RpcServer) -> None:
    got = server.result("read_many_files", {"include": ["src/", "README.md"]})
    assert got["files"] == ["README.md", "src/app.py", "src/sub/util.ts"]
    assert got["output"] == ("--- README.md ---\n\nintro\nTODO: two\nend\n\n"
                             f"--- src/app.py ---\n\n{APP.rstrip(chr(10))}\n\n"
                             "--- src/sub/util.ts ---\n\n// TODO one\nexport const Main = 2;"
                             "\n\n\n--- End of content ---")


@pytest.mark.parametrize("params, files", [
    ({"include": ["**/*.js"]}, []),
    ({"include": ["**/*.js"], "useDefaultExcludes": False}, []),
    ({"include": ["**/*.js"], "useDefaultExcludes": False,
      "file_filtering_options": {"respect_git_ignore": False}}, ["node_modules/pkg/index.js"]),
    ({"include": ["**/*.txt"], "exclude": ["long.*"]}, []),
    ({"include": ["*"]}, ["README.md", "long.txt"]),
    ({"include": ["../*", "/etc/*"]}, []),
])
def test_read_many_files_table(server: RpcServer, params: dict[str, Any],
                               files: list[str]) -> None:
    got = server.result("read_many_files", params)
    assert got["files"] == files
    if not files:
        assert got["output"] == ("No files matching the criteria were found or all were "
                                 "skipped.")


def test_read_many_files_skips_binaries_and_marks_long_files(server: RpcServer) -> None:
    got = server.result("read_many_files", {"include": ["*.*"]})
    assert {s["path"] for s in got["skipped"]} == {"bin.dat", "img.png"}
    assert "[WARNING: This file was truncated." in got["output"]


# bad input: a clear error naming the parameter, nothing written ---------------------------

BAD = [
    ("read_file", {}, "file_path"),
    ("read_file", {"file_path": 1}, "file_path"),
    ("read_file", {"file_path": "a", "start_line": 0}, "start_line"),
    ("read_file", {"file_path": "a", "end_line": "2"}, "end_line"),
    ("write_file", {"file_path": "w.txt"}, "content"),
    ("write_file", {"file_path": "w.txt", "content": 1}, "content"),
    ("write_file", {"content": "x"}, "file_path"),
    ("replace", {"file_path": "src/app.py", "old_string": "MAIN"}, "new_string"),
    ("replace", {"file_path": "src/app.py", "new_string": "x"}, "old_string"),
    ("replace", {"file_path": "src/app.py", "old_string": "MAIN", "new_string": "X",
                 "allow_multiple": "yes"}, "allow_multiple"),
    ("replace", {"file_path": "src/app.py", "old_string": "MAIN", "new_string": "X",
                 "instruction": 3}, "instruction"),
    ("glob", {}, "pattern"),
    ("glob", {"pattern": "*", "case_sensitive": 1}, "case_sensitive"),
    ("glob", {"pattern": "*", "respect_gemini_ignore": "no"}, "respect_gemini_ignore"),
    ("grep_search", {"pattern": "x", "context": -1}, "context"),
    ("grep_search", {"pattern": "x", "total_max_matches": 0}, "total_max_matches"),
    ("grep_search", {"pattern": "x", "max_matches_per_file": 0}, "max_matches_per_file"),
    ("grep_search", {"pattern": "x", "names_only": "true"}, "names_only"),
    ("grep_search", {"pattern": "x", "include_pattern": ["*.py"]}, "include_pattern"),
    ("list_directory", {}, "dir_path"),
    ("list_directory", {"dir_path": ".", "ignore": "*.py"}, "ignore"),
    ("list_directory", {"dir_path": ".", "file_filtering_options": {"x": True}},
     "file_filtering_options"),
    ("read_many_files", {"include": []}, "include"),
    ("read_many_files", {"include": [""]}, "include"),
    ("read_many_files", {"include": ["*"], "recursive": "no"}, "recursive"),
]


@pytest.mark.parametrize("method, params, param", BAD)
def test_bad_input_names_the_parameter_and_writes_nothing(editor: RpcServer, method: str,
                                                          params: dict[str, Any],
                                                          param: str) -> None:
    root = editor.root  # type: ignore[attr-defined]
    before = snapshot(root)
    err = editor.error(method, params)
    assert err["data"]["error"] == "invalid_params", err
    assert param in (err["data"].get("param") or "") or param in err["message"], err
    assert snapshot(root) == before


@pytest.mark.parametrize("method, params", [
    ("grep_search", {"pattern": "("}),
    ("grep_search", {"pattern": "x", "exclude_pattern": "("}),
    ("glob", {"pattern": "[z-a]"}),
])
def test_bad_patterns_are_invalid_pattern(server: RpcServer, method: str,
                                          params: dict[str, Any]) -> None:
    assert _err(server, method, **params)["data"]["error"] == "invalid_pattern"


def test_read_only_leaves_out_the_writers(tmp_path: Path) -> None:
    _build(tmp_path)
    with RpcServer(tmp_path, "--tools", "gemini", "--read-only") as srv:
        names = {t["name"] for t in srv.result("tools/list", {})["tools"]}
        assert names == {"read_file", "glob", "grep_search", "list_directory",
                         "read_many_files"}
        assert error_code(srv.call("write_file", {"file_path": "x", "content": ""})) == (
            "permission_denied")


def test_deny_hides_files_from_every_reader(tmp_path: Path) -> None:
    _build(tmp_path)
    with RpcServer(tmp_path, "--tools", "gemini", "--deny", "**/*.md") as srv:
        assert error_code(srv.call("read_file", {"file_path": "README.md"})) == (
            "permission_denied")
        assert "README.md" not in srv.result("read_many_files", {"include": ["*"]})["files"]
        assert "README.md" not in srv.result("grep_search", {"pattern": "TODO"})["files"]
        assert "README.md" not in srv.result("glob", {"pattern": "*"})["files"]


def test_clashing_sets_exit_2(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "chorus_tools", "--workspace",
                           str(tmp_path), "--tools", "scope,gemini"], check=False, cwd=REPO,
                          capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "read_file" in done.stderr
    with RpcServer(tmp_path, "--tools", "native,gemini,anthropic") as srv:
        names = {t["name"] for t in srv.result("tools/list", {})["tools"]}
        assert {"file_read", "read_file", "str_replace_editor"} <= names
