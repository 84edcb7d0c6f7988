"""The `claude` tool set (seed 001; `--tools` in docs/protocol.md) over the real server and
plain JSON-RPC: every tool, parameter and output field the seed names, its errors,
read-before-write sessions and notebooks; Grep on both search engines."""

from __future__ import annotations

import base64
import json
import os
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from e2e_support import tool_set_server
from rpc_client import RpcServer, error_code

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 40
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n"


def _tree(root: Path) -> None:
    files: dict[str, str | bytes] = {
        "src/app.py": "def main():\n    print('hello')\n    return 0\n",
        "src/util.py": "import os\nVALUE = 1\nvalue = 2\n",
        "src/web/page.ts": "export const hello = 1;\n",
        "docs/guide.md": "# Guide\nhello world\n",
        "notes.txt": "one\ntwo\nthree\nfour\nfive\n",
        "long.txt": "x" * 2500 + "\n",
        "img.png": PNG, "doc.pdf": PDF, "blob.bin": b"\0\1\2",
        ".gitignore": "build/\n", "build/out.py": "hello = 'ignored'\n",
        ".hidden.py": "hello = 'hidden'\n",
    }
    for rel, body in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body if isinstance(body, bytes) else body.encode())
    (root / "link.py").symlink_to("src/app.py")


