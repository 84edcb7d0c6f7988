"""The `codex` tool set (docs/protocol.md, "Tool set `codex`") over the real server and
plain JSON-RPC: read_file, list_dir and grep_files as tables on both search engines;
apply_patch's results, records, options and its all-or-nothing commit, with a real write
failure on the third file."""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_support import tool_set_server
from rpc_client import REPO, RpcServer, error_code, snapshot

APP = "import os\n\n\nclass App:\n    def run(self):\n        return 1\n\n    def stop(self):\n" \
      "        return 2\n"


def _build(root: Path) -> None:
    (root / "src/lib").mkdir(parents=True)
    (root / "src/app.py").write_text(APP)
    (root / "src/lib/util.py").write_text("def util():\n    return 'needle'\n")
    (root / "src/crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (root / "src/long.txt").write_text("\u00e9" * 400 + "\n")
    (root / "README.md").write_text("needle in the readme\n")
    (root / ".hidden").mkdir()
    (root / ".hidden/h.txt").write_text("needle hidden\n")
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build/out.txt").write_text("needle ignored\n")
    (root / "link").symlink_to("src")
    (root / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 16)
    for age, name in enumerate(["README.md", "src/lib/util.py", "src/app.py"]):
        os.utime(root / name, (1_700_000_000 + age * 100, 1_700_000_000 + age * 100))


@pytest.fixture(scope="module", params=["ripgrep", "python"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[RpcServer]:
    """A codex-set server on a tree no test changes, once per search engine."""
    root = tmp_path_factory.mktemp("codex")
    _build(root)
    with tool_set_server(root, "codex", request.param) as srv:
        yield srv


@pytest.fixture
def editor(tmp_path: Path) -> Iterator[RpcServer]:
    root = tmp_path / "ws"
    root.mkdir()
    with RpcServer(root, "--tools", "native,codex", "--workers", "2", "--records",
                   str(tmp_path / "records")) as srv:
        srv.root = root  # type: ignore[attr-defined]
        yield srv


def _out(srv: RpcServer, method: str, params: dict[str, Any]) -> str:
    return srv.result(method, params)["output"]


# read_file ---------------------------------------------------------------------------------

@pytest.mark.parametrize("params, output", [
    ({"file_path": "src/app.py", "limit": 2}, "L1: import os\nL2: "),
    ({"file_path": "src/app.py", "offset": 5, "limit": 2},
     "L5:     def run(self):\nL6:         return 1"),
    ({"file_path": "src/crlf.txt"}, "L1: one\nL2: two"),
    ({"file_path": "src/lib/util.py", "offset": 2}, "L2:     return 'needle'"),
    ({"file_path": "src/long.txt"}, "L1: " + "\u00e9" * 250),  # cut at 500 bytes
    ({"file_path": "src/app.py", "offset": 6, "mode": "indentation",  # one sibling line
      "indentation": {"max_levels": 1}},  # each way at the floor, as in Codex
     ("L5:     def run(self):\nL6:         return 1\nL7: \nL8:     def stop(self):\n"
      "L9:         return 2")),
    ({"file_path": "src/app.py", "offset": 2, "mode": "indentation",
      "indentation": {"max_levels": 1, "include_header": False}}, "L1: import os"),
    ({"file_path": "src/app.py", "offset": 6, "mode": "indentation"},
     ("L4: class App:\nL5:     def run(self):\nL6:         return 1\nL7: \n"
      "L8:     def stop(self):\nL9:         return 2")),
    ({"file_path": "src/app.py", "mode": "indentation", "indentation": {
        "anchor_line": 9, "max_levels": 1, "include_siblings": True}},
     ("L5:     def run(self):\nL6:         return 1\nL7: \nL8:     def stop(self):\n"
      "L9:         return 2")),
    ({"file_path": "src/app.py", "offset": 6, "mode": "indentation",
      "indentation": {"max_lines": 1}}, "L6:         return 1"),
])
def test_read_file(server: RpcServer, params: dict[str, Any], output: str) -> None:
    assert _out(server, "read_file", params) == output


def test_read_file_absolute_path_inside(server: RpcServer) -> None:
    path = f"{server.root}/src/lib/util.py"  # type: ignore[attr-defined]
    assert _out(server, "read_file", {"file_path": path}).startswith("L1: def util():")


@pytest.mark.parametrize("params, code, words", [
    ({"file_path": "src/app.py", "offset": 99}, "invalid_params", "offset exceeds file length"),
    ({"file_path": "src/app.py", "offset": 0}, "invalid_params", "1-indexed line number"),
    ({"file_path": "src/app.py", "limit": 0}, "invalid_params", "greater than zero"),
    ({"file_path": "src/app.py", "mode": "indentation", "indentation": {"anchor_line": 99}},
     "invalid_params", "anchor_line exceeds file length"),
    ({"file_path": "src/app.py", "mode": "indentation", "indentation": {"max_lines": 0}},
     "invalid_params", "max_lines must be greater than zero"),
    ({"file_path": "img.png"}, "binary_file", "image"),
    ({"file_path": "src"}, "is_directory", ""),
    ({"file_path": "nope.py"}, "file_not_found", ""),
])
def test_read_file_errors(server: RpcServer, params: dict[str, Any], code: str,
                          words: str) -> None:
    reply = server.call("read_file", params)
    assert error_code(reply) == code and words in reply["error"]["message"]


# list_dir ----------------------------------------------------------------------------------

ROOT_LISTING = ("Relative path: . (the workspace root)", ".gitignore", ".hidden/", "  h.txt",
                "README.md", "build/", "  out.txt", "img.png", "link@", "src/", "  app.py",
                "  crlf.txt", "  lib/", "  long.txt")


def test_list_dir_two_levels_with_type_labels(server: RpcServer) -> None:
    assert _out(server, "list_dir", {"dir_path": ".", "limit": 50}) == "\n".join(ROOT_LISTING)


def test_list_dir_depth_and_pages(server: RpcServer) -> None:
    got = server.result("list_dir", {"dir_path": "src", "depth": 3, "offset": 2,
                                     "limit": 2})
    assert got["output"] == "Relative path: src\ncrlf.txt\nlib/\nMore than 2 entries found"
    assert got["entries"] == [{"path": "src/crlf.txt", "type": "file"},
                              {"path": "src/lib", "type": "dir"}]
    assert (got["total"], got["truncated"]) == (5, True)
    last = _out(server, "list_dir", {"dir_path": "src", "depth": 3, "offset": 4})
    assert last == "Relative path: src\n  util.py\nlong.txt"
    assert _out(server, "list_dir", {"dir_path": "src", "depth": 1}).count("\n") == 4


def test_list_dir_never_calls_a_relative_path_absolute(server: RpcServer) -> None:
    """Issue 35: `list_dir {"dir_path": "src"}` printed "Absolute path: src"."""
    first = _out(server, "list_dir", {"dir_path": "src", "depth": 1}).split("\n")[0]
    assert first == "Relative path: src"
    absolute = str(server.root / "src")  # type: ignore[attr-defined]
    first = _out(server, "list_dir", {"dir_path": absolute, "depth": 1}).split("\n")[0]
    assert first == f"Absolute path: {absolute}"


@pytest.mark.parametrize("params, code, words", [
    ({"dir_path": "src", "offset": 9}, "invalid_params", "offset exceeds directory entry"),
    ({"dir_path": "src", "offset": 0}, "invalid_params", "1-indexed entry number"),
    ({"dir_path": "src", "limit": 0}, "invalid_params", "limit must be greater than zero"),
    ({"dir_path": "src", "depth": 0}, "invalid_params", "depth must be greater than zero"),
    ({"dir_path": "src/app.py"}, "not_a_directory", ""),
    ({"dir_path": "missing"}, "file_not_found", ""),
])
def test_list_dir_errors(server: RpcServer, params: dict[str, Any], code: str,
                         words: str) -> None:
    reply = server.call("list_dir", params)
    assert error_code(reply) == code and words in reply["error"]["message"]


# grep_files --------------------------------------------------------------------------------

@pytest.mark.parametrize("params, output", [
    ({"pattern": "needle"}, "src/lib/util.py\nREADME.md"),  # newest first; hidden and
    # ignored files skipped, as ripgrep does
    ({"pattern": "ret.rn"}, "src/app.py\nsrc/lib/util.py"),
    ({"pattern": "needle", "include": "*.md"}, "README.md"),
    ({"pattern": "return", "path": "src/lib"}, "src/lib/util.py"),
    ({"pattern": "needle|import", "limit": 1}, "src/app.py"),
    ({"pattern": "no such text"}, "No matches found."),
    ({"pattern": "  needle  "}, "src/lib/util.py\nREADME.md"),  # trimmed, as Codex does
])
def test_grep_files(server: RpcServer, params: dict[str, Any], output: str) -> None:
    assert _out(server, "grep_files", params) == output


@pytest.mark.parametrize("params, code", [
    ({"pattern": "  "}, "invalid_params"), ({"pattern": "x", "limit": 0}, "invalid_params"),
    ({"pattern": "("}, "invalid_pattern"), ({"pattern": "x", "path": "nope"}, "file_not_found"),
    ({"pattern": "x", "include": "[z"}, "invalid_pattern"),
])
def test_grep_files_errors(server: RpcServer, params: dict[str, Any], code: str) -> None:
    assert error_code(server.call("grep_files", params)) == code


# apply_patch -------------------------------------------------------------------------------

def _patch(*body: str) -> str:
    return "\n".join(["*** Begin Patch", *body, "*** End Patch"])


def test_apply_patch_result_versions_and_record(editor: RpcServer, tmp_path: Path) -> None:
    root: Path = editor.root  # type: ignore[attr-defined]
    (root / "a.py").write_text(APP)
    (root / "old.txt").write_text("old\n")
    got = editor.result("apply_patch", {"input": _patch(
        "*** Update File: a.py", "@@ def stop(self):", "-        return 2",
        "+        return 3", "*** Add File: docs/n.md", "+# N", "*** Delete File: old.txt")})
    assert got["output"] == ("Success. Updated the following files:\nA docs/n.md\nM a.py\n"
                             "D old.txt\n")
    info = editor.result("file.info", {"path": "a.py"})
    assert got["files"][0] == {"path": "a.py", "action": "update", "version": info["version"],
                               "diagnostics": {"errors": [], "total": 0, "introduced": 0,
                                               "problems_checked": True, "problems": [],
                                               "problems_total": 0, "problems_introduced": 0}}
    assert (root / "a.py").read_text() == APP.replace("return 2", "return 3")
    [record] = [json.loads(line) for line in (tmp_path / "records/records.jsonl").open()]
    assert (record["method"], record["path"], record["outcome"]) == ("apply_patch", "a.py",
                                                                    "ok")
    assert [f["path"] for f in record["files"]] == ["a.py", "docs/n.md", "old.txt"]
    assert record["files"][2]["sha256_after"] is None


def test_apply_patch_refusal_is_recorded_and_changes_nothing(editor: RpcServer,
                                                             tmp_path: Path) -> None:
    root: Path = editor.root  # type: ignore[attr-defined]
    (root / "a.py").write_text(APP)
    before = snapshot(root)
    reply = editor.call("apply_patch", {"input": _patch(
        "*** Add File: new.txt", "+x", "*** Update File: a.py", "@@", "-        return 1",
        "+        return 0", "@@", "-        return 9", "+        return 0")})
    assert error_code(reply) == "find_not_found"
    assert reply["error"]["data"]["line"] == 8 and reply["error"]["data"]["patch_index"] == 1
    assert snapshot(root) == before
    [record] = [json.loads(line) for line in (tmp_path / "records/records.jsonl").open()]
    assert record["outcome"] == "find_not_found" and record["bytes"] == 0


@pytest.mark.parametrize("method, params, param", [
    ("apply_patch", {}, "input"),
    ("apply_patch", {"input": 7}, "input"),
    ("apply_patch", {"input": "*** Begin Patch\n*** Add File: x\n+y\n*** End Patch",
                     "path": "x"}, "path"),
    ("apply_patch", {"input": "*** Add File: x\n+y"}, "input"),
    ("apply_patch", {"input": "*** Begin Patch\n*** Add File: x\n+\ud800\n*** End Patch"},
     "input"),
    ("read_file", {}, "file_path"), ("read_file", {"file_path": 1}, "file_path"),
    ("read_file", {"file_path": "a.py", "offset": "2"}, "offset"),
    ("read_file", {"file_path": "a.py", "limit": -1}, "limit"),
    ("read_file", {"file_path": "a.py", "mode": "block"}, "mode"),
    ("read_file", {"file_path": "a.py", "indentation": {"levels": 1}}, "indentation"),
    ("read_file", {"file_path": "a.py", "indentation": {"max_levels": -1},
                   "mode": "indentation"}, "indentation.max_levels"),
    ("list_dir", {}, "dir_path"), ("list_dir", {"dir_path": ".", "depth": "2"}, "depth"),
    ("list_dir", {"dir_path": ".", "offset": -3}, "offset"),
    ("grep_files", {}, "pattern"), ("grep_files", {"pattern": "x", "include": 3}, "include"),
    ("grep_files", {"pattern": "x", "limit": 1.5}, "limit"),
    ("grep_files", {"pattern": "x", "path": 3}, "path"),
    ("list_dir", {"dir_path": ".", "limit": "5"}, "limit"),
    ("read_file", {"file_path": "a.py", "indentation": {"anchor_line": "x"}}, "indentation"),
    ("read_file", {"file_path": "a.py", "indentation": {"include_siblings": "yes"}},
     "indentation"),
])
def test_bad_input_names_the_parameter_and_writes_nothing(
        editor: RpcServer, method: str, params: dict[str, Any], param: str) -> None:
    root: Path = editor.root  # type: ignore[attr-defined]
    (root / "a.py").write_text(APP)
    before = snapshot(root)
    reply = editor.call(method, params)
    assert error_code(reply) == "invalid_params", reply
    assert reply["error"]["data"].get("param", "").startswith(param.split(".")[0]), reply
    assert snapshot(root) == before


def test_read_only_and_deny(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / ".env").write_text("SECRET=1\n")
    add = {"input": _patch("*** Add File: b.txt", "+b")}
    with RpcServer(tmp_path, "--tools", "codex", "--read-only", "--workers", "1") as srv:
        assert error_code(srv.call("apply_patch", add)) == "permission_denied"
        srv.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "t", "version": "1"}})
        names = {t["name"] for t in srv.result("tools/list", {})["tools"]}
        assert names == {"read_file", "list_dir", "grep_files"}
    with RpcServer(tmp_path, "--tools", "codex", "--deny", "**/.env", "--workers",
                   "1") as srv:
        reply = srv.call("apply_patch", {"input": _patch(
            "*** Update File: a.txt", "@@", "-a", "+A", "*** Update File: .env", "@@",
            "-SECRET=1", "+SECRET=2")})
        assert error_code(reply) == "permission_denied"
        assert "SECRET" not in json.dumps(srv.call("grep_files", {"pattern": "SECRET"}))
        assert error_code(srv.call("read_file", {"file_path": ".env"})) == "permission_denied"
    assert not (tmp_path / "b.txt").exists()
    assert (tmp_path / "a.txt").read_text() == "a\n" and \
        (tmp_path / ".env").read_text() == "SECRET=1\n"


