"""UTF-8 with a bad byte over the real server (issue 36): every reader shows the UTF-8 text
with U+FFFD where the byte is (`encoding: "utf-8"`, `invalid_bytes`), a UTF-8 `find`
is found, and every tool set's editor writes new text as UTF-8 and keeps each bad byte
as it was; both search engines find the UTF-8 text."""

from __future__ import annotations

from pathlib import Path

import pytest
from rpc_client import RpcServer

# A Python file in UTF-8, with one byte (0xFF, a latin-1 ÿ pasted in) that is not UTF-8.
DATA = ("# naïve café — 日本\n"
        "def greet():\n"
        "    return 'héllo'\n").encode() + b"BAD = '\xff'\n" + "ok = '✓'\n".encode()
SHOWN = "# naïve café — 日本\ndef greet():\n    return 'héllo'\nBAD = '\ufffd'\nok = '✓'\n"


def _written(root: Path) -> bytes:
    return (root / "a.py").read_bytes()


@pytest.mark.parametrize("engine", ["python", "ripgrep"])
def test_regression_utf8_with_one_bad_byte_was_latin1_over_the_wire(
        tmp_path: Path, engine: str) -> None:
    (tmp_path / "a.py").write_bytes(DATA)
    with RpcServer(tmp_path, "--workers", "2", "--search-engine", engine) as srv:
        got = srv.result("file.read", {"path": "a.py", "raw": True})
        assert (got["content"], got["encoding"], got["invalid_bytes"]) == (SHOWN, "utf-8", 1)
        numbered = srv.result("file.read", {"path": "a.py", "offset": 4, "limit": 1})
        assert numbered["content"] == "     4\tBAD = '\ufffd'"
        info = srv.result("file.info", {"path": "a.py"})
        assert (info["encoding"], info["invalid_bytes"], info["lines"]) == ("utf-8", 1, 5)
        found = srv.result("file.search", {"pattern": "héllo|BAD"})
        assert found["engine"] == engine
        assert [(m["line"], m["content"]) for m in found["matches"]] == [
            (3, "    return 'héllo'"), (4, "BAD = '\ufffd'")]
        # a UTF-8 find is found; non-ASCII text is written as UTF-8; the bad byte stays
        done = srv.result("file.patch", {"path": "a.py", "expected_version": got["version"],
                                         "patches": [{"find": "'héllo'",
                                                      "replace": "'grüß dich'"}]})
        assert "+    return 'grüß dich'" in done["diff"]
        expected = DATA.replace("héllo".encode(), "grüß dich".encode())
        assert _written(tmp_path) == expected
        # a find holding the U+FFFD the file shows matches the bad byte, kept in replace
        srv.result("file.patch", {"path": "a.py", "patches": [
            {"find": "BAD = '\ufffd'", "replace": "BAD = 'ü\ufffd'"}]})
        expected = expected.replace(b"BAD = '\xff'", "BAD = 'ü".encode() + b"\xff'")
        assert _written(tmp_path) == expected
        again = srv.result("file.read", {"path": "a.py", "offset": 4, "limit": 1})
        assert (again["content"], again["invalid_bytes"]) == ("     4\tBAD = 'ü\ufffd'", 1)


def test_claude_read_edit_and_multi_edit(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(DATA)
    with RpcServer(tmp_path, "--workers", "1", "--tools", "claude") as srv:
        got = srv.result("Read", {"file_path": "a.py"})
        assert (got["encoding"], got["invalid_bytes"]) == ("utf-8", 1)
        assert "     4\tBAD = '\ufffd'" in got["content"]
        srv.result("Edit", {"file_path": "a.py", "old_string": "café",
                            "new_string": "crème"})
        srv.result("MultiEdit", {"file_path": "a.py", "edits": [
            {"old_string": "BAD = '\ufffd'", "new_string": "BAD = '\ufffd' # ÿ"},
            {"old_string": "'✓'", "new_string": "'✔'"}]})
    assert _written(tmp_path) == DATA.replace("café".encode(), "crème".encode()).replace(
        b"'\xff'\n", b"'\xff' # " + "ÿ".encode() + b"\n").replace("✓".encode(), "✔".encode())


def test_anthropic_view_str_replace_and_insert(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(DATA)
    tool = "str_replace_based_edit_tool"
    with RpcServer(tmp_path, "--workers", "1", "--tools", "anthropic") as srv:
        shown = srv.result(tool, {"command": "view", "path": "a.py"})["output"]
        assert "     4\tBAD = '\ufffd'" in shown
        srv.result(tool, {"command": "str_replace", "path": "a.py",
                          "old_str": "BAD = '\ufffd'\nok", "new_str": "BAD = '\ufffd'\nbien"})
        srv.result(tool, {"command": "insert", "path": "a.py", "insert_line": 4,
                          "insert_text": "ÉTÉ = '☀'"})
    assert _written(tmp_path) == DATA.replace(b"\nok = ", b"\nbien = ").replace(
        b"BAD = '\xff'\n", b"BAD = '\xff'\n" + "ÉTÉ = '☀'\n".encode())


def test_codex_read_file_and_apply_patch(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(DATA)
    with RpcServer(tmp_path, "--workers", "1", "--tools", "codex") as srv:
        got = srv.result("read_file", {"file_path": "a.py", "offset": 4, "limit": 1})
        assert got["output"] == "L4: BAD = '\ufffd'"
        srv.result("apply_patch", {"input": "\n".join([
            "*** Begin Patch", "*** Update File: a.py", "@@ def greet():",
            "-    return 'héllo'", "+    return 'hallå'", " BAD = '\ufffd'",
            "-ok = '✓'", "+ok = '✓✓'", "*** End Patch"])})
    assert _written(tmp_path) == DATA.replace("héllo".encode(), "hallå".encode()).replace(
        "'✓'".encode(), "'✓✓'".encode())


def test_gemini_read_file_and_replace(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(DATA)
    with RpcServer(tmp_path, "--workers", "1", "--tools", "gemini") as srv:
        assert srv.result("read_file", {"file_path": "a.py"})["output"] == SHOWN.rstrip("\n")
        srv.result("replace", {"file_path": "a.py", "old_string": "naïve café",
                               "new_string": "naïf"})
    assert _written(tmp_path) == DATA.replace("naïve café".encode(), "naïf".encode())


def test_shadow_read_and_edit(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(DATA)
    with RpcServer(tmp_path, "--workers", "1", "--tools", "shadow") as srv:
        got = srv.result("Read", {"file_path": "a.py", "offset": 4, "limit": 1})
        assert got["content"].endswith("BAD = '\ufffd'")
        srv.result("Edit", {"file_path": "a.py", "old": "日本", "new": "東京"})
    assert _written(tmp_path) == DATA.replace("日本".encode(), "東京".encode())


def test_scope_read_file_and_file_info(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(DATA)
    with RpcServer(tmp_path, "--workers", "1", "--tools", "scope") as srv:
        got = srv.result("read_file", {"path": "a.py", "startLine": 4, "endLine": 4})
        assert (got["content"], got["encoding"]) == ("BAD = '\ufffd'\n", "utf-8")
        assert srv.result("get_file_info", {"path": "a.py"})["lines"] == 5
