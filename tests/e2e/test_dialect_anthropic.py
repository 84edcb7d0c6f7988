"""The `anthropic` tool set (docs/protocol.md, "Tool set `anthropic`") over the real
server and plain JSON-RPC: Anthropic's text editor tool as `str_replace_based_edit_tool`
(text_editor_20250728) and `str_replace_editor` (text_editor_20250124, with undo_edit); a
table of cases per command, the reference implementation's texts, bad input for every
parameter (a clear error, nothing written), undo_edit after each kind of edit, --read-only
and the audit records."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rpc_client import RpcServer, error_code, snapshot

NEW = "str_replace_based_edit_tool"
OLD = "str_replace_editor"
SRC = "def f():\n\treturn 1\n\n\nclass A:\n\tpass\n"
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 20


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src/deep/deeper").mkdir(parents=True)
    (root / "a.py").write_text(SRC)
    (root / "src/deep/deeper/far.txt").write_text("far\n")
    (root / "src/b.txt").write_text("b\n")
    (root / ".hidden").mkdir()
    (root / ".hidden/x").write_text("x\n")
    (root / "src/.secret").write_text("s\n")
    (root / ".gitignore").write_text("ignored.txt\n")
    (root / "ignored.txt").write_text("i\n")
    (root / "img.png").write_bytes(PNG)
    return root


def serve(ws: Path, *args: str, tools: str = "anthropic") -> RpcServer:
    """A server with the history on where it is by default: the user's state directory
    (here one per test), so a second server on the workspace finds the first's."""
    return RpcServer(ws, "--tools", tools, "--workers", "2", *args,
                     env={"XDG_STATE_HOME": str(ws.parent / "state")})


@pytest.fixture
def srv(ws: Path) -> Iterator[RpcServer]:
    with serve(ws) as server:
        yield server


@pytest.fixture(params=["history", "memory"])
def both(ws: Path, request: pytest.FixtureRequest) -> Iterator[RpcServer]:
    """undo_edit from the history (the default), or with `--history 0` from the
    session's memory: each behaves alike within a session."""
    with serve(ws, *(() if request.param == "history" else ("--history", "0"))) as server:
        yield server


def _output(srv: RpcServer, method: str, **params: Any) -> str:
    return srv.result(method, params)["output"]


def _error(srv: RpcServer, method: str, **params: Any) -> dict[str, Any]:
    return srv.error(method, params)


def numbered(text: str, first: int = 1) -> str:
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(text.split("\n"), first))


def lines_of(text: str) -> list[str]:
    """A file's lines as a reader counts them (no empty line after the last break)."""
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


# view -------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", [NEW, OLD])
@pytest.mark.parametrize("view_range, first, last", [
    (None, 1, 6), ([2, 3], 2, 3), ([5, -1], 5, 6), ([6, 6], 6, 6), ([1, -1], 1, 6)])
def test_view_file_is_cat_n_of_the_range(srv: RpcServer, method: str, view_range: Any,
                                         first: int, last: int) -> None:
    params = {"command": "view", "path": "a.py"}
    if view_range is not None:
        params["view_range"] = view_range
    got = srv.result(method, params)
    lines = SRC.split("\n")[first - 1:last]
    assert got["output"] == (f"Here's the result of running `cat -n` on a.py:\n"
                             f"{numbered(chr(10).join(lines), first)}\n")
    assert got["path"] == "a.py" and isinstance(got["version"], str)


def test_view_keeps_tabs_as_they_are(srv: RpcServer) -> None:
    """The reference expands tabs when it shows a file; we show the bytes the model must
    copy into old_str."""
    assert "\t\treturn 1" in _output(srv, NEW, command="view", path="a.py")


@pytest.mark.parametrize("view_range, why", [
    ([0, 2], "Its first element `0` should be within the range of lines of the file"),
    ([7, -1], ("Its first element `7` should be within the range of lines of the file: "
              "[1, 6]")),
    ([2, 9], ("Its second element `9` should be smaller than the number of lines in the "
             "file: `6`")),
    ([3, 2], "Its second element `2` should be larger or equal than its first `3`"),
])
def test_view_range_errors_are_the_references(srv: RpcServer, view_range: list[int],
                                              why: str) -> None:
    err = _error(srv, NEW, command="view", path="a.py", view_range=view_range)
    assert err["data"]["error"] == "invalid_params"
    assert err["data"]["param"] == "view_range"
    assert err["message"] == f"Invalid `view_range`: {view_range}. {why}"


