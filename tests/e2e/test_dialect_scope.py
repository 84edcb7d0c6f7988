"""The `scope` tool set (seed 002; `--tools` in docs/protocol.md) over the real server and
plain JSON-RPC: every input and output field of the seed's tables, its three error codes,
the 5,000 cap, the encodings; search_files on both engines."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import pytest

from e2e_support import tool_set_server
from rpc_client import RpcServer

FILES: dict[str, bytes] = {
    "a.txt": b"one\r\ntwo\r\nthree\r\n",
    "src/main.py": b"import os\nprint('a.b')\nprint('axb')\nPrint('A.B')\n",
    "src/deep/x.py": b"a.b = 1\n",
    "docs/r.md": b"# a.b\n",
    ".hidden/h.txt": b"a.b hidden\n",
    "u16.txt": "h\u00e9\n".encode("utf-16"),
    "img.png": b"\x89PNG\r\n\x1a\n" + b"\0" * 10,
    "bin.dat": b"\0\1",
}


def _build(root: Path) -> None:
    for rel, body in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(body)
    (root / "link.txt").symlink_to("a.txt")


@pytest.fixture(scope="module", params=["ripgrep", "python"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[RpcServer]:
    root = tmp_path_factory.mktemp("scope")
    _build(root)
    with tool_set_server(root, "scope", request.param) as srv:
        yield srv


def _fails(srv: RpcServer, method: str, params: dict, error: str, code: str) -> dict:
    reply = srv.call(method, params)
    assert "error" in reply, reply
    data = reply["error"]["data"]
    assert (data["error"], data["code"]) == (error, code), data
    assert reply["error"]["message"].startswith(f"{code}: ")
    return data


# read_file -------------------------------------------------------------------------------

@pytest.mark.parametrize("params, expected", [
    ({"path": "a.txt"}, {"content": "one\r\ntwo\r\nthree\r\n", "lines": 3,
                         "truncated": False, "encoding": "utf-8"}),
    ({"path": "a.txt", "startLine": 2}, {"content": "two\r\nthree\r\n", "lines": 3,
                                         "truncated": False, "encoding": "utf-8"}),
    ({"path": "a.txt", "startLine": 2, "endLine": 2},
     {"content": "two\r\n", "lines": 3, "truncated": False, "encoding": "utf-8"}),
    ({"path": "a.txt", "endLine": 9}, {"content": "one\r\ntwo\r\nthree\r\n", "lines": 3,
                                       "truncated": False, "encoding": "utf-8"}),
    ({"path": "a.txt", "startLine": 5}, {"content": "", "lines": 3, "truncated": False,
                                         "encoding": "utf-8"}),
    ({"path": "u16.txt"}, {"content": "h\u00e9\n", "lines": 1, "truncated": False,
                           "encoding": "utf-16-le"}),
])
def test_read_file(server: RpcServer, params: dict, expected: dict) -> None:
    assert server.result("read_file", params) == expected


def test_read_file_truncated_only_when_the_size_limit_cuts(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"line {n:04}\n" for n in range(100)))
    with RpcServer(tmp_path, "--tools", "scope", "--workers", "1",
                   "--max-read-bytes", "100") as srv:
        got = srv.result("read_file", {"path": "big.txt", "startLine": 1, "endLine": 50})
        assert got["truncated"] is True and got["lines"] == 100
        assert got["content"].startswith("line 0000\n") and len(got["content"]) <= 100
        small = srv.result("read_file", {"path": "big.txt", "startLine": 1, "endLine": 3})
        assert small["truncated"] is False and small["content"].count("\n") == 3


@pytest.mark.parametrize("method, params, error, code", [
    ("read_file", {"path": "nope.txt"}, "file_not_found", "FILESYSTEM_ERROR"),
    ("read_file", {"path": "bin.dat"}, "binary_file", "FILESYSTEM_ERROR"),
    ("read_file", {"path": "img.png"}, "binary_file", "FILESYSTEM_ERROR"),
    ("read_file", {"path": "src"}, "is_directory", "FILESYSTEM_ERROR"),
    ("read_file", {"path": "../etc/passwd"}, "path_outside_workspace", "SCOPE_VIOLATION"),
    ("read_file", {"path": "/etc/passwd"}, "path_outside_workspace", "SCOPE_VIOLATION"),
    ("read_file", {"path": "a.txt", "startLine": 3, "endLine": 2}, "invalid_params",
     "INVALID_INPUT"),
    ("read_file", {"path": "a.txt", "startLine": 0}, "invalid_params", "INVALID_INPUT"),
    ("read_file", {}, "invalid_params", "INVALID_INPUT"),
    ("write_file", {"path": "a.txt", "content": "x", "encoding": "ebcdic"},
     "invalid_params", "INVALID_INPUT"),
    ("write_file", {"path": "new.txt", "content": "\u20ac", "encoding": "latin-1"},
     "invalid_params", "INVALID_INPUT"),
    ("write_file", {"path": "no/such/dir.txt", "content": "x"}, "file_not_found",
     "FILESYSTEM_ERROR"),
    ("write_file", {"path": "src", "content": "x"}, "is_directory", "FILESYSTEM_ERROR"),
    ("list_directory", {"path": "a.txt"}, "not_a_directory", "FILESYSTEM_ERROR"),
    ("list_directory", {"path": "..", "recursive": True}, "path_outside_workspace",
     "SCOPE_VIOLATION"),
    ("list_directory", {"path": ".", "glob": "[z"}, "invalid_pattern", "INVALID_INPUT"),
    ("search_files", {"pattern": "(", "regex": True}, "invalid_pattern", "INVALID_INPUT"),
    ("search_files", {"pattern": "x", "path": "nope"}, "file_not_found", "FILESYSTEM_ERROR"),
    ("search_files", {"pattern": "x", "contextLines": -1}, "invalid_params",
     "INVALID_INPUT"),
    ("get_file_info", {"path": "nope"}, "file_not_found", "FILESYSTEM_ERROR"),
    ("get_file_info", {"path": "../x"}, "path_outside_workspace", "SCOPE_VIOLATION"),
])
def test_errors_carry_the_seeds_code(server: RpcServer, method: str, params: dict,
                                     error: str, code: str) -> None:
    _fails(server, method, params, error, code)


# write_file ------------------------------------------------------------------------------

@pytest.mark.parametrize("encoding, on_disk", [
    ("utf-8", "h\u00e9\n".encode()),
    ("utf-8-sig", b"\xef\xbb\xbf" + "h\u00e9\n".encode()),
    ("utf-16-le", b"\xff\xfe" + "h\u00e9\n".encode("utf-16-le")),
    ("utf-16-be", b"\xfe\xff" + "h\u00e9\n".encode("utf-16-be")),
    ("latin-1", "h\u00e9\n".encode("latin-1")),
])
def test_write_file_encodings_read_back(tmp_path: Path, encoding: str, on_disk: bytes) -> None:
    with RpcServer(tmp_path, "--tools", "scope", "--workers", "1") as srv:
        got = srv.result("write_file", {"path": "./sub/../f.txt", "content": "h\u00e9\n",
                                        "encoding": encoding})
        assert got == {"path": "f.txt", "bytes": len(on_disk)}
        assert (tmp_path / "f.txt").read_bytes() == on_disk
        back = srv.result("read_file", {"path": "f.txt"})
        assert (back["content"], back["encoding"]) == ("h\u00e9\n", encoding)


def test_write_file_create_dirs_and_overwrite(tmp_path: Path) -> None:
    with RpcServer(tmp_path, "--tools", "scope", "--workers", "1") as srv:
        assert srv.result("write_file", {"path": "d/e/f.txt", "content": "1",
                                         "createDirs": True}) == {"path": "d/e/f.txt",
                                                                  "bytes": 1}
        assert srv.result("write_file", {"path": "d/e/f.txt", "content": "22"})["bytes"] == 2
        assert (tmp_path / "d/e/f.txt").read_text() == "22"


# list_directory --------------------------------------------------------------------------

def _paths(got: dict[str, Any]) -> list[str]:
    return [e["path"] for e in got["entries"]]


@pytest.mark.parametrize("params, expected", [
    ({"path": "."}, ["a.txt", "bin.dat", "docs", "img.png", "link.txt", "src", "u16.txt"]),
    ({"path": "src", "recursive": True}, ["src/deep", "src/deep/x.py", "src/main.py"]),
    ({"path": ".", "recursive": True, "depth": 1},
     ["a.txt", "bin.dat", "docs", "img.png", "link.txt", "src", "u16.txt"]),
    ({"path": ".", "depth": 2, "glob": "*.py"}, ["src/main.py"]),
    ({"path": ".", "recursive": True, "glob": "*.py"}, ["src/deep/x.py", "src/main.py"]),
    ({"path": ".", "glob": "*.txt"}, ["a.txt", "link.txt", "u16.txt"]),
    ({"path": ".", "glob": "src/**"}, ["src/deep", "src/deep/x.py", "src/main.py"]),
    ({"path": ".hidden"}, ["h.txt"]),  # an explicit directory is listed, hidden or not
    ({"path": ".", "includeHidden": True, "recursive": True, "glob": "*.txt"},
     [".hidden/h.txt", "a.txt", "link.txt", "u16.txt"]),
])
def test_list_directory(server: RpcServer, params: dict, expected: list[str]) -> None:
    got = server.result("list_directory", params)
    if params["path"] == ".hidden":
        expected = [f".hidden/{p}" for p in expected]
    assert _paths(got) == expected
    assert got["total"] == len(expected) and got["truncated"] is False


def test_list_directory_entry_fields(server: RpcServer) -> None:
    got = {e["name"]: e for e in server.result("list_directory", {"path": "."})["entries"]}
    assert got["a.txt"] == {"name": "a.txt", "path": "a.txt", "type": "file",
                                  "size": len(FILES["a.txt"])}
    assert got["src"]["type"] == "dir" and got["link.txt"]["type"] == "symlink"


def test_list_directory_caps_at_5000_and_counts_all(tmp_path: Path) -> None:
    many = tmp_path / "many"
    many.mkdir()
    for n in range(5003):
        (many / f"f{n:05}").touch()
    os.mkfifo(many / "zfifo")
    with RpcServer(tmp_path, "--tools", "scope", "--workers", "2") as srv:
        got = srv.result("list_directory", {"path": "many"})
        assert len(got["entries"]) == 5000 and got["total"] == 5004
        assert got["truncated"] is True and got["entries"][-1]["path"] == "many/f04999"
        deep = srv.result("list_directory", {"path": ".", "recursive": True})
        assert deep["total"] == 5005 and len(deep["entries"]) == 5000
        fifo = srv.result("list_directory", {"path": "many", "glob": "z*"})["entries"]
        assert fifo == [{"name": "zfifo", "path": "many/zfifo", "type": "other", "size": 0}]


# search_files (both engines) -------------------------------------------------------------

def test_search_is_literal_by_default(server: RpcServer) -> None:
    got = server.result("search_files", {"pattern": "a.b", "path": "src"})
    assert [(m["file"], m["line"], m["content"]) for m in got["matches"]] == [
        ("src/deep/x.py", 1, "a.b = 1"), ("src/main.py", 2, "print('a.b')")]
    assert got["totalMatches"] == 2 and got["filesSearched"] == 2
    assert got["truncated"] is False
    assert all(m["context"] == {"before": [], "after": []} for m in got["matches"])


def test_search_regex_case_and_glob(server: RpcServer) -> None:
    regex = server.result("search_files", {"pattern": "a.b", "regex": True, "path": "src",
                                           "glob": "main.py"})
    assert [m["line"] for m in regex["matches"]] == [2, 3]
    assert regex["filesSearched"] == 1
    nocase = server.result("search_files", {"pattern": "a.b", "caseSensitive": False,
                                            "glob": "*.py"})
    assert [(m["file"], m["line"]) for m in nocase["matches"]] == [
        ("src/deep/x.py", 1), ("src/main.py", 2), ("src/main.py", 4)]
    assert nocase["filesSearched"] == 2


def test_search_context_arrays(server: RpcServer) -> None:
    got = server.result("search_files", {"pattern": "axb", "contextLines": 1})
    assert got["matches"] == [{"file": "src/main.py", "line": 3, "content": "print('axb')",
                               "context": {"before": ["print('a.b')"],
                                           "after": ["Print('A.B')"]}}]
    edge = server.result("search_files", {"pattern": "import", "contextLines": 2})
    assert edge["matches"][0]["context"] == {"before": [], "after": ["print('a.b')",
                                                                      "print('axb')"]}
    crlf = server.result("search_files", {"pattern": "three", "contextLines": 5})
    assert crlf["matches"] == [{"file": "a.txt", "line": 3, "content": "three",
                                "context": {"before": ["one", "two"], "after": []}}]
    assert crlf["filesSearched"] == 7  # binaries too, as rg counts; not hidden, not links


# get_file_info ---------------------------------------------------------------------------

def test_get_file_info(server: RpcServer) -> None:
    got = server.result("get_file_info", {"path": "src/main.py"})
    assert set(got) == {"name", "path", "type", "size", "modified", "mime", "lines",
                        "isSymlink", "symlinkTarget"}
    assert (got["name"], got["path"], got["type"], got["size"], got["lines"]) == (
        "main.py", "src/main.py", "file", len(FILES["src/main.py"]), 4)
    assert got["mime"] == "text/x-python" and got["modified"].endswith("Z")
    assert (got["isSymlink"], got["symlinkTarget"]) == (False, None)
    link = server.result("get_file_info", {"path": "link.txt"})
    assert (link["isSymlink"], link["symlinkTarget"], link["type"]) == (True, "a.txt",
                                                                         "symlink")
    assert server.result("get_file_info", {"path": "src"})["type"] == "dir"
