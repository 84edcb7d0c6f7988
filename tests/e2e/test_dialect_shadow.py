"""The `shadow` tool set (seed 003; `--tools` in docs/protocol.md) over the real server and
plain JSON-RPC: every input, alias and output the seed names, integers as strings,
overwrite, Edit's count and anchors, JavaScript RegExp queries; Grep on both engines."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any, Iterator

import pytest

from e2e_support import tool_set_server
from rpc_client import RpcServer, error_code

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 20
TEXT = "foo(); x = foo();\nfoo();\n  y =   foo()  ;\nlet u = 'http://a/b'\n"


def _build(root: Path) -> None:
    (root / "src/sub").mkdir(parents=True)
    (root / "src/app.ts").write_text(TEXT)
    (root / "src/sub/util.js").write_text("// TODO: one\nconst OpenAI_BASE_URL = 1;\n")
    (root / "README.md").write_text("intro\nTODO: two\nend\n")
    (root / "img.png").write_bytes(PNG)
    (root / "dirlink").symlink_to("src")


@pytest.fixture(scope="module", params=["ripgrep", "python"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[RpcServer]:
    """A shadow-set server on a tree no test changes, once per search engine."""
    root = tmp_path_factory.mktemp("shadow")
    _build(root)
    with tool_set_server(root, "shadow", request.param) as srv:
        yield srv


@pytest.fixture(scope="module")
def editor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RpcServer]:
    """A server for tests that change files (each writes its own)."""
    root = tmp_path_factory.mktemp("shadow_edit")
    with RpcServer(root, "--tools", "shadow", "--workers", "2") as srv:
        srv.root = root  # type: ignore[attr-defined]
        yield srv


def _data(reply: dict[str, Any]) -> dict[str, Any]:
    assert "error" in reply, reply
    return reply["error"]["data"]


def _file(srv: RpcServer, name: str, text: str = TEXT) -> Path:
    path = srv.root / name  # type: ignore[attr-defined]
    path.write_text(text)
    return path


# aliases and integers as strings ---------------------------------------------------------

@pytest.mark.parametrize("params", [
    {"file_path": "src/app.ts"}, {"filePath": "src/app.ts"},
    {"file_path": "src/app.ts", "filePath": "src/app.ts"},  # the same value twice is fine
    {"file_path": "src/app.ts", "offset": "2", "limit": "1"},
    {"file_path": "src/app.ts", "offset": 2, "limit": 1},
    {"file_path": "src/app.ts", "offset": 2.0, "limit": " 1 "},
])
def test_read_aliases_and_string_integers(server: RpcServer, params: dict) -> None:
    got = server.result("Read", params)
    assert got["file_path"] == "src/app.ts"
    first = int(params.get("offset", 1))
    assert got["content"].split("\n")[0] == f"{first:>6}\t{TEXT.splitlines()[first - 1]}"
    if "limit" in params:
        assert got["content"].count("\n") == 0
    assert set(got) == {"file_path", "content"}


@pytest.mark.parametrize("method, params, param", [
    ("Read", {"file_path": "a", "filePath": "b"}, "file_path"),
    ("Read", {}, "file_path"),
    ("Read", {"filePath": ""}, "file_path"),
    ("Edit", {"file_path": "a\x00b", "old": "a", "new": "b"}, "file_path"),
    ("Read", {"file_path": "src/app.ts", "offset": "two"}, "offset"),
    ("Read", {"file_path": "src/app.ts", "limit": "-1"}, "limit"),
    ("Read", {"file_path": "src/app.ts", "limit": 1.5}, "limit"),
    ("Write", {"filePath": "x", "file_path": "y", "content": ""}, "file_path"),
    ("Edit", {"file_path": "src/app.ts", "old": "a", "old_string": "b", "new": "c"}, "old"),
    ("Edit", {"file_path": "src/app.ts", "oldString": "a", "new": "c", "newString": "d"},
     "new"),
    ("Edit", {"file_path": "src/app.ts", "new": "c"}, "old"),
    ("Edit", {"file_path": "src/app.ts", "old": "c"}, "new"),
    ("Edit", {"file_path": "src/app.ts", "old": "a", "new": "b", "replace_all": True,
              "replaceAll": False}, "replace_all"),
    ("Edit", {"file_path": "src/app.ts", "old": "a", "new": "b", "count": "x"}, "count"),
    ("Glob", {"pattern": "*", "root": "src", "path": "."}, "root"),
    ("Glob", {"pattern": "*", "max_files": "many"}, "max_files"),
    ("Grep", {"query": "x", "root": "src", "path": "."}, "root"),
    ("Grep", {"query": "x", "before_context": "1.5"}, "before_context"),
    ("Grep", {"query": "x", "mode": "count"}, "mode"),
])
def test_bad_params(server: RpcServer, method: str, params: dict, param: str) -> None:
    data = _data(server.call(method, params))
    assert (data["error"], data["param"]) == ("invalid_params", param)


def test_read_image(server: RpcServer) -> None:
    got = server.result("Read", {"filePath": "img.png"})
    assert got == {"file_path": "img.png", "image": base64.b64encode(PNG).decode(),
                   "mime_type": "image/png", "file_size": len(PNG)}


# Write -----------------------------------------------------------------------------------

def test_write_refuses_to_clobber_unless_overwrite(editor: RpcServer) -> None:
    root: Path = editor.root  # type: ignore[attr-defined]
    got = editor.result("Write", {"filePath": "w/notes.txt", "content": "summary\n"})
    assert (got["file_path"], got["bytes_written"]) == ("w/notes.txt", 8)
    assert "notes.txt" in got["message"]
    data = _data(editor.call("Write", {"file_path": "w/notes.txt", "content": "clobber"}))
    assert data["error"] == "already_exists" and data["path"] == "w/notes.txt"
    assert (root / "w/notes.txt").read_text() == "summary\n"
    got = editor.result("Write", {"file_path": "w/notes.txt", "content": "plan",
                                  "overwrite": True})
    assert got["bytes_written"] == 4 and (root / "w/notes.txt").read_text() == "plan"


# Edit ------------------------------------------------------------------------------------

@pytest.mark.parametrize("params, replacements, result", [
    ({"old": "let", "new": "const"}, 1, TEXT.replace("let", "const")),
    ({"old_string": "foo()", "new_string": "bar()", "count": 4}, 4,
     TEXT.replace("foo()", "bar()")),
    ({"oldString": "foo()", "newString": "bar()", "count": "0"}, 4,
     TEXT.replace("foo()", "bar()")),
    ({"old": "foo()", "new": "bar()", "replace_all": True}, 4, TEXT.replace("foo()", "bar()")),
    ({"old": "foo()", "new": "bar()", "replaceAll": True}, 4, TEXT.replace("foo()", "bar()")),
    ({"old": "foo()", "new": "bar()", "before": "x =", "after": ";"}, 1,
     TEXT.replace("x = foo()", "x = bar()")),
    ({"old": "foo()", "new": "bar()", "before": "y =", "after": ";"}, 1,  # spaces between
     TEXT.replace("y =   foo()  ;", "y =   bar()  ;")),
    ({"old": "foo()", "new": "bar()", "before": "=", "count": 2}, 2,
     TEXT.replace("x = foo()", "x = bar()").replace("=   foo()", "=   bar()")),
    ({"old": "foo()", "new": "bar()", "after": ";\n", "count": 0}, 3,
     "foo(); x = bar();\nbar();\n  y =   bar()  ;\nlet u = 'http://a/b'\n"),
])
def test_edit_count_and_anchors(editor: RpcServer, params: dict, replacements: int,
                                result: str) -> None:
    path = _file(editor, "e.ts")
    got = editor.result("Edit", {"file_path": "e.ts", **params})
    assert got["file_path"] == "e.ts" and got["replacements"] == replacements
    assert str(replacements) in got["message"]
    assert path.read_text() == result


@pytest.mark.parametrize("params, error, count, lines", [
    ({"old": "foo()", "new": "bar()"}, "find_not_unique", 4, [1, 1, 2, 3]),
    ({"old": "foo()", "new": "bar()", "count": "3"}, "find_not_unique", 4, [1, 1, 2, 3]),
    ({"old": "let", "new": "var", "count": 2}, "find_not_unique", 1, [4]),
    ({"old": "foo()", "new": "bar()", "before": "=", "count": 1}, "find_not_unique", 2, [1, 3]),
    ({"old": "nothing", "new": "x"}, "find_not_found", None, None),
    ({"old": "nothing", "new": "x", "count": 0}, "find_not_found", None, None),
    ({"old": "foo()", "new": "bar()", "before": "z ="}, "find_not_found", None, None),
])
def test_edit_refusals_change_nothing(editor: RpcServer, params: dict, error: str,
                                      count: int | None, lines: list | None) -> None:
    path = _file(editor, "r.ts")
    data = _data(editor.call("Edit", {"filePath": "r.ts", **params}))
    assert data["error"] == error and data["patch_index"] == 0
    if error == "find_not_unique":
        assert (data["count"], data["lines"]) == (count, lines)
        assert data["expected"] == int(params.get("count", 1))
    else:
        assert "hint" in data and data["message"].startswith("old was not found")
    assert path.read_text() == TEXT


def test_edit_hint_points_at_the_near_miss(editor: RpcServer) -> None:
    _file(editor, "h.ts")
    data = _data(editor.call("Edit", {"file_path": "h.ts", "old": "let u = 'http://a/c'",
                                      "new": "x"}))
    assert data["hint"]["start_line"] == 4 and data["hint"]["similarity"] >= 0.5


# ListDir, Glob ---------------------------------------------------------------------------

def test_listdir(server: RpcServer) -> None:
    assert server.result("ListDir", {}) == {"path": ".", "entries": [
        {"name": "README.md", "type": "file"}, {"name": "dirlink", "type": "dir"},
        {"name": "img.png", "type": "file"}, {"name": "src", "type": "dir"}]}
    assert server.result("ListDir", {"path": "src"})["entries"] == [
        {"name": "app.ts", "type": "file"}, {"name": "sub", "type": "dir"}]
    assert error_code(server.call("ListDir", {"path": "nope"})) == "file_not_found"


@pytest.mark.parametrize("params, matches", [
    ({"pattern": "**/*.ts"}, ["src/app.ts"]),
    ({"pattern": "*.js", "root": "src/sub"}, ["src/sub/util.js"]),
    ({"pattern": "**/*", "path": "src"}, ["src/app.ts", "src/sub/util.js"]),
    ({"pattern": "?????.md"}, []),
    ({"pattern": "??????.md"}, ["README.md"]),
    ({"pattern": "**/*.*", "max_files": "2"}, ["README.md", "img.png"]),
])
def test_glob(server: RpcServer, params: dict, matches: list[str]) -> None:
    got = server.result("Glob", params)
    assert got["matches"] == matches and got["count"] == len(matches)
    assert got["truncated"] is ("max_files" in params)


# Grep (both engines) ---------------------------------------------------------------------

def _hits(got: dict[str, Any]) -> list[tuple[str, int, str]]:
    return [(m["file_path"], m["line"], m["text"]) for m in got["matches"]]


@pytest.mark.parametrize("params, hits", [
    ({"query": "TODO"}, [("README.md", 2, "TODO: two"), ("src/sub/util.js", 1, "// TODO: one")]),
    ({"query": "todo", "case_sensitive": False, "file_glob": "*.md"},
     [("README.md", 2, "TODO: two")]),
    ({"query": "OpenAI_BASE_URL", "root": "src"},
     [("src/sub/util.js", 2, "const OpenAI_BASE_URL = 1;")]),
    ({"query": r"http:\/\/a\/b"}, [("src/app.ts", 4, "let u = 'http://a/b'")]),
    ({"query": "x[^]=", "path": "src"}, [("src/app.ts", 1, "foo(); x = foo();")]),
    ({"query": r"\u0054\u{4F}DO: t"}, [("README.md", 2, "TODO: two")]),
    ({"query": r"(?<w>o)\k<w>\(", "file_glob": "**/*.ts"},
     [("src/app.ts", 1, "foo(); x = foo();"), ("src/app.ts", 2, "foo();"),
      ("src/app.ts", 3, "  y =   foo()  ;")]),
    ({"query": "[[]", "path": "src"}, []),
])
def test_grep_javascript_queries(server: RpcServer, params: dict, hits: list) -> None:
    assert _hits(server.result("Grep", params)) == hits


def test_grep_context_arrays_and_files_mode(server: RpcServer) -> None:
    got = server.result("Grep", {"query": "TODO", "file_glob": "*.md",
                                 "before_context": "1", "after_context": 2})
    assert got["matches"] == [{"file_path": "README.md", "line": 2, "text": "TODO: two",
                               "before_context": ["intro"], "after_context": ["end"]}]
    only_after = server.result("Grep", {"query": "intro", "after_context": 1})
    assert only_after["matches"][0]["before_context"] == []
    assert only_after["matches"][0]["after_context"] == ["TODO: two"]
    files = server.result("Grep", {"query": "TODO", "mode": "files_with_matches"})
    assert files == {"files": ["README.md", "src/sub/util.js"], "truncated": False}


@pytest.mark.parametrize("query, construct", [(r"\q{abc}", r"\q{abc}"),
                                              (r"a|[\q{x}]", r"\q{x}")])
def test_grep_untranslatable_is_invalid_pattern_naming_it(server: RpcServer, query: str,
                                                          construct: str) -> None:
    data = _data(server.call("Grep", {"query": query}))
    assert (data["error"], data["param"], data["construct"]) == (
        "invalid_pattern", "query", construct)
    assert construct in data["message"]


def test_grep_bad_regex_names_the_query(server: RpcServer) -> None:
    data = _data(server.call("Grep", {"query": "(open"}))
    assert (data["error"], data["param"]) == ("invalid_pattern", "query")