@pytest.mark.parametrize("sets, status", [("codex", 0), ("native,codex", 0),
                                          ("codex,scope", 2), ("codex,claude", 0)])
def test_tool_set_lists_and_clashes(tmp_path: Path, sets: str, status: int) -> None:
    """read_file is both scope's and codex's: those two sets cannot be served together."""
    proc = subprocess.run([sys.executable, "-m", "chorus_tools", "--workspace",
                           str(tmp_path), "--tools", sets, "--workers", "1"], input=b"",
                          capture_output=True, cwd=REPO, timeout=60, check=False)
    assert proc.returncode == status, proc.stderr
    if status:
        assert b"read_file" in proc.stderr and proc.stderr.count(b"\n") == 1


def test_native_and_codex_together(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    with RpcServer(tmp_path, "--tools", "native,codex", "--workers", "1") as srv:
        srv.result("apply_patch", {"input": _patch("*** Update File: a.txt", "@@", "-a",
                                                   "+b")})
        assert srv.result("file.read", {"path": "a.txt"})["content"] == "     1\tb"


# all or nothing, with a real failure on the third file -------------------------------------

@pytest.mark.skipif(os.geteuid() != 0, reason="serving as nobody needs root")
def test_third_file_failing_restores_the_first_two(tmp_path: Path) -> None:
    """The third file's directory is read-only for the server (it serves as nobody): the
    plan reads it fine, the commit's write is refused by the kernel (EACCES), and the two
    files already written are put back byte for byte, modes included."""
    nobody = pwd.getpwnam("nobody")
    ws = tmp_path / "ws"
    (ws / "locked").mkdir(parents=True)
    files = {"one.txt": b"one\r\nkeep\r\n", "two/two.py": b"x = 1\n", "locked/three.txt":
             b"three\n"}
    (ws / "two").mkdir()
    for name, data in files.items():
        (ws / name).write_bytes(data)
    for path in (ws, ws / "two", ws / "one.txt", ws / "two/two.py", ws / "locked",
                 ws / "locked/three.txt"):
        os.chown(path, nobody.pw_uid, nobody.pw_gid)
    os.chmod(ws / "one.txt", 0o640)
    os.chmod(ws / "locked", 0o555)
    stats = {name: os.stat(ws / name) for name in files}
    patch = _patch("*** Update File: one.txt", "@@", "-one", "+ONE",
                   "*** Update File: two/two.py", "@@", "-x = 1", "+x = 2",
                   "*** Add File: two/new/made.txt", "+new",
                   "*** Update File: locked/three.txt", "@@", "-three", "+THREE")
    with RpcServer(ws, "--tools", "codex", "--user", "nobody", "--workers", "1") as srv:
        reply = srv.call("apply_patch", {"input": patch})
    assert error_code(reply) == "permission_denied", reply
    data = reply["error"]["data"]
    assert data["restored"] == ["one.txt", "two/two.py", "two/new/made.txt"]
    assert "not_restored" not in data and "were restored" in data["message"]
    for name, content in files.items():
        assert (ws / name).read_bytes() == content
        assert os.stat(ws / name).st_mode == stats[name].st_mode
    assert not (ws / "two/new").exists()
    assert sorted(os.listdir(ws)) == ["locked", "one.txt", "two"]
    assert sorted(os.listdir(ws / "two")) == ["two.py"]


def test_calls_on_the_patched_paths_keep_their_order(editor: RpcServer) -> None:
    """The paths inside the patch text order the call (docs/protocol.md, "Messages": order
    per path): a write pipelined before it is applied first, reads pipelined after it see
    its result, on every path it names (a move's destination included)."""
    for round_ in range(10):
        replies = editor.call_many([
            ("file.write", {"path": "a.txt", "content": f"a{round_}\n"}),
            ("file.write", {"path": "b.txt", "content": f"b{round_}\n"}),
            ("apply_patch", {"input": _patch(
                "*** Update File: a.txt", "@@", f"-a{round_}", "+A",
                "*** Update File: b.txt", "*** Move to: c.txt", "@@", f"-b{round_}", "+B")}),
            ("read_file", {"file_path": "a.txt"}),
            ("read_file", {"file_path": "c.txt"}),
            ("file.delete", {"path": "c.txt"}),
        ])
        assert [r.get("error") for r in replies] == [None] * 6, replies
        assert [replies[3]["result"]["output"], replies[4]["result"]["output"]] == [
            "L1: A", "L1: B"]


def test_what_a_model_pays_to_know_the_set(tmp_path: Path) -> None:
    """As docs/benchmarks.md's tools/list rows measure it: names, descriptions and input
    schemas under the reference server's 7,987 bytes; one type per property."""
    with RpcServer(tmp_path, "--tools", "codex", "--workers", "1") as srv:
        tools = srv.result("tools/list", {})["tools"]
    lean = [{k: t[k] for k in ("name", "description", "inputSchema")} for t in tools]
    assert len(json.dumps(lean, separators=(",", ":"))) < 7987
    for tool in tools:
        for prop in tool["inputSchema"]["properties"].values():
            assert not isinstance(prop.get("type"), list), (tool["name"], prop)
