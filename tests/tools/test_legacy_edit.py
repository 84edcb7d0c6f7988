"""Edits keep a legacy file's encoding (docs/protocol.md, file.read and file.patch):
file.patch, the claude Edit/MultiEdit and the shadow Edit write the changed text in the
file's encoding and leave every other byte as it was; text the encoding cannot hold is
invalid_params with nothing written; file.write and scope's write_file write the encoding
they always did. The python search engine searches such a file as its decoded text,
ripgrep as bytes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fanout_runner import run_search
from legacy_texts import TEXTS

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.dialects import claude, scope, shadow
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.mutate.write import write
from chorus_tools.tools.patch.patch import patch
from chorus_tools.tools.read.read import read

EDITS = {  # (language, codec, name, find, replace): a change inside the file's own script
    "gbk": ("zh_hans", "gbk", "gb18030", "网络连接失败", "服务器没有响应"),
    "shift_jis": ("ja", "shift_jis", "shift_jis", "権限がありません", "アクセスが拒否されました"),
    "big5": ("zh_hant", "big5", "big5", "權限不足", "存取被拒"),
    "euc-kr": ("ko", "euc_kr", "euc-kr", "권한이 없습니다", "접근이 거부되었습니다"),
    "cp1251": ("ru", "cp1251", "cp1251", "Недостаточно прав", "Доступ запрещён"),
    "cp1252": ("fr", "cp1252", "cp1252", "Accès refusé", "Accès interdit — désolé"),
}


def _file(root: Path, language: str, codec: str, name: str = "f.py",
          crlf: bool = False) -> bytes:
    body = TEXTS[language].replace("\n", "\r\n") if crlf else TEXTS[language]
    data = body.encode(codec)
    (root / name).write_bytes(data)
    return data


def _spliced(data: bytes, codec: str, find: str, replace: str) -> bytes:
    """The original bytes with only the find's bytes swapped for the replace's."""
    old, new = find.encode(codec), replace.encode(codec)
    assert data.count(old) == 1
    return data.replace(old, new)


@pytest.mark.parametrize("case", EDITS.values(), ids=EDITS.keys())
def test_a_patch_keeps_the_encoding_and_every_other_byte(ctx: ToolContext, root: Path,
                                                         case: tuple[str, ...]) -> None:
    language, codec, name, find, replace = case
    data = _file(root, language, codec)
    done = patch(ctx, "f.py", [{"find": find, "replace": replace}])
    assert done["matches"][0]["tier"] == "exact"
    assert (root / "f.py").read_bytes() == _spliced(data, codec, find, replace)
    assert "+ERRORS" in done["diff"] and replace in done["diff"]
    again = read(ctx, "f.py", raw=True)
    assert (again["content"], again["encoding"]) == (
        TEXTS[language].replace(find, replace), name)


@pytest.mark.parametrize("key", ["gbk", "shift_jis"])
def test_the_looser_tiers_keep_crlf_and_the_encoding(ctx: ToolContext, root: Path,
                                                     key: str) -> None:
    language, codec, _, _, _ = EDITS[key]
    data = _file(root, language, codec, crlf=True)
    lines = TEXTS[language].split("\n")
    find = "\n".join(lines[1:3])  # two lines, sent with \n: the line-endings tier
    replace = lines[2] + "\n" + lines[1]
    done = patch(ctx, "f.py", [{"find": find, "replace": replace}])
    assert done["matches"][0]["tier"] == "line_endings"
    crlf = "\r\n"
    assert (root / "f.py").read_bytes() == data.replace(
        find.replace("\n", crlf).encode(codec), replace.replace("\n", crlf).encode(codec))


UNENCODABLE = {  # a replace the file's encoding has no bytes for
    "shift_jis": ("ja", "shift_jis", "山田太郎", "我们"),
    "big5": ("zh_hant", "big5", "陳大文", "我们"),
    "euc-kr": ("ko", "euc_kr", "홍길동", "홍길동 😀"),
    "cp1251": ("ru", "cp1251", "Иван Петров", "中文"),
    "cp1252": ("fr", "cp1252", "François", "Франсуа"),
}


@pytest.mark.parametrize("case", UNENCODABLE.values(), ids=UNENCODABLE.keys())
def test_text_the_encoding_cannot_hold_is_refused_with_nothing_written(
        ctx: ToolContext, root: Path, case: tuple[str, ...]) -> None:
    language, codec, find, replace = case
    data = _file(root, language, codec)
    before = os.stat(root / "f.py")
    with pytest.raises(ToolError) as err:
        patch(ctx, "f.py", [{"find": "(path):", "replace": "(path, strict=False):"},
                            {"find": find, "replace": replace}])
    assert err.value.code == "invalid_params"
    assert err.value.details["param"] == "patches[1].replace"
    assert err.value.details["encoding"] == read(ctx, "f.py")["encoding"]
    assert (root / "f.py").read_bytes() == data
    assert os.stat(root / "f.py").st_mtime_ns == before.st_mtime_ns
    assert sorted(os.listdir(root)) == ["f.py"]  # no temporary left behind


def test_gb18030_holds_every_character(ctx: ToolContext, root: Path) -> None:
    data = _file(root, "zh_hans", "gbk")
    patch(ctx, "f.py", [{"find": "张三", "replace": "张三 😀"}])
    assert (root / "f.py").read_bytes() == data.replace("张三".encode("gbk"),
                                                        "张三 😀".encode("gb18030"))
    assert read(ctx, "f.py")["encoding"] == "gb18030"


def test_claude_edit_and_multiedit_keep_the_encoding(ctx: ToolContext, root: Path) -> None:
    data = _file(root, "ja", "shift_jis")
    version = claude.read_tool(ctx, file_path="f.py")["version"]
    got = claude.edit_tool(ctx, file_path="f.py", old_string="山田太郎",
                           new_string="鈴木花子", read_version=version)
    data = _spliced(data, "shift_jis", "山田太郎", "鈴木花子")
    assert (root / "f.py").read_bytes() == data
    claude.multi_edit_tool(ctx, file_path="f.py", read_version=got["version"], edits=[
        {"old_string": "こんにちは", "new_string": "こんばんは"},
        {"old_string": "エラーメッセージ", "new_string": "エラーの一覧"}])
    data = _spliced(_spliced(data, "shift_jis", "こんにちは", "こんばんは"),
                    "shift_jis", "エラーメッセージ", "エラーの一覧")
    assert (root / "f.py").read_bytes() == data


def test_shadow_edit_keeps_the_encoding_plain_and_anchored(ctx: ToolContext,
                                                           root: Path) -> None:
    data = _file(root, "zh_hans", "gbk")
    shadow.edit_tool(ctx, file_path="f.py", old="张三", new="李四")
    data = _spliced(data, "gbk", "张三", "李四")
    assert (root / "f.py").read_bytes() == data
    shadow.edit_tool(ctx, file_path="f.py", old="失败", new="中断", before="网络连接",
                     after="，请稍后")
    assert (root / "f.py").read_bytes() == _spliced(data, "gbk", "网络连接失败，请稍后",
                                                    "网络连接中断，请稍后")


def test_file_write_and_scope_write_file_write_their_own_encoding(ctx: ToolContext,
                                                                  root: Path) -> None:
    _file(root, "zh_hans", "gbk")
    write(ctx, "f.py", "# 新内容\n")
    assert (root / "f.py").read_bytes() == "# 新内容\n".encode()
    _file(root, "fr", "cp1252", name="g.txt")
    scope.write_file(ctx, path="g.txt", content="déjà vu\n", encoding="latin-1")
    assert (root / "g.txt").read_bytes() == "déjà vu\n".encode("latin-1")
    scope.write_file(ctx, path="g.txt", content="déjà vu\n")
    assert (root / "g.txt").read_bytes() == "déjà vu\n".encode()


def test_the_python_engine_searches_the_decoded_text_ripgrep_the_bytes(
        ctx: ToolContext, root: Path) -> None:
    _file(root, "zh_hans", "gbk", name="gbk.py")
    _file(root, "ja", "shift_jis", name="sjis.py")
    found = run_search(ctx, "python", pattern="网络|ネットワーク")
    assert [(m["path"], m["line"]) for m in found["matches"]] == [("gbk.py", 12),
                                                                  ("sjis.py", 12)]
    assert found["matches"][0]["content"] == TEXTS["zh_hans"].split("\n")[11]
    # ripgrep reads bytes: non-ASCII patterns do not meet GBK bytes, ASCII ones do, and
    # the bytes that are not UTF-8 show as U+FFFD (docs/protocol.md, file.search)
    assert run_search(ctx, "ripgrep", pattern="网络")["matches"] == []
    shown = run_search(ctx, "ripgrep", pattern="DEFAULT_NAME =", glob="gbk.py")
    assert shown["matches"][0]["content"].startswith('DEFAULT_NAME = "\ufffd')
    by_python = run_search(ctx, "python", pattern="DEFAULT_NAME =", glob="gbk.py")
    assert by_python["matches"][0]["content"] == 'DEFAULT_NAME = "张三"'


TWO_FORMS = "山田 纊 髙橋\n".encode("cp932").replace("纊".encode("cp932"), b"\xfa\x5c") \
    .replace("髙".encode("cp932"), b"\xfb\xfc")  # the IBM forms Windows writes


def test_characters_with_two_byte_forms_keep_theirs_outside_the_change(
        ctx: ToolContext, root: Path) -> None:
    body = TEXTS["ja"].encode("cp932")
    data = TWO_FORMS + body + TWO_FORMS
    (root / "f.py").write_bytes(data)
    assert read(ctx, "f.py")["encoding"] == "cp932"
    patch(ctx, "f.py", [{"find": "山田太郎", "replace": "佐藤花子"},
                        {"find": "山田 纊 髙橋\n", "replace": "山田 纊 髙橋\n# 追記\n",
                         "replace_all": True}])
    added = "# 追記\n".encode("cp932")
    expected = (TWO_FORMS + added + body.replace("山田太郎".encode("cp932"),
                                                 "佐藤花子".encode("cp932"))
                + TWO_FORMS + added)
    assert (root / "f.py").read_bytes() == expected
    patch(ctx, "f.py", [{"find": "山田 纊", "replace": "鈴木 纊", "replace_all": True}])
    assert (root / "f.py").read_bytes() == expected.replace(
        "山田 ".encode("cp932") + b"\xfa\x5c", "鈴木 ".encode("cp932") + b"\xfa\x5c")


def test_an_unencodable_character_in_a_two_form_file_is_named(ctx: ToolContext,
                                                              root: Path) -> None:
    data = TWO_FORMS + TEXTS["ja"].encode("cp932")
    (root / "f.py").write_bytes(data)
    with pytest.raises(ToolError) as err:
        patch(ctx, "f.py", [{"find": "山田太郎", "replace": "王 😀"}])
    assert err.value.code == "invalid_params" and "😀" in err.value.message
    assert (root / "f.py").read_bytes() == data


def test_new_text_takes_the_files_own_form_of_a_character(ctx: ToolContext,
                                                          root: Path) -> None:
    data = TWO_FORMS + TEXTS["ja"].encode("cp932")
    (root / "f.py").write_bytes(data)
    patch(ctx, "f.py", [{"find": "山田太郎", "replace": "纊太郎"}])
    assert (root / "f.py").read_bytes() == data.replace("山田太郎".encode("cp932"),
                                                        b"\xfa\x5c" + "太郎".encode("cp932"))


def test_a_file_mixing_both_forms_keeps_every_unchanged_byte(ctx: ToolContext,
                                                             root: Path) -> None:
    nec = "纊 髙\n".encode("cp932")  # ED40 and EEE0: Python's own forms
    data = TWO_FORMS + TEXTS["ja"].encode("cp932") + nec + TWO_FORMS
    (root / "f.py").write_bytes(data)
    patch(ctx, "f.py", [{"find": "山田 纊 髙橋\n", "replace": "纊 髙橋\n", "replace_all": True},
                        {"find": "こんにちは", "replace": "さようなら"}])
    ibm = TWO_FORMS[len("山田 ".encode("cp932")):]
    assert (root / "f.py").read_bytes() == (
        ibm + TEXTS["ja"].replace("こんにちは", "さようなら").encode("cp932") + nec + ibm)