@pytest.fixture(scope="module", params=["ripgrep", "python"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[RpcServer]:
    """A claude-set server on a tree nobody changes, once per search engine."""
    root = tmp_path_factory.mktemp("claude")
    _tree(root)
    with tool_set_server(root, "claude", request.param) as srv:
        yield srv


@pytest.fixture
def session(tmp_path: Path) -> Iterator[RpcServer]:
    """A fresh session (read-before-write state starts empty) on a tree of its own."""
    root = tmp_path / "ws"
    root.mkdir()
    _tree(root)
    with RpcServer(root, "--tools", "claude", "--workers", "2") as srv:
        srv.root = root  # type: ignore[attr-defined]
        yield srv


def _error(reply: dict[str, Any]) -> dict[str, Any]:
    assert "error" in reply, reply
    return reply["error"]["data"]


# Read ------------------------------------------------------------------------------------

def test_read_numbers_lines_like_cat_n(server: RpcServer) -> None:
    got = server.result("Read", {"file_path": "notes.txt"})
    assert got["content"] == "\n".join(f"{n:>6}\t{w}" for n, w in enumerate(
        ["one", "two", "three", "four", "five"], 1))
    assert (got["total_lines"], got["truncated"], got["encoding"]) == (5, False, "utf-8")
    assert got["version"]


@pytest.mark.parametrize("params, lines, truncated", [
    ({"offset": 2, "limit": 2}, [2, 3], True),
    ({"offset": 4}, [4, 5], False),
    ({"offset": 0, "limit": 1}, [1], True),  # 0 is the start, as the seed's tool reads it
    ({"limit": "2"}, None, None),  # claude's integers are integers
])
def test_read_offset_and_limit(server: RpcServer, params: dict, lines: list | None,
                               truncated: bool | None) -> None:
    reply = server.call("Read", {"file_path": "notes.txt", **params})
    if lines is None:
        assert _error(reply)["param"] == "limit"
        return
    got = reply["result"]
    assert (got["start_line"], got["end_line"], got["truncated"]) == (
        lines[0], lines[-1], truncated)


def test_read_accepts_an_absolute_path_inside(server: RpcServer) -> None:
    path = str(server.root / "notes.txt")  # type: ignore[attr-defined]
    assert server.result("Read", {"file_path": path})["total_lines"] == 5


def test_read_cuts_long_lines_at_2000(server: RpcServer) -> None:
    content = server.result("Read", {"file_path": "long.txt"})["content"]
    assert content.endswith("… [line truncated: showing 2000 of 2500 characters]")


def test_read_image_as_base64(server: RpcServer) -> None:
    got = server.result("Read", {"file_path": "img.png"})
    assert base64.b64decode(got["image"]) == PNG
    assert (got["mime_type"], got["size"]) == ("image/png", len(PNG))


@pytest.mark.parametrize("path, code", [
    ("doc.pdf", "binary_file"), ("blob.bin", "binary_file"), ("nope.txt", "file_not_found"),
    ("src", "is_directory"), ("../x", "path_outside_workspace")])
def test_read_refusals(server: RpcServer, path: str, code: str) -> None:
    assert error_code(server.call("Read", {"file_path": path})) == code


@pytest.mark.parametrize("params, param", [
    ({}, "file_path"), ({"file_path": "notes.txt", "path": "notes.txt"}, "path"),
    ({"file_path": ""}, "file_path"),  # the core's 'path', in the tool's name
    ({"file_path": "notes.txt", "offset": -1}, "offset")])
def test_read_bad_params(server: RpcServer, params: dict, param: str) -> None:
    data = _error(server.call("Read", params))
    assert (data["error"], data["param"]) == ("invalid_params", param)


# Notebooks -------------------------------------------------------------------------------

NOTEBOOK = {
    "nbformat": 4, "nbformat_minor": 5, "metadata": {},
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Title\n", "Some *text*."]},
        {"cell_type": "code", "metadata": {}, "execution_count": 1,
         "source": "print('hi')\n1 + 1", "outputs": [
             {"output_type": "stream", "name": "stdout", "text": ["hi\n"]},
             {"output_type": "execute_result", "execution_count": 1, "metadata": {},
              "data": {"text/plain": ["2"]}}]},
        {"cell_type": "code", "metadata": {}, "execution_count": 2, "source": "1/0",
         "outputs": [{"output_type": "error", "ename": "ZeroDivisionError",
                      "evalue": "division by zero",
                      "traceback": ["\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"]}]},
        {"cell_type": "code", "metadata": {}, "execution_count": 3, "source": "plot()",
         "outputs": [{"output_type": "display_data", "metadata": {},
                      "data": {"image/png": base64.b64encode(PNG).decode() + "\n",
                               "text/plain": ["<Figure>"]}}]},
    ],
}


def test_notebook_rendered_cell_by_cell(session: RpcServer) -> None:
    (session.root / "nb.ipynb").write_text(json.dumps(NOTEBOOK))  # type: ignore[attr-defined]
    got = session.result("Read", {"file_path": "nb.ipynb"})
    text = "\n".join(line.split("\t", 1)[1] for line in got["content"].split("\n"))
    assert text == "\n".join([
        "<cell 0 markdown>", "# Title", "Some *text*.",
        "<cell 1 code>", "print('hi')", "1 + 1",
        "<output 0 stream stdout>", "hi",
        "<output 1 execute_result>", "2",
        "<cell 2 code>", "1/0",
        "<output 0 error>", "ZeroDivisionError: division by zero",
        "<cell 3 code>", "plot()",
        "<output 0 display_data image/png: image 0>"])
    assert got["images"] == [{"cell": 3, "output": 0, "mime_type": "image/png",
                              "image": base64.b64encode(PNG).decode()}]
    assert got["version"] and got["total_lines"] == 17
    window = session.result("Read", {"file_path": "nb.ipynb", "offset": 4, "limit": 3})
    assert window["content"].split("\n")[0] == "     4\t<cell 1 code>"
    assert window["truncated"] is True and window["images"] == []  # not in the window


def test_a_notebook_that_is_not_json_reads_as_text(session: RpcServer) -> None:
    (session.root / "bad.ipynb").write_text("{not json\n")  # type: ignore[attr-defined]
    got = session.result("Read", {"file_path": "bad.ipynb"})
    assert got["content"] == "     1\t{not json" and "images" not in got


# Write, Edit, MultiEdit, Delete ----------------------------------------------------------

def test_write_creates_parents_and_skips_identical_content(session: RpcServer) -> None:
    root: Path = session.root  # type: ignore[attr-defined]
    got = session.result("Write", {"file_path": "new/deep/f.txt", "content": "a\r\nb"})
    assert got["created"] is True and got["bytes_written"] == 4
    assert (root / "new/deep/f.txt").read_bytes() == b"a\r\nb"
    again = session.result("Write", {"file_path": "new/deep/f.txt", "content": "a\r\nb"})
    assert again["version"] == got["version"] and again["created"] is False


def test_edit_replaces_one_occurrence_or_all(session: RpcServer) -> None:
    root: Path = session.root  # type: ignore[attr-defined]
    session.result("Read", {"file_path": "src/util.py"})
    data = _error(session.call("Edit", {"file_path": "src/util.py", "old_string": "= ",
                                        "new_string": ":= "}))
    assert (data["error"], data["count"], data["lines"]) == ("find_not_unique", 2, [2, 3])
    got = session.result("Edit", {"file_path": "src/util.py", "old_string": "= ",
                                  "new_string": ":= ", "replace_all": True})
    assert got["replacements"] == 2 and got["success"] is True and "diff" in got
    assert (root / "src/util.py").read_text() == "import os\nVALUE := 1\nvalue := 2\n"


def test_edit_matches_indentation_leniently(session: RpcServer) -> None:
    root: Path = session.root  # type: ignore[attr-defined]
    session.result("Read", {"file_path": "src/app.py"})
    got = session.result("Edit", {"file_path": "src/app.py",
                                  "old_string": "print('hello')\nreturn 0",
                                  "new_string": "print('bye')\nreturn 1"})
    assert got["matches"][0]["tier"] == "indentation"
    assert (root / "src/app.py").read_text() == (
        "def main():\n    print('bye')\n    return 1\n")


def test_edit_errors_speak_the_tools_names(session: RpcServer) -> None:
    session.result("Read", {"file_path": "notes.txt"})
    missing = _error(session.call("Edit", {"file_path": "notes.txt", "old_string": "thrice\nfour",
                                           "new_string": "x", "replace_all": False}))
    assert missing["error"] == "find_not_found" and missing["message"].startswith(
        "old_string was not found") and missing["hint"]["start_line"] == 3
    same = _error(session.call("Edit", {"file_path": "notes.txt", "old_string": "one",
                                        "new_string": "one"}))
    assert (same["error"], same["param"]) == ("invalid_params", "new_string")
    assert _error(session.call("Edit", {"file_path": "notes.txt", "old_string": "one"})
                  )["param"] == "new_string"


def test_multiedit_is_sequential_and_atomic(session: RpcServer) -> None:
    root: Path = session.root  # type: ignore[attr-defined]
    session.result("Read", {"file_path": "notes.txt"})
    got = session.result("MultiEdit", {"file_path": "notes.txt", "edits": [
        {"old_string": "one", "new_string": "uno"},
        {"old_string": "uno\ntwo", "new_string": "uno\ndos"},
        {"old_string": "f", "new_string": "F", "replace_all": True}]})
    assert got["patches_applied"] == 3 and got["replacements"] == 4
    before = (root / "notes.txt").read_text()
    assert before == "uno\ndos\nthree\nFour\nFive\n"
    data = _error(session.call("MultiEdit", {"file_path": "notes.txt", "edits": [
        {"old_string": "uno", "new_string": "1"}, {"old_string": "zzz", "new_string": "y"}]}))
    assert data["error"] == "find_not_found" and data["patch_index"] == 1
    assert data["message"].startswith("edits[1].old_string was not found")
    assert (root / "notes.txt").read_text() == before
    assert _error(session.call("MultiEdit", {"file_path": "notes.txt", "edits": []})
                  )["param"] == "edits"


def test_multiedit_creates_a_file_from_an_empty_first_old_string(session: RpcServer) -> None:
    root: Path = session.root  # type: ignore[attr-defined]
    got = session.result("MultiEdit", {"file_path": "fresh.py", "edits": [
        {"old_string": "", "new_string": "a = 1\nb = 2\n"},
        {"old_string": "b = 2", "new_string": "b = 3"}]})
    assert got["success"] is True
    assert (root / "fresh.py").read_text() == "a = 1\nb = 3\n"


@pytest.mark.parametrize("method, params", [
    ("Write", {"content": "x"}), ("Edit", {"old_string": "a", "new_string": "b"}),
    ("MultiEdit", {"edits": [{"old_string": "a", "new_string": "b"}]})])
def test_writers_on_a_directory_say_so_not_not_read(session: RpcServer, method: str,
                                                    params: dict) -> None:
    assert error_code(session.call(method, {"file_path": "src", **params})) == "is_directory"


def test_delete_needs_no_read(session: RpcServer) -> None:
    root: Path = session.root  # type: ignore[attr-defined]
    assert session.result("Delete", {"file_path": "notes.txt"}) == {"success": True}
    assert not (root / "notes.txt").exists()
    assert error_code(session.call("Delete", {"file_path": "notes.txt"})) == "file_not_found"
    assert error_code(session.call("Delete", {"file_path": "src"})) == "is_directory"


# Read before write -----------------------------------------------------------------------

def test_unread_file_is_not_read_and_nothing_changes(session: RpcServer) -> None:
    root: Path = session.root  # type: ignore[attr-defined]
    for method, params in [
            ("Write", {"content": "x"}),
            ("Edit", {"old_string": "one", "new_string": "1"}),
            ("MultiEdit", {"edits": [{"old_string": "one", "new_string": "1"}]})]:
        reply = session.call(method, {"file_path": "notes.txt", **params})
        assert reply["error"]["code"] == -32018, reply
        data = reply["error"]["data"]
        assert data["error"] == "not_read" and data["path"] == "notes.txt"
        assert "Read it first" in data["message"]
    assert (root / "notes.txt").read_text() == "one\ntwo\nthree\nfour\nfive\n"


@pytest.mark.parametrize("reader", [
    ("Read", {"file_path": "notes.txt"}),
    ("Read", {"file_path": "notes.txt", "offset": 4, "limit": 1}),  # a window counts
    ("file.read", {"path": "notes.txt"}),  # so does the native read
    ("Read", {"file_path": "./src/../notes.txt"}),  # the same file, spelled otherwise
])
def test_read_then_edit_succeeds(session: RpcServer, reader: tuple[str, dict]) -> None:
    session.result(*reader)
    got = session.result("Edit", {"file_path": "notes.txt", "old_string": "two",
                                  "new_string": "2"})
    assert got["replacements"] == 1
    again = session.result("Edit", {"file_path": "notes.txt", "old_string": "three",
                                    "new_string": "3"})  # its own edit counts as seen
    assert again["replacements"] == 1


def test_pipelined_read_then_edit_sees_the_read(session: RpcServer) -> None:
    """Sent together, the edit still starts after the read (the path's order) and so
    finds the version it remembered; the same for a write then an edit."""
    replies = session.call_many([
        ("Edit", {"file_path": "notes.txt", "old_string": "one", "new_string": "1"}),
        ("Read", {"file_path": "notes.txt"}),
        ("Edit", {"file_path": "notes.txt", "old_string": "one", "new_string": "1"}),
        ("Write", {"file_path": "piped.txt", "content": "a\n"}),
        ("Edit", {"file_path": "piped.txt", "old_string": "a", "new_string": "b"})])
    assert error_code(replies[0]) == "not_read"
    assert [error_code(r) for r in replies[1:]] == [None] * 4, replies
    assert (session.root / "piped.txt").read_text() == "b\n"  # type: ignore[attr-defined]


def test_changed_on_disk_since_read_is_conflict(session: RpcServer) -> None:
    root: Path = session.root  # type: ignore[attr-defined]
    seen = session.result("Read", {"file_path": "notes.txt"})["version"]
    time.sleep(0.01)
    (root / "notes.txt").write_text("changed elsewhere\n")
    for method, params in [("Edit", {"old_string": "changed", "new_string": "x"}),
                           ("Write", {"content": "mine\n"})]:
        data = _error(session.call(method, {"file_path": "notes.txt", **params}))
        assert data["error"] == "conflict" and data["expected_version"] == seen
        assert data["current_version"] != seen and "changed since" in data["message"]
    assert (root / "notes.txt").read_text() == "changed elsewhere\n"
    session.result("Read", {"file_path": "notes.txt"})
    assert session.result("Write", {"file_path": "notes.txt", "content": "mine\n"})


def test_own_write_then_edit(session: RpcServer) -> None:
    session.result("Write", {"file_path": "made.txt", "content": "alpha\n"})
    assert session.result("Edit", {"file_path": "made.txt", "old_string": "alpha",
                                   "new_string": "beta"})["replacements"] == 1
    assert session.result("Write", {"file_path": "made.txt", "content": "gamma\n"})
    session.result("file.write", {"path": "native.txt", "content": "n\n"})
    assert session.result("Edit", {"file_path": "native.txt", "old_string": "n",
                                   "new_string": "m"})


def test_a_read_file_deleted_since_is_new_again(session: RpcServer) -> None:
    root: Path = session.root  # type: ignore[attr-defined]
    session.result("Read", {"file_path": "notes.txt"})
    (root / "notes.txt").unlink()
    assert session.result("Write", {"file_path": "notes.txt", "content": "new\n"})["created"]
    session.result("Delete", {"file_path": "notes.txt"})
    (root / "notes.txt").write_text("someone else's\n")
    assert error_code(session.call("Write", {"file_path": "notes.txt", "content": "x"})
                      ) == "not_read"  # deleting forgot it: the new file is unread


def test_listings_do_not_count_as_reads(session: RpcServer) -> None:
    session.result("LS", {"path": "."})
    session.result("Grep", {"pattern": "one", "output_mode": "content"})
    session.result("file.info", {"path": "notes.txt"})
    assert error_code(session.call("Edit", {"file_path": "notes.txt", "old_string": "one",
                                            "new_string": "1"})) == "not_read"


def test_the_claude_tools_are_callable_only_with_the_set(tmp_path: Path) -> None:
    with RpcServer(tmp_path, "--workers", "1") as srv:
        reply = srv.call("Read", {"file_path": "x"})
        assert reply["error"]["code"] == -32601
        assert "Read" not in [m["name"] for m in srv.result("rpc.discover")["methods"]]
    with RpcServer(tmp_path, "--workers", "1", "--tools", "claude") as srv:
        names = [m["name"] for m in srv.result("rpc.discover")["methods"]]
        assert {"Read", "Write", "Edit", "MultiEdit", "Delete", "LS", "Glob", "Grep",
                "file.read"} <= set(names)


def test_records_name_the_file_path(tmp_path: Path) -> None:
    ws, records = tmp_path / "ws", tmp_path / "rec"
    ws.mkdir()
    records.mkdir()
    with RpcServer(ws, "--workers", "1", "--tools", "claude", "--records",
                   str(records)) as srv:
        srv.result("Write", {"file_path": "a.txt", "content": "x\n"})
        srv.call("Edit", {"file_path": "a.txt", "old_string": "zz", "new_string": "y"})
    lines = [json.loads(line) for line in (records / "records.jsonl").read_text().splitlines()]
    assert [(r["method"], r["path"], r["outcome"]) for r in lines] == [
        ("Write", "a.txt", "ok"), ("Edit", "a.txt", "find_not_found")]


# LS, Glob --------------------------------------------------------------------------------

def test_ls_entries_with_types_sizes_and_is_binary(server: RpcServer) -> None:
    got = server.result("LS", {"path": str(server.root)})  # type: ignore[attr-defined]
    entries = {e["name"]: e for e in got["entries"]}
    assert got["path"] == "." and got["truncated"] is False
    assert set(entries) == {"blob.bin", "doc.pdf", "docs", "img.png", "link.py",
                            "long.txt", "notes.txt", "src"}  # hidden, ignored left out
    assert entries["notes.txt"] == {"name": "notes.txt", "path": "notes.txt", "type": "file",
                                    "size": 24, "is_binary": False}
    assert entries["img.png"]["is_binary"] is True and entries["blob.bin"]["is_binary"]
    assert (entries["src"]["type"], entries["src"]["is_binary"]) == ("dir", None)
    assert entries["link.py"]["type"] == "symlink"
    sub = server.result("LS", {"path": "src", "ignore": ["*.ts", "web"]})
    assert [e["path"] for e in sub["entries"]] == ["src/app.py", "src/util.py"]


def test_glob_newest_first_files_only(session: RpcServer) -> None:
    root: Path = session.root  # type: ignore[attr-defined]
    now = time.time()
    for age, rel in enumerate(["docs/guide.md", "src/util.py", "src/app.py"]):
        os.utime(root / rel, (now - 100 * age, now - 100 * age))
    got = session.result("Glob", {"pattern": "**/*.{py,md}"})
    assert got == {"files": ["docs/guide.md", "src/util.py", "src/app.py"],
                   "truncated": False}  # build/ ignored, .hidden.py hidden, link not a file
    assert session.result("Glob", {"pattern": "src/*"})["files"] == [
        "src/util.py", "src/app.py"]  # src/web, a directory, is not listed


def test_glob_keeps_the_100_newest(session: RpcServer) -> None:
    root: Path = session.root  # type: ignore[attr-defined]
    (root / "many").mkdir()
    for n in range(130):
        f = root / "many" / f"f{n:03}.log"
        f.write_text("x")
        os.utime(f, (1_000_000 + n, 1_000_000 + n))
    got = session.result("Glob", {"pattern": "many/*.log"})
    assert got["truncated"] is True and len(got["files"]) == 100
    assert got["files"][0] == "many/f129.log" and got["files"][-1] == "many/f030.log"
    assert error_code(session.call("Glob", {"pattern": "a{b"})) == "invalid_pattern"


# Grep (each case on both engines) --------------------------------------------------------

GREP_CASES = [
    ({"pattern": "hello"},
     {"files": ["docs/guide.md", "src/app.py", "src/web/page.ts"], "truncated": False}),
    ({"pattern": "HELLO", "-i": True, "type": "py"},  # as in rg, a type shows hidden files
     {"files": [".hidden.py", "src/app.py"], "truncated": False}),
    ({"pattern": "hello", "type": "ts"}, {"files": ["src/web/page.ts"], "truncated": False}),
    ({"pattern": "hello", "glob": "*.md"}, {"files": ["docs/guide.md"], "truncated": False}),
    ({"pattern": "hello", "head_limit": 1}, {"files": ["docs/guide.md"], "truncated": True}),
    ({"pattern": "o", "path": "notes.txt", "output_mode": "count"},
     {"counts": [{"path": "notes.txt", "count": 3}], "total": 3, "truncated": False}),
    ({"pattern": "hello", "output_mode": "content", "path": "docs"},
     {"matches": [{"path": "docs/guide.md", "line": 2, "content": "hello world"}],
      "truncated": False}),
    ({"pattern": "hello", "output_mode": "content", "path": "docs", "-n": False},
     {"matches": [{"path": "docs/guide.md", "content": "hello world"}], "truncated": False}),
    ({"pattern": "three", "output_mode": "content", "-B": 1, "-A": 2},
     {"matches": [{"path": "notes.txt", "line": 3,
                   "content": "    two\n--> three\n    four\n    five"}], "truncated": False}),
    ({"pattern": "three", "output_mode": "content", "-C": 1},
     {"matches": [{"path": "notes.txt", "line": 3, "content": "    two\n--> three\n    four"}],
      "truncated": False}),
    ({"pattern": "three", "output_mode": "content", "-C": 2, "-A": 0},
     {"matches": [{"path": "notes.txt", "line": 3, "content": "    one\n    two\n--> three"}],
      "truncated": False}),
    ({"pattern": "two\\nthree", "multiline": True, "output_mode": "content"},
     {"matches": [{"path": "notes.txt", "line": 2, "content": "two\nthree"}],
      "truncated": False}),
]


@pytest.mark.parametrize("params, expected", GREP_CASES,
                         ids=[str(i) for i in range(len(GREP_CASES))])
def test_grep_with_ripgrep_option_names(server: RpcServer, params: dict,
                                        expected: dict) -> None:
    got = server.result("Grep", params)
    assert got.pop("engine") == server.engine  # type: ignore[attr-defined]
    assert got.pop("files_searched") >= 1
    assert got == expected


@pytest.mark.parametrize("params, code, param", [
    ({"pattern": "two\\nthree"}, "invalid_pattern", "pattern"),
    ({"pattern": "(unclosed"}, "invalid_pattern", "pattern"),
    ({"pattern": "x", "type": "nosuchtype"}, "invalid_params", "type"),
    ({"pattern": "x", "output_mode": "lines"}, "invalid_params", "output_mode"),
    ({"pattern": "x", "-Z": True}, "invalid_params", "-Z"),
    ({"pattern": "x", "-A": -1}, "invalid_params", "-A"),
])
def test_grep_refusals(server: RpcServer, params: dict, code: str, param: str) -> None:
    data = _error(server.call("Grep", params))
    assert data["error"] == code and data.get("param") == param