def test_view_max_characters_cuts_and_says_where_to_go_on(srv: RpcServer) -> None:
    out = _output(srv, NEW, command="view", path="a.py", max_characters=20)
    body = numbered(SRC.rstrip("\n"))[:20]
    assert out.startswith(f"Here's the result of running `cat -n` on a.py:\n{body}\n")
    assert "<response clipped>" in out
    assert f"view_range [{1 + body.count(chr(10))}, -1]" in out


def test_view_directory_two_levels_without_hidden(srv: RpcServer) -> None:
    out = _output(srv, OLD, command="view", path=".")
    header, *entries = out.rstrip("\n").split("\n")
    assert header == ("Here's the files and directories up to 2 levels deep in ., "
                      "excluding hidden items:")
    assert entries == [".", "a.py", "ignored.txt", "img.png", "src", "src/b.txt",
                       "src/deep"]


def test_view_subdirectory_lists_relative_paths(srv: RpcServer, ws: Path) -> None:
    out = _output(srv, NEW, command="view", path=str(ws / "src"))
    assert out.split("\n")[1:-1] == ["src", "src/b.txt", "src/deep", "src/deep/deeper"]


@pytest.mark.parametrize("params, code", [
    ({"path": "src", "view_range": [1, 2]}, "invalid_params"),
    ({"path": "missing.py"}, "file_not_found"),
    ({"path": "img.png"}, "binary_file"),
    ({"path": "../a.py"}, "path_outside_workspace"),
])
def test_view_refusals(srv: RpcServer, params: dict[str, Any], code: str) -> None:
    err = _error(srv, NEW, command="view", **params)
    assert err["data"]["error"] == code
    if code == "file_not_found":
        assert err["message"] == ("The path missing.py does not exist. Please provide a "
                                  "valid path.")


# create -----------------------------------------------------------------------------------

@pytest.mark.parametrize("method", [NEW, OLD])
def test_create_writes_a_new_file_with_its_parents(srv: RpcServer, ws: Path,
                                                   method: str) -> None:
    got = srv.result(method, {"command": "create", "path": "new/dir/n.py",
                              "file_text": "x = 1\n"})
    assert got["output"] == "File created successfully at: new/dir/n.py"
    assert (ws / "new/dir/n.py").read_text() == "x = 1\n"


def test_create_never_overwrites(srv: RpcServer, ws: Path) -> None:
    err = _error(srv, NEW, command="create", path="a.py", file_text="gone")
    assert err["data"]["error"] == "already_exists"
    assert err["message"] == ("File already exists at: a.py. Cannot overwrite files using "
                              "command `create`.")
    assert (ws / "a.py").read_text() == SRC


# str_replace ------------------------------------------------------------------------------

@pytest.mark.parametrize("method", [NEW, OLD])
def test_str_replace_answers_with_the_snippet(both: RpcServer, ws: Path, method: str) -> None:
    got = both.result(method, {"command": "str_replace", "path": "a.py",
                              "old_str": "class A:", "new_str": "class B:\n\t\"\"\"B.\"\"\""})
    after = SRC.replace("class A:", "class B:\n\t\"\"\"B.\"\"\"")
    assert (ws / "a.py").read_text() == after
    snippet = numbered("\n".join(lines_of(after)[0:11]), 1)
    assert got["output"] == (
        "The file a.py has been edited. Here's the result of running `cat -n` on a snippet "
        f"of a.py:\n{snippet}\nReview the changes and make sure they are as expected. Edit "
        "the file again if necessary.")
    assert "undo_state" not in got


def test_str_replace_keeps_every_other_tab(srv: RpcServer, ws: Path) -> None:
    """The reference rewrites the whole file with tabs expanded; only old_str changes."""
    srv.result(NEW, {"command": "str_replace", "path": "a.py", "old_str": "return 1",
                     "new_str": "return 2"})
    assert (ws / "a.py").read_text() == SRC.replace("return 1", "return 2")


def test_str_replace_without_new_str_deletes(srv: RpcServer, ws: Path) -> None:
    srv.result(NEW, {"command": "str_replace", "path": "a.py", "old_str": "\tpass\n"})
    assert (ws / "a.py").read_text() == SRC.replace("\tpass\n", "")


