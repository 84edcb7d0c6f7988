"""file.patch on real files: tiers, errors, encodings, atomicity, dry runs and diffs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fuzzing import examples
from chorus_tools.tools.context import Limits, ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.patch.patch import patch
from chorus_tools.tools.confine.sandbox import version_of


def edits(*pairs: tuple[str, str] | tuple[str, str, bool]) -> list[dict[str, Any]]:
    out = []
    for pair in pairs:
        p: dict[str, Any] = {"find": pair[0], "replace": pair[1]}
        if len(pair) == 3:
            p["replace_all"] = pair[2]
        out.append(p)
    return out


def fails(code: str, ctx: ToolContext, path: str, patches: list[dict[str, Any]],
          **kw: Any) -> ToolError:
    with pytest.raises(ToolError) as info:
        patch(ctx, path, patches, **kw)
    assert info.value.code == code, info.value.message
    return info.value


# --- the happy paths -------------------------------------------------------------------

def test_exact_patch_writes_and_reports(ctx: ToolContext, root: Path) -> None:
    f = root / "a.py"
    f.write_text("def f():\n    return 1\n")
    res = patch(ctx, "a.py", edits(("return 1", "return 2")))
    assert f.read_text() == "def f():\n    return 2\n"
    assert res["success"] is True
    assert res["patches_applied"] == 1 and res["replacements"] == 1
    assert res["matches"] == [{"patch_index": 0, "tier": "exact", "count": 1, "lines": [2]}]
    assert res["version"] == version_of(os.stat(f))
    assert "--- a/a.py\n+++ b/a.py\n" in res["diff"]
    assert "-    return 1\n+    return 2\n" in res["diff"]


def test_patches_apply_in_order_to_the_previous_result(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("one\ntwo\nthree\n")
    res = patch(ctx, "a.txt", edits(("one\n", "zero\none\n"), ("zero", "ZERO"),
                                    ("three", "3")))
    assert (root / "a.txt").read_text() == "ZERO\none\ntwo\n3\n"
    # lines are counted in the file as it was before each patch: 'three' moved to line 4
    assert [m["lines"] for m in res["matches"]] == [[1], [1], [4]]
    assert res["replacements"] == 3


def test_replace_all_replaces_every_occurrence(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("x = 1\ny = x\nz = x + x\n")
    res = patch(ctx, "a.txt", edits(("x", "w", True)))
    assert (root / "a.txt").read_text() == "w = 1\ny = w\nz = w + w\n"
    assert res["replacements"] == 4
    assert res["matches"] == [{"patch_index": 0, "tier": "exact", "count": 4,
                               "lines": [1, 2, 3, 3]}]


def test_replace_all_with_a_single_occurrence(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("alpha\n")
    res = patch(ctx, "a.txt", edits(("alpha", "beta", True)))
    assert res["replacements"] == 1 and (root / "a.txt").read_text() == "beta\n"


def test_symlink_inside_is_followed_and_stays_a_link(ctx: ToolContext, root: Path) -> None:
    (root / "real.txt").write_text("old\n")
    (root / "link.txt").symlink_to("real.txt")
    patch(ctx, "link.txt", edits(("old", "new")))
    assert (root / "link.txt").is_symlink()
    assert (root / "real.txt").read_text() == "new\n"


def test_hard_link_keeps_old_content(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("old\n")
    os.link(root / "a.txt", root / "b.txt")
    patch(ctx, "a.txt", edits(("old", "new")))
    assert (root / "a.txt").read_text() == "new\n"
    assert (root / "b.txt").read_text() == "old\n"


def test_permission_bits_are_kept(ctx: ToolContext, root: Path) -> None:
    f = root / "run.sh"
    f.write_text("echo a\n")
    f.chmod(0o751)
    patch(ctx, "run.sh", edits(("echo a", "echo b")))
    assert (f.stat().st_mode & 0o777) == 0o751


# --- the tiers ---------------------------------------------------------------------------

def test_exact_duplicate_is_not_unique_at_once(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("foo()\nbar\nfoo()\n\nfoo()\n")
    err = fails("find_not_unique", ctx, "a.txt", edits(("foo()", "baz()")))
    assert err.details["count"] == 3
    assert err.details["lines"] == [1, 3, 5]
    assert err.details["patch_index"] == 0
    assert "replace_all" in err.message


def test_line_endings_tier_matches_lf_find_in_crlf_file(ctx: ToolContext, root: Path) -> None:
    f = root / "win.txt"
    f.write_bytes(b"first\r\nsecond\r\nthird\r\n")
    res = patch(ctx, "win.txt", edits(("first\nsecond\n", "1st\n2nd\n2.5th\n")))
    assert f.read_bytes() == b"1st\r\n2nd\r\n2.5th\r\nthird\r\n"
    assert res["matches"][0]["tier"] == "line_endings"
    assert res["matches"][0]["lines"] == [1]


def test_line_endings_tier_matches_crlf_find_in_lf_file(ctx: ToolContext, root: Path) -> None:
    f = root / "unix.txt"
    f.write_bytes(b"a\nb\nc\n")
    res = patch(ctx, "unix.txt", edits(("b\r\nc", "B\r\nC")))
    assert f.read_bytes() == b"a\nB\nC\n"
    assert res["matches"][0]["tier"] == "line_endings"
    assert res["matches"][0]["lines"] == [2]


def test_line_endings_tier_must_be_unique(ctx: ToolContext, root: Path) -> None:
    (root / "w.txt").write_bytes(b"x\r\ny\r\nx\r\ny\r\n")
    err = fails("find_not_unique", ctx, "w.txt", edits(("x\ny", "z")))
    assert err.details["count"] == 2 and err.details["lines"] == [1, 3]
    assert err.details["tier"] == "line_endings"


def test_line_endings_tier_replace_all(ctx: ToolContext, root: Path) -> None:
    f = root / "w.txt"
    f.write_bytes(b"x\r\ny\r\nx\r\ny\r\n")
    res = patch(ctx, "w.txt", edits(("x\ny", "z", True)))
    assert f.read_bytes() == b"z\r\nz\r\n"
    assert res["matches"][0] == {"patch_index": 0, "tier": "line_endings", "count": 2,
                                 "lines": [1, 3]}


def test_exact_replacement_uses_the_files_crlf(ctx: ToolContext, root: Path) -> None:
    f = root / "w.txt"
    f.write_bytes(b"a\r\nb\r\n")
    res = patch(ctx, "w.txt", edits(("b", "b\nc")))
    assert res["matches"][0]["tier"] == "exact"
    assert f.read_bytes() == b"a\r\nb\r\nc\r\n"


def test_mixed_endings_follow_the_region_replaced(ctx: ToolContext, root: Path) -> None:
    f = root / "mixed.txt"
    f.write_bytes(b"a\r\nb\r\nc\nd\ne\n")
    patch(ctx, "mixed.txt", edits(("a\nb\n", "A\nB\n")))
    assert f.read_bytes() == b"A\r\nB\r\nc\nd\ne\n"
    patch(ctx, "mixed.txt", edits(("d\n", "D1\nD2\n")))
    assert f.read_bytes() == b"A\r\nB\r\nc\nD1\nD2\ne\n"
    # a region without a line break takes the file's prevailing ending (here LF: 3 to 2)
    patch(ctx, "mixed.txt", edits(("e", "E1\nE2")))
    assert f.read_bytes() == b"A\r\nB\r\nc\nD1\nD2\nE1\nE2\n"


def test_indentation_tier_reindents_the_replacement(ctx: ToolContext, root: Path) -> None:
    f = root / "a.py"
    f.write_text("class A:\n    def f(self):\n        x = 1\n        return x\n")
    res = patch(ctx, "a.py", edits(("def f(self):\n    x = 1\n",
                                    "def f(self):\n    if ok:\n\n        x = 2\n")))
    assert f.read_text() == ("class A:\n    def f(self):\n        if ok:\n\n"
                             "            x = 2\n        return x\n")
    assert res["matches"] == [{"patch_index": 0, "tier": "indentation", "count": 1,
                               "lines": [2]}]


def test_indentation_tier_ignores_trailing_whitespace(ctx: ToolContext, root: Path) -> None:
    f = root / "a.txt"
    f.write_text("  alpha   \n  beta\t\n")
    res = patch(ctx, "a.txt", edits(("alpha\nbeta", "gamma")))
    assert f.read_text() == "  gamma\n"
    assert res["matches"][0]["tier"] == "indentation"


def test_indentation_tier_blank_lines_in_replace_stay_empty(ctx: ToolContext,
                                                            root: Path) -> None:
    f = root / "a.txt"
    f.write_text("\t\tone\n")
    res = patch(ctx, "a.txt", edits(("  one", "  one\n   \n  two")))
    assert res["matches"][0]["tier"] == "indentation"
    assert f.read_text() == "\t\tone\n\n\t\ttwo\n"


def test_indentation_tier_dedents(ctx: ToolContext, root: Path) -> None:
    f = root / "a.py"
    f.write_text("if a:\n  b()\n  c()\n")
    # find is 8 spaces deep in steps of 4 (replace's step), the file 2 deep in steps of 2:
    # a shift of 6 columns fits find but cannot write replace's line at 4 columns, and a
    # change of unit (4 to 2, one level up) fits both
    res = patch(ctx, "a.py", edits(("        b()\n        c()", "        if b():\n"
                                    "            c(2)\n    d()")))
    assert res["matches"][0]["tier"] == "indentation"
    assert f.read_text() == "if a:\n  if b():\n    c(2)\nd()\n"
    compile(f.read_text(), "a.py", "exec")


def test_indentation_tier_spaces_find_on_tab_file(ctx: ToolContext, root: Path) -> None:
    f = root / "main.go"
    f.write_text("func f() {\n\tif err != nil {\n\t\treturn err\n\t}\n}\n")
    patch(ctx, "main.go", edits((
        "    if err != nil {\n        return err\n    }",
        "    if err != nil {\n        log(err)\n        return err\n    }")))
    assert f.read_text() == ("func f() {\n\tif err != nil {\n\t\tlog(err)\n\t\treturn err\n"
                             "\t}\n}\n")


def test_indentation_tier_matches_whole_lines_only(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("    x = compute(a)\n")
    # 'compute(a)  ' is not a whole line: no tier applies, the hint points at line 1
    err = fails("find_not_found", ctx, "a.txt", edits(("y = compute(a)", "z")))
    assert err.details["hint"]["start_line"] == 1


def test_indentation_tier_must_be_unique(ctx: ToolContext, root: Path) -> None:
    (root / "a.py").write_text("def f():\n    pass\n\ndef g():\n    pass\n    pass\n")
    err = fails("find_not_unique", ctx, "a.py", edits(("  pass  \n", "return\n")))
    assert err.details["count"] == 3
    assert err.details["lines"] == [2, 5, 6]
    assert err.details["tier"] == "indentation"


def test_indentation_tier_in_crlf_file(ctx: ToolContext, root: Path) -> None:
    f = root / "a.cs"
    f.write_bytes(b"{\r\n    a();\r\n    b();\r\n}\r\n")
    res = patch(ctx, "a.cs", edits(("a();\nb();\n", "a();\n  c();\n")))
    assert res["matches"][0]["tier"] == "indentation"
    # find's lines all fit one shift (4 spaces added): replace goes through the same shift
    assert f.read_bytes() == b"{\r\n    a();\r\n      c();\r\n}\r\n"


def test_indentation_tier_keeps_missing_final_newline(ctx: ToolContext, root: Path) -> None:
    f = root / "a.txt"
    f.write_bytes(b"top\n    last line")
    res = patch(ctx, "a.txt", edits(("last line\n", "final line\n")))
    assert res["matches"][0]["tier"] == "indentation"
    assert f.read_bytes() == b"top\n    final line"


def test_a_near_miss_is_never_applied(ctx: ToolContext, root: Path) -> None:
    f = root / "a.txt"
    f.write_text("value = compute(alpha, beta)\n")
    before = f.read_bytes()
    fails("find_not_found", ctx, "a.txt", edits(("value = compute(alpha, gamma)", "x")))
    assert f.read_bytes() == before


# --- the errors --------------------------------------------------------------------------

def test_not_found_carries_a_hint(ctx: ToolContext, root: Path) -> None:
    body = "".join(f"line number {i}\n" for i in range(1, 40))
    (root / "a.txt").write_text(body + "def compute(alpha, beta):\n    return alpha\n")
    err = fails("find_not_found", ctx, "a.txt",
                edits(("def compute(alpha, gamma):\n    return alpha\n", "x")))
    hint = err.details["hint"]
    assert err.details["patch_index"] == 0 and err.details["path"] == "a.txt"
    assert (hint["start_line"], hint["end_line"]) == (40, 41)
    assert hint["text"] == "def compute(alpha, beta):\n    return alpha"
    assert 0.5 <= hint["similarity"] < 1
    assert "40-41" in err.message


def test_not_found_hint_is_null_when_nothing_is_close(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("alpha\nbeta\n")
    err = fails("find_not_found", ctx, "a.txt",
                edits(("completely unrelated sentence here", "x")))
    assert err.details["hint"] is None


def test_all_or_nothing(ctx: ToolContext, root: Path) -> None:
    f = root / "a.txt"
    f.write_text("one\ntwo\n")
    version = version_of(os.stat(f))
    err = fails("find_not_found", ctx, "a.txt", edits(("one", "1"), ("three", "3")))
    assert err.details["patch_index"] == 1
    assert "after the earlier patches" in err.message
    assert f.read_text() == "one\ntwo\n"
    assert version_of(os.stat(f)) == version
    assert [p.name for p in root.iterdir()] == ["a.txt"]


def test_second_patch_not_unique_leaves_file(ctx: ToolContext, root: Path) -> None:
    f = root / "a.txt"
    f.write_text("a\nb\n")
    err = fails("find_not_unique", ctx, "a.txt", edits(("b", "a"), ("a", "c")))
    assert err.details["patch_index"] == 1 and err.details["lines"] == [1, 2]
    assert f.read_text() == "a\nb\n"


def test_empty_patches_is_invalid(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    err = fails("invalid_params", ctx, "a.txt", [])
    assert err.details["param"] == "patches"


def test_find_equal_to_replace_is_invalid(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("a\nb\n")
    err = fails("invalid_params", ctx, "a.txt", edits(("a", "A"), ("b", "b")))
    assert err.details["param"] == "patches[1].replace"
    assert (root / "a.txt").read_text() == "a\nb\n"


def test_empty_find_on_existing_file_is_invalid(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    err = fails("invalid_params", ctx, "a.txt", edits(("", "new")))
    assert err.details["param"] == "patches[0].find"
    err = fails("invalid_params", ctx, "a.txt", edits(("a", "b"), ("b", "c"), ("", "d")))
    assert err.details["param"] == "patches[2].find"
    assert (root / "a.txt").read_text() == "a\n"


def test_missing_file_with_a_find_is_not_found(ctx: ToolContext, root: Path) -> None:
    err = fails("file_not_found", ctx, "nope.txt", edits(("a", "b")))
    assert err.details["path"] == "nope.txt"
    assert not (root / "nope.txt").exists()


def test_missing_parent_directory(ctx: ToolContext, root: Path) -> None:
    err = fails("file_not_found", ctx, "no/dir/new.txt", edits(("", "hello\n")))
    assert "file.write" in err.message
    assert not (root / "no").exists()


def test_binary_file_is_refused(ctx: ToolContext, root: Path) -> None:
    (root / "b.bin").write_bytes(b"abc\0def")
    err = fails("binary_file", ctx, "b.bin", edits(("abc", "x")))
    assert err.details["size"] == 7
    (root / "i.png").write_bytes(b"\x89PNG\r\n\x1a\nrest of it")
    err = fails("binary_file", ctx, "i.png", edits(("rest", "x")))
    assert err.details["mime_type"] == "image/png"
    assert (root / "b.bin").read_bytes() == b"abc\0def"


def test_directory_fifo_and_outside(ctx: ToolContext, root: Path, outside: Path) -> None:
    (root / "d").mkdir()
    fails("is_directory", ctx, "d", edits(("a", "b")))
    os.mkfifo(root / "pipe")
    fails("not_a_regular_file", ctx, "pipe", edits(("a", "b")))
    fails("path_outside_workspace", ctx, "../outside/canary.txt", edits(("CANARY", "x")))
    (root / "escape").symlink_to("../outside/canary.txt")
    fails("path_outside_workspace", ctx, "escape", edits(("CANARY", "x")))
    assert (outside / "canary.txt").read_text() == "CANARY-OUTSIDE\n"


def test_expected_version(ctx: ToolContext, root: Path) -> None:
    f = root / "a.txt"
    f.write_text("a\n")
    version = version_of(os.stat(f))
    err = fails("conflict", ctx, "a.txt", edits(("a", "b")), expected_version="stale")
    assert f.read_text() == "a\n" and err.details["path"] == "a.txt"
    res = patch(ctx, "a.txt", edits(("a", "b")), expected_version=version)
    assert f.read_text() == "b\n" and res["version"] != version
    fails("conflict", ctx, "a.txt", edits(("b", "c")), expected_version=version)


def test_too_large_result(root: Path) -> None:
    from chorus_tools.tools.confine.sandbox import Workspace
    ctx = ToolContext(ws=Workspace(str(root)), limits=Limits(max_write_bytes=10))
    (root / "a.txt").write_text("a\n")
    err = fails("file_too_large", ctx, "a.txt", edits(("a", "a" * 20)))
    assert err.details["limit"] == 10 and err.details["size"] == 21
    os.close(ctx.ws.root_fd)


# --- creation ----------------------------------------------------------------------------

def test_create_missing_file_with_empty_find(ctx: ToolContext, root: Path) -> None:
    res = patch(ctx, "sub.txt", edits(("", "hello\nworld\n")))
    assert (root / "sub.txt").read_text() == "hello\nworld\n"
    assert res["matches"] == [{"patch_index": 0, "tier": "exact", "count": 1, "lines": [1]}]
    assert res["diff"].startswith("--- /dev/null\n+++ b/sub.txt\n")
    assert res["version"] == version_of(os.stat(root / "sub.txt"))


def test_create_then_edit_in_one_call(ctx: ToolContext, root: Path) -> None:
    (root / "d").mkdir()
    res = patch(ctx, "d/new.txt", edits(("", "a\nb\n"), ("b", "c")))
    assert (root / "d" / "new.txt").read_text() == "a\nc\n"
    assert res["replacements"] == 2


def test_create_dry_run_writes_nothing(ctx: ToolContext, root: Path) -> None:
    res = patch(ctx, "new.txt", edits(("", "x\n")), dry_run=True)
    assert not (root / "new.txt").exists()
    assert res["version"] is None
    assert "+x\n" in res["diff"]


# --- dry run and diff --------------------------------------------------------------------

def test_dry_run_does_not_write(ctx: ToolContext, root: Path) -> None:
    f = root / "a.txt"
    f.write_text("a\nb\n")
    version = version_of(os.stat(f))
    res = patch(ctx, "a.txt", edits(("b", "c")), dry_run=True)
    assert f.read_text() == "a\nb\n"
    assert res["version"] == version
    assert res["matches"][0]["tier"] == "exact"
    assert "-b\n+c\n" in res["diff"]


def test_dry_run_checks_like_a_real_run(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("a\na\n")
    fails("conflict", ctx, "a.txt", edits(("a", "b", True)), dry_run=True,
          expected_version="old")
    fails("find_not_unique", ctx, "a.txt", edits(("a", "b")), dry_run=True)
    fails("find_not_found", ctx, "a.txt", edits(("zzz", "b")), dry_run=True)


def test_diff_marks_missing_final_newline(ctx: ToolContext, root: Path) -> None:
    f = root / "a.txt"
    f.write_bytes(b"a\nb")
    res = patch(ctx, "a.txt", edits(("b", "c")))
    assert f.read_bytes() == b"a\nc"
    assert res["diff"].endswith("-b\n\\ No newline at end of file\n"
                                "+c\n\\ No newline at end of file\n")


def test_diff_is_capped_with_a_marker(root: Path) -> None:
    from chorus_tools.tools.confine.sandbox import Workspace
    ctx = ToolContext(ws=Workspace(str(root)), limits=Limits(max_diff_bytes=300))
    (root / "a.txt").write_text("".join(f"line {i}\n" for i in range(100)))
    res = patch(ctx, "a.txt", edits(("line", "LINE", True)))
    diff = res["diff"]
    assert len(diff.encode()) <= 300
    last = diff.splitlines()[-1]
    assert last.startswith("... diff truncated:") and "more lines" in last
    assert diff.startswith("--- a/a.txt\n+++ b/a.txt\n@@ ")
    assert (root / "a.txt").read_text().count("LINE") == 100
    os.close(ctx.ws.root_fd)


def test_diff_uses_workspace_relative_path(ctx: ToolContext, root: Path) -> None:
    (root / "d").mkdir()
    (root / "d" / "x.txt").write_text("a\n")
    res = patch(ctx, str(root / "d" / "x.txt"), edits(("a", "b")))
    assert res["diff"].startswith("--- a/d/x.txt\n+++ b/d/x.txt\n")


# --- encodings and line endings ----------------------------------------------------------

@pytest.mark.parametrize("encoding, bom", [("utf-8-sig", b"\xef\xbb\xbf"),
                                           ("utf-16-le", b"\xff\xfe"),
                                           ("utf-16-be", b"\xfe\xff")])
def test_bom_encodings_are_preserved(ctx: ToolContext, root: Path, encoding: str,
                                     bom: bytes) -> None:
    codec = "utf-8" if encoding == "utf-8-sig" else encoding
    f = root / "t.txt"
    f.write_bytes(bom + "héllo\r\nwörld\r\n".encode(codec))
    res = patch(ctx, "t.txt", edits(("wörld\n", "wörld ✓\nmore\n")))
    assert res["matches"][0]["tier"] == "line_endings"
    assert f.read_bytes() == bom + "héllo\r\nwörld ✓\r\nmore\r\n".encode(codec)
    assert "+wörld ✓\r\n" in res["diff"]


def test_latin1_is_preserved(ctx: ToolContext, root: Path) -> None:
    f = root / "l.txt"
    f.write_bytes("café crème\nfin\n".encode("latin-1"))
    patch(ctx, "l.txt", edits(("crème", "brûlée")))
    assert f.read_bytes() == "café brûlée\nfin\n".encode("latin-1")


def test_latin1_cannot_take_other_characters(ctx: ToolContext, root: Path) -> None:
    f = root / "l.txt"
    f.write_bytes("café\n".encode("latin-1"))
    err = fails("invalid_params", ctx, "l.txt", edits(("caf", "CAF"), ("é", "€")))
    assert err.details["param"] == "patches[1].replace"
    assert f.read_bytes() == "café\n".encode("latin-1")


def test_no_trailing_newline_is_preserved(ctx: ToolContext, root: Path) -> None:
    f = root / "a.txt"
    f.write_bytes(b"one\ntwo")
    patch(ctx, "a.txt", edits(("one", "uno")))
    assert f.read_bytes() == b"uno\ntwo"


def test_crlf_file_stays_crlf(ctx: ToolContext, root: Path) -> None:
    f = root / "a.txt"
    f.write_bytes(b"a\r\nb\r\nc\r\n")
    patch(ctx, "a.txt", edits(("a\r\nb", "x\r\ny\r\nz")))
    assert f.read_bytes() == b"x\r\ny\r\nz\r\nc\r\n"


# --- properties --------------------------------------------------------------------------

def occurs(text: str, find: str) -> int:
    """Occurrences counted the way uniqueness is judged: overlapping ones too."""
    return sum(text.startswith(find, i) for i in range(len(text)))


_TEXT = st.text(alphabet=st.sampled_from("abcdefgh \n\t\u00e9\u4e2d"), max_size=60)


@settings(max_examples=examples(150), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=_TEXT.filter(bool), data=st.data(), replace=_TEXT.filter(bool),
       encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16-le", "utf-16-be"]))
def test_exact_patch_then_inverse_restores_bytes(ctx: ToolContext, root: Path, body: str,
                                                 data: st.DataObject, replace: str,
                                                 encoding: str) -> None:
    start = data.draw(st.integers(0, len(body) - 1))
    find = body[start:data.draw(st.integers(start + 1, len(body)))]
    assume(find != replace and occurs(body, find) == 1)
    bom = {"utf-8-sig": b"\xef\xbb\xbf", "utf-16-le": b"\xff\xfe",
           "utf-16-be": b"\xfe\xff"}.get(encoding, b"")
    original = bom + body.encode("utf-8" if encoding == "utf-8-sig" else encoding)
    f = root / "p.txt"
    f.write_bytes(original)
    first = patch(ctx, "p.txt", edits((find, replace)))
    assert first["matches"][0]["tier"] == "exact"
    assume(occurs(body.replace(find, replace), replace) == 1)
    patch(ctx, "p.txt", edits((replace, find)))
    assert f.read_bytes() == original


@settings(max_examples=examples(100), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.text(alphabet="xy \u00e9", max_size=8), min_size=1, max_size=8),
       pick=st.tuples(st.integers(0, 7), st.integers(1, 3)),
       new=st.lists(st.text(alphabet="xyz", max_size=5), min_size=1, max_size=3))
def test_crlf_line_patch_then_inverse_restores_bytes(ctx: ToolContext, root: Path,
                                                     lines: list[str],
                                                     pick: tuple[int, int],
                                                     new: list[str]) -> None:
    # a first line the patches never touch keeps the file latin-1 (pure ASCII reads as UTF-8)
    body = "# caf\u00e9\r\n" + "".join(line + "\r\n" for line in lines)
    start = min(pick[0], len(lines) - 1)
    find = "".join(line + "\r\n" for line in lines[start:start + pick[1]])
    replace = "".join(line + "\r\n" for line in new)
    assume(find != replace and occurs(body, find) == 1)
    original = body.encode("latin-1")
    f = root / "c.txt"
    f.write_bytes(original)
    patch(ctx, "c.txt", edits((find, replace)))
    assume(occurs(f.read_bytes().decode("latin-1"), replace) == 1)
    patch(ctx, "c.txt", edits((replace, find)))
    assert f.read_bytes() == original


def test_overlapping_occurrences_are_not_unique(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("x\n\n\ny\n")
    err = fails("find_not_unique", ctx, "a.txt", edits(("\n\n", "\n")))
    assert err.details["count"] == 2 and err.details["lines"] == [1, 2]
    res = patch(ctx, "a.txt", edits(("\n\n", "\n", True)))  # disjoint, like str.replace
    assert res["replacements"] == 1 and (root / "a.txt").read_text() == "x\n\ny\n"


def test_edit_in_missing_directory(ctx: ToolContext, root: Path) -> None:
    err = fails("file_not_found", ctx, "no/such.txt", edits(("a", "b")))
    assert "parent directory does not exist" in err.message
    assert err.details == {"path": "no/such.txt"}


def test_find_not_unique_listed_every_occurrence_of_a_short_find_in_a_huge_file(
        ctx: ToolContext, root: Path) -> None:
    """Issue 22 fault 3: a short find on a large single-line file made a reply holding every
    occurrence (millions) and gigabytes of worker memory. Counting stops at 1000, the list
    holds 100, and memory follows the file, not the number of occurrences."""
    import tracemalloc
    size = 4 << 20
    (root / "one.txt").write_bytes(b"ab" * (size // 2))
    tracemalloc.start()
    try:
        err = fails("find_not_unique", ctx, "one.txt", edits(("a", "c")))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert err.details["count"] == 1000 and err.details["count_exact"] is False
    assert err.details["lines"] == [1] * 100 and err.details["more_lines"] == 900
    assert "at least 1000 times" in err.message
    assert peak <= 4 * size + (16 << 20), peak


def test_find_not_unique_counts_exactly_below_the_cap(ctx: ToolContext, root: Path) -> None:
    (root / "many.txt").write_text("x\n" * 150)
    err = fails("find_not_unique", ctx, "many.txt", edits(("x\n", "y\n")))
    assert err.details["count"] == 150 and "count_exact" not in err.details
    assert err.details["lines"] == list(range(1, 101)) and err.details["more_lines"] == 50


def test_regression_indentation_tier_grew_faster_than_linearly(ctx: ToolContext,
                                                               root: Path) -> None:
    """Issue 36 fault 7: the indentation tier compared a slice of lines at every line that
    could start a region, so a find of many repeated lines (`}`) in a file of them was
    quadratic: 1 MiB took 26 s. It is one string search now (a generous bound: ~0.3 s)."""
    import time
    lines = 1 << 18  # 1 MiB of "  }\n"
    (root / "braces.txt").write_text("  }\n" * lines + "  end\n")
    find = "}\n" * (lines // 2) + "end\n"  # flush left: a shift
    started = time.monotonic()
    done = patch(ctx, "braces.txt", [{"find": find, "replace": "x\n"}])
    took = time.monotonic() - started
    assert done["matches"] == [{"patch_index": 0, "tier": "indentation", "count": 1,
                                "lines": [lines // 2 + 1]}]
    assert (root / "braces.txt").read_text() == "  }\n" * (lines // 2) + "  x\n"
    assert took < 10, took


def test_indentation_tier_counts_overlapping_and_disjoint_regions(ctx: ToolContext,
                                                                 root: Path) -> None:
    """The string search finds each region at its line: overlapping ones are not unique,
    replace_all takes them without overlap."""
    (root / "b.txt").write_text("start\n  a\n  a\n  a\nend\n")
    err = fails("find_not_unique", ctx, "b.txt", edits(("\ta\n\ta\n", "\tb\n")))
    assert err.details["lines"] == [2, 3] and err.details["tier"] == "indentation"
    done = patch(ctx, "b.txt", [{"find": "\ta\n", "replace": "\tb\n", "replace_all": True}])
    assert done["matches"][0]["lines"] == [2, 3, 4]
    assert (root / "b.txt").read_text() == "start\n  b\n  b\n  b\nend\n"
