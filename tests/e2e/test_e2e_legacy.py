"""Legacy encodings over the real server (docs/protocol.md, file.read): a GBK and a
Shift_JIS file round-trip through file.read and file.patch, file.info names their
encoding, every tool set's reader and editor agrees, unencodable text is -32602 with
nothing written, and the python engine finds the decoded text."""

from __future__ import annotations

from pathlib import Path

import pytest
from legacy_texts import TEXTS
from rpc_client import RpcServer, error_code

FILES = {"gbk.py": ("zh_hans", "gbk", "gb18030", "网络连接失败", "服务器没有响应"),
         "sjis.py": ("ja", "shift_jis", "shift_jis", "権限がありません", "許可されていません")}


def _write_all(root: Path) -> dict[str, bytes]:
    written = {}
    for name, (language, codec, *_) in FILES.items():
        written[name] = TEXTS[language].encode(codec)
        (root / name).write_bytes(written[name])
    return written


@pytest.mark.parametrize("name", FILES)
def test_read_patch_read_round_trip(tmp_path: Path, name: str) -> None:
    language, codec, encoding, find, replace = FILES[name]
    data = _write_all(tmp_path)[name]
    with RpcServer(tmp_path, "--workers", "2", "--search-engine", "python") as srv:
        got = srv.result("file.read", {"path": name, "raw": True})
        assert (got["content"], got["encoding"]) == (TEXTS[language], encoding)
        info = srv.result("file.info", {"path": name})
        assert (info["encoding"], info["lines"]) == (encoding, TEXTS[language].count("\n"))
        done = srv.result("file.patch", {"path": name, "expected_version": got["version"],
                                         "patches": [{"find": find, "replace": replace}]})
        assert "+ERRORS = [" in done["diff"] and replace in done["diff"]
        expected = data.replace(find.encode(codec), replace.encode(codec))
        assert (tmp_path / name).read_bytes() == expected
        again = srv.result("file.read", {"path": name, "offset": 12, "limit": 1})
        assert again["encoding"] == encoding
        assert again["content"] == "    12\t" + TEXTS[language].split("\n")[11].replace(
            find, replace)
        found = srv.result("file.search", {"pattern": replace, "output_mode": "count"})
        assert (found["engine"], found["counts"]) == ("python", [{"path": name, "count": 1}])


def test_unencodable_text_is_invalid_params_and_nothing_is_written(tmp_path: Path) -> None:
    data = _write_all(tmp_path)["sjis.py"]
    with RpcServer(tmp_path, "--workers", "1") as srv:
        reply = srv.call("file.patch", {"path": "sjis.py", "patches": [
            {"find": "山田太郎", "replace": "我们"}]})
        assert reply["error"]["code"] == -32602 and error_code(reply) == "invalid_params"
        assert reply["error"]["data"]["encoding"] == "shift_jis"
        assert "shift_jis" in reply["error"]["message"]
    assert (tmp_path / "sjis.py").read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(FILES)


def test_the_claude_and_scope_tools_read_and_edit_in_the_encoding(tmp_path: Path) -> None:
    written = _write_all(tmp_path)
    with RpcServer(tmp_path, "--workers", "2", "--tools", "claude,scope") as srv:
        read = srv.result("Read", {"file_path": "gbk.py"})
        assert read["encoding"] == "gb18030" and "你好，世界" in read["content"]
        srv.result("Edit", {"file_path": "gbk.py", "old_string": "张三",
                            "new_string": "李四"})
        srv.result("MultiEdit", {"file_path": "gbk.py", "edits": [
            {"old_string": "文件未找到", "new_string": "找不到文件"},
            {"old_string": "权限不足", "new_string": "没有权限"}]})
        expected = written["gbk.py"]
        for old, new in (("张三", "李四"), ("文件未找到", "找不到文件"), ("权限不足", "没有权限")):
            expected = expected.replace(old.encode("gbk"), new.encode("gbk"))
        assert (tmp_path / "gbk.py").read_bytes() == expected
        scoped = srv.result("read_file", {"path": "sjis.py", "startLine": 4, "endLine": 4})
        assert scoped["encoding"] == "shift_jis"
        assert scoped["content"] == TEXTS["ja"].split("\n")[3] + "\n"
        assert srv.result("get_file_info", {"path": "sjis.py"})["lines"] == 12


def test_the_shadow_edit_keeps_the_encoding(tmp_path: Path) -> None:
    data = _write_all(tmp_path)["sjis.py"]
    with RpcServer(tmp_path, "--workers", "1", "--tools", "shadow") as srv:
        got = srv.result("Edit", {"file_path": "sjis.py", "old": "山田太郎", "new": "佐藤花子"})
        assert got["replacements"] == 1
        shown = srv.result("Read", {"file_path": "sjis.py", "offset": 3, "limit": 1})
        assert shown["content"] == '     3\tDEFAULT_NAME = "佐藤花子"'
    assert (tmp_path / "sjis.py").read_bytes() == data.replace(
        "山田太郎".encode("shift_jis"), "佐藤花子".encode("shift_jis"))