def test_str_replace_goes_through_the_core_tiers(srv: RpcServer, ws: Path) -> None:
    """Indentation differing by a uniform shift is the core's indentation tier; CRLF is
    kept; a latin-1 file stays latin-1."""
    srv.result(NEW, {"command": "str_replace", "path": "a.py", "old_str": "def f():\n"
                     "    return 1", "new_str": "def f():\n    return 3"})
    assert (ws / "a.py").read_text() == SRC.replace("return 1", "return 3")
    (ws / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    srv.result(NEW, {"command": "str_replace", "path": "crlf.txt", "old_str": "one\ntwo",
                     "new_str": "1\n2"})
    assert (ws / "crlf.txt").read_bytes() == b"1\r\n2\r\n"
    (ws / "latin.txt").write_bytes("caf\xe9 ol\xe9\n".encode("latin-1"))
    srv.result(NEW, {"command": "str_replace", "path": "latin.txt", "old_str": "ol\xe9",
                     "new_str": "s\xed"})
    assert (ws / "latin.txt").read_bytes() == "caf\xe9 s\xed\n".encode("latin-1")


def test_str_replace_not_found_is_the_reference_text_plus_the_hint(srv: RpcServer,
                                                                     ws: Path) -> None:
    err = _error(srv, NEW, command="str_replace", path="a.py", old_str="return 9",
                 new_str="x")
    assert err["data"]["error"] == "find_not_found"
    assert err["message"].startswith("No replacement was performed, old_str `return 9` did "
                                     "not appear verbatim in a.py. The closest region is "
                                     "lines 2-2")
    assert err["message"].endswith("; correct old_str from its text, which follows exactly "
                                   "as in the file:\n\treturn 1")
    assert err["data"]["hint"]["start_line"] == 2
    assert (ws / "a.py").read_text() == SRC


def test_str_replace_not_unique_names_the_lines(srv: RpcServer, ws: Path) -> None:
    (ws / "twice.py").write_text("x = 1\ny = 2\nx = 1\n")
    err = _error(srv, OLD, command="str_replace", path="twice.py", old_str="x = 1",
                 new_str="x = 2")
    assert err["data"]["error"] == "find_not_unique"
    assert err["message"] == ("No replacement was performed. Multiple occurrences of "
                              "old_str `x = 1` in lines [1, 3]. Please ensure it is unique")
    assert (ws / "twice.py").read_text() == "x = 1\ny = 2\nx = 1\n"


# insert -----------------------------------------------------------------------------------

BROKE = ("\nNote: this edit left 2 syntax errors: line 2: IndentationError: expected an "
         "indented block after function definition on line 1; line 4: IndentationError: "
         "unexpected indent")


@pytest.mark.parametrize("method, text_param", [(NEW, "insert_text"), (NEW, "new_str"),
                                                (OLD, "new_str")])
@pytest.mark.parametrize("line, text, after, note", [
    (0, "# top", "# top\n" + SRC, ""),
    (2, "\t# two\n", SRC.replace("return 1\n", "return 1\n\t# two\n"), ""),
    (6, "x = 1", SRC + "x = 1\n", ""),
    (1, "a\nb", SRC.replace("def f():\n", "def f():\na\nb\n"), BROKE),
    (3, "", SRC.replace("return 1\n\n", "return 1\n\n\n"), ""),
])
def test_insert_adds_whole_lines_after_the_line(srv: RpcServer, ws: Path, method: str,
                                                text_param: str, line: int, text: str,
                                                after: str, note: str) -> None:
    got = srv.result(method, {"command": "insert", "path": "a.py", "insert_line": line,
                              text_param: text})
    assert (ws / "a.py").read_text() == after
    first = max(1, line - 3)
    shown = lines_of(after)[first - 1:line + text.rstrip("\n").count("\n") + 1 + 4]
    assert got["output"] == (
        "The file a.py has been edited. Here's the result of running `cat -n` on a snippet "
        f"of the edited file:\n{numbered(chr(10).join(shown), first)}\nReview the "
        "changes and make sure they are as expected (correct indentation, no duplicate "
        "lines, etc). Edit the file again if necessary." + note)
    assert got["diagnostics"]["introduced"] == (2 if note else 0)


@pytest.mark.parametrize("before, line, after", [
    (b"a\r\nb\r\n", 1, b"a\r\nX\r\nY\r\nb\r\n"),  # the file's line endings
    (b"a\nb", 2, b"a\nb\nX\nY"),  # no final break before: none after
    (b"", 0, b"X\nY\n"),
])
def test_insert_keeps_the_files_line_endings(srv: RpcServer, ws: Path, before: bytes,
                                             line: int, after: bytes) -> None:
    (ws / "e.txt").write_bytes(before)
    srv.result(NEW, {"command": "insert", "path": "e.txt", "insert_line": line,
                     "insert_text": "X\nY\n"})
    assert (ws / "e.txt").read_bytes() == after


def test_insert_line_out_of_range_is_the_reference_text(srv: RpcServer, ws: Path) -> None:
    err = _error(srv, NEW, command="insert", path="a.py", insert_line=7, insert_text="x")
    assert err["data"]["error"] == "invalid_params" and err["data"]["param"] == "insert_line"
    assert err["message"] == ("Invalid `insert_line` parameter: 7. It should be within the "
                              "range of lines of the file: [0, 6]")
    assert (ws / "a.py").read_text() == SRC


# undo_edit --------------------------------------------------------------------------------

EDITS = {
    "create": ({"command": "create", "path": "made.py", "file_text": "m\n"}, "made.py"),
    "str_replace": ({"command": "str_replace", "path": "a.py", "old_str": "pass",
                     "new_str": "return"}, "a.py"),
    "insert": ({"command": "insert", "path": "a.py", "insert_line": 0, "new_str": "#"},
               "a.py"),
}


@pytest.mark.parametrize("edit", EDITS)
@pytest.mark.parametrize("editor", [NEW, OLD])
def test_undo_edit_after_each_kind_of_edit(both: RpcServer, ws: Path, edit: str,
                                           editor: str) -> None:
    """Any editor of the set edits; str_replace_editor's undo_edit puts the file back
    (a created file is removed); then there is nothing left to undo."""
    params, path = EDITS[edit]
    before = snapshot(ws)
    both.result(editor, params)
    assert snapshot(ws) != before
    got = both.result(OLD, {"command": "undo_edit", "path": path})
    assert got["output"].startswith(f"Last edit to {path} undone successfully.")
    assert {k: v[0] for k, v in snapshot(ws).items()} == {k: v[0] for k, v in before.items()}
    err = _error(both, OLD, command="undo_edit", path=path)
    assert err["message"].startswith(f"No edit history found for {path}.")


def test_undo_edit_steps_back_through_several_edits(both: RpcServer, ws: Path) -> None:
    for n in range(3):
        both.result(OLD, {"command": "insert", "path": "a.py", "insert_line": 0,
                         "new_str": f"# {n}"})
    for n in reversed(range(3)):
        got = both.result(OLD, {"command": "undo_edit", "path": "a.py"})
        want = "".join(f"# {k}\n" for k in reversed(range(n))) + SRC
        assert (ws / "a.py").read_text() == want
        assert got["output"].endswith(numbered(want.rstrip("\n")) + "\n")


def test_undo_edit_refuses_to_discard_a_change_made_since(both: RpcServer, ws: Path) -> None:
    both.result(OLD, {"command": "str_replace", "path": "a.py", "old_str": "pass",
                     "new_str": "return"})
    (ws / "a.py").write_text("changed by someone else\n")
    err = _error(both, OLD, command="undo_edit", path="a.py")
    assert err["data"]["error"] == "conflict"
    assert (ws / "a.py").read_text() == "changed by someone else\n"


def test_undo_edit_is_not_a_command_of_the_newer_tool(srv: RpcServer) -> None:
    err = _error(srv, NEW, command="undo_edit", path="a.py")
    assert err["data"]["error"] == "invalid_params" and err["data"]["param"] == "command"


def test_undo_edit_survives_a_server_restart(ws: Path) -> None:
    """The history outlives the server: an edit made in one process is undone in the
    next, and a third steps back past the edits and the undo the earlier ones made."""
    with serve(ws) as first:
        for n in range(2):
            first.result(OLD, {"command": "insert", "path": "a.py", "insert_line": 0,
                               "new_str": f"# {n}"})
    with serve(ws) as second:
        got = second.result(OLD, {"command": "undo_edit", "path": "a.py"})
        assert got["output"] == ("Last edit to a.py undone successfully. Here's the "
                                 "result of running `cat -n` on a.py:\n"
                                 f"{numbered(('# 0' + chr(10) + SRC).rstrip())}\n")
    with serve(ws) as third:
        third.result(OLD, {"command": "undo_edit", "path": "a.py"})
        assert (ws / "a.py").read_text() == SRC
        err = _error(third, OLD, command="undo_edit", path="a.py")
        assert err["message"].startswith("No edit history found for a.py.")


def test_undo_edit_after_an_undo_and_a_new_edit_walks_back_like_a_stack(srv: RpcServer,
                                                                         ws: Path) -> None:
    """Edit 0, edit 1, undo (back to 0), edit 2: undos now take off 2, then 0; edit 1,
    already undone, is never put back."""
    def insert(text: str) -> None:
        srv.result(OLD, {"command": "insert", "path": "a.py", "insert_line": 0,
                         "new_str": text})

    insert("# 0")
    insert("# 1")
    srv.result(OLD, {"command": "undo_edit", "path": "a.py"})
    insert("# 2")
    for want in ["# 0\n" + SRC, SRC]:
        srv.result(OLD, {"command": "undo_edit", "path": "a.py"})
        assert (ws / "a.py").read_text() == want
    assert _error(srv, OLD, command="undo_edit", path="a.py")["data"][
        "error"] == "invalid_params"


def test_undo_edit_refuses_after_a_change_by_another_tool_or_outside(ws: Path) -> None:
    """A change made since the edit, through this server but not by the editor (native
    file.write) or outside it, is not discarded: `conflict`, the file left alone; after
    a restart too."""
    with serve(ws, tools="anthropic,native") as srv:
        srv.result(OLD, {"command": "str_replace", "path": "a.py", "old_str": "pass",
                         "new_str": "return"})
        srv.result("file.write", {"path": "a.py", "content": "by file.write\n"})
        assert _error(srv, OLD, command="undo_edit", path="a.py")["data"][
            "error"] == "conflict"
        assert (ws / "a.py").read_text() == "by file.write\n"
        srv.result(OLD, {"command": "create", "path": "n.py", "file_text": "n\n"})
    (ws / "n.py").write_text("changed outside\n")
    with serve(ws) as srv:
        err = _error(srv, OLD, command="undo_edit", path="n.py")
        assert err["data"]["error"] == "conflict"
        assert err["message"].startswith("n.py changed since the last edit made through "
                                         "this server")
        assert (ws / "n.py").read_text() == "changed outside\n"


def test_undo_edit_is_kept_in_the_history_and_can_be_restored(ws: Path) -> None:
    """The undo is a restore: file.history lists it, under its own method name, and
    file.restore can put back what it undid."""
    with serve(ws, tools="anthropic,native") as srv:
        srv.result(OLD, {"command": "str_replace", "path": "a.py", "old_str": "pass",
                         "new_str": "return"})
        srv.result(OLD, {"command": "undo_edit", "path": "a.py"})
        assert (ws / "a.py").read_text() == SRC
        versions = srv.result("file.history", {"path": "a.py"})["versions"]
        assert [v["method"] for v in versions] == [f"{OLD}.undo_edit", OLD]
        srv.result("file.restore", {"path": "a.py", "version": versions[0]["version"]})
        assert (ws / "a.py").read_text() == SRC.replace("pass", "return")


def test_undo_memory_without_the_history_is_per_session(ws: Path) -> None:
    with serve(ws, "--history", "0") as first:
        first.result(OLD, {"command": "insert", "path": "a.py", "insert_line": 0,
                           "new_str": "#"})
    with serve(ws, "--history", "0") as second:
        assert second.error(OLD, {"command": "undo_edit", "path": "a.py"})["data"][
            "error"] == "invalid_params"


# bad input: a clear error naming the parameter, nothing written ---------------------------

BAD = [
    ({"path": "a.py"}, "command"),
    ({"command": "delete", "path": "a.py"}, "command"),
    ({"command": "view"}, "path"),
    ({"command": "view", "path": 3}, "path"),
    ({"command": "view", "path": ""}, "path"),
    ({"command": "view", "path": "a.py", "view_range": [1]}, "view_range"),
    ({"command": "view", "path": "a.py", "view_range": [1, "2"]}, "view_range"),
    ({"command": "view", "path": "a.py", "max_characters": 0}, "max_characters"),
    ({"command": "create", "path": "n.py"}, "file_text"),
    ({"command": "create", "path": "n.py", "file_text": 1}, "file_text"),
    ({"command": "create", "path": "n.py", "file_text": "x", "old_str": "y"}, "old_str"),
    ({"command": "str_replace", "path": "a.py", "new_str": "x"}, "old_str"),
    ({"command": "str_replace", "path": "a.py", "old_str": "", "new_str": "x"}, "old_str"),
    ({"command": "str_replace", "path": "a.py", "old_str": "pass", "new_str": "pass"},
     "new_str"),
    ({"command": "str_replace", "path": "a.py", "old_str": ["pass"]}, "old_str"),
    ({"command": "str_replace", "path": "a.py", "old_str": "pass", "new_str": None},
     "new_str"),
    ({"command": "str_replace", "path": "a.py", "old_str": "pass", "view_range": [1, 2]},
     "view_range"),
    ({"command": "insert", "path": "a.py", "insert_text": "x"}, "insert_line"),
    ({"command": "insert", "path": "a.py", "insert_line": -1, "insert_text": "x"},
     "insert_line"),
    ({"command": "insert", "path": "a.py", "insert_line": "1", "insert_text": "x"},
     "insert_line"),
    ({"command": "insert", "path": "a.py", "insert_line": 1}, "insert_text"),
    ({"command": "insert", "path": "a.py", "insert_line": 1, "insert_text": "a",
      "new_str": "b"}, "insert_text"),
    ({"command": "insert", "path": "a.py", "insert_line": 1, "insert_text": 5},
     "insert_text"),
    ({"command": "view", "path": "a.py", "undo_to": None}, "undo_to"),
    ({"command": "view", "path": "a.py", "bogus": 1}, "bogus"),
]


@pytest.mark.parametrize("params, param", BAD)
def test_bad_input_names_the_parameter_and_writes_nothing(srv: RpcServer, ws: Path,
                                                          params: dict[str, Any],
                                                          param: str) -> None:
    before = snapshot(ws)
    err = _error(srv, NEW, **params)
    assert err["data"]["error"] == "invalid_params", err
    assert param in (err["data"].get("param") or "") or param in err["message"], err
    assert snapshot(ws) == before


# the server's options ---------------------------------------------------------------------

def test_read_only_lists_the_editor_and_views_but_never_edits(ws: Path) -> None:
    with RpcServer(ws, "--tools", "anthropic", "--read-only") as srv:
        listed = [t["name"] for t in srv.result("tools/list", {})["tools"]]
        assert listed == [NEW, OLD]
        assert srv.result(NEW, {"command": "view", "path": "a.py"})["output"]
        for params in EDITS.values():
            assert error_code(srv.call(NEW, params[0])) == "permission_denied"
        assert error_code(srv.call(OLD, {"command": "undo_edit", "path": "a.py"})) == (
            "permission_denied")
        assert (ws / "a.py").read_text() == SRC and not (ws / "made.py").exists()


def test_deny_covers_every_command(ws: Path) -> None:
    with RpcServer(ws, "--tools", "anthropic", "--deny", "**/*.py") as srv:
        for params in [{"command": "view", "path": "a.py"}, *(p for p, _ in EDITS.values())]:
            assert error_code(srv.call(OLD, params)) == "permission_denied", params
        assert "a.py" not in srv.result(NEW, {"command": "view", "path": "."})["output"]


def test_records_hold_the_edits_and_not_the_views(ws: Path, tmp_path: Path) -> None:
    records = tmp_path / "records"
    with RpcServer(ws, "--tools", "anthropic", "--records", str(records)) as srv:
        srv.result(NEW, {"command": "view", "path": "a.py"})
        srv.result(OLD, {"command": "insert", "path": "a.py", "insert_line": 0,
                         "new_str": "#"})
        srv.result(OLD, {"command": "undo_edit", "path": "a.py"})
        srv.error(NEW, {"command": "create", "path": "a.py", "file_text": "x"})
    rows = [json.loads(line) for line in (records / "records.jsonl").read_text().splitlines()]
    assert [(r["method"], r["outcome"]) for r in rows] == [
        (OLD, "ok"), (OLD, "ok"), (NEW, "already_exists")]
    assert rows[0]["sha256_before"] == rows[1]["sha256_after"]


def test_absolute_paths_inside_are_accepted_and_never_echoed(both: RpcServer, ws: Path) -> None:
    """docs/protocol.md, "Paths": results name workspace-relative paths, whatever form the
    client used."""
    root = str(ws)
    for method, params in [
            (NEW, {"command": "view", "path": f"{root}/a.py"}),
            (NEW, {"command": "view", "path": root}),
            (NEW, {"command": "create", "path": f"{root}/abs.py", "file_text": "x\n"}),
            (NEW, {"command": "str_replace", "path": f"{root}/abs.py", "old_str": "x",
                   "new_str": "y"}),
            (NEW, {"command": "insert", "path": f"{root}/abs.py", "insert_line": 1,
                   "insert_text": "z"}),
            (OLD, {"command": "undo_edit", "path": f"{root}/abs.py"})]:
        got = both.result(method, params)
        assert root not in json.dumps(got), got
    assert (ws / "abs.py").read_text() == "y\n"
