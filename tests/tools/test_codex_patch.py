"""apply_patch's engine (tools/dialects/codex_patch, codex_seek, codex_edit) called
directly: Codex's four matching tiers and anchors made strict (a hunk that fits two places
is find_not_unique, one found nowhere find_not_found with the hint), edits written by the
core's matcher (line endings, indentation mapping, encodings), and the whole patch all or
nothing across files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chorus_tools.tools.confine.sandbox import version_of
from chorus_tools.tools.context import ToolContext, sha256_hex
from chorus_tools.tools.dialects.codex import apply_patch
from chorus_tools.tools.errors import ToolError


def patch(*body: str) -> str:
    return "\n".join(["*** Begin Patch", *body, "*** End Patch"])


def update(path: str, *lines: str) -> str:
    return patch(f"*** Update File: {path}", *lines)


def fails(ctx: ToolContext, text: str, code: str) -> ToolError:
    with pytest.raises(ToolError) as info:
        apply_patch(ctx, text)
    assert info.value.code == code, info.value.message
    return info.value


TWO = "def f():\n    return 1\n\ndef g():\n    return 1\n"


# matching tiers --------------------------------------------------------------------------

@pytest.mark.parametrize("file_text, old, new, expected", [
    ("a\nb\nc\n", "b", "B", "a\nB\nc\n"),  # exact
    ("a\nb   \nc\n", "b", "B", "a\nB\nc\n"),  # trailing whitespace ignored
    ("x = 1\nif x:\n    y = 2\n", "y = 2", "y = 3", "x = 1\nif x:\n    y = 3\n"),  # trimmed:
    # written at the file's indentation, as the core's indentation tier does
    ("s = \u201cquoted\u201d \u2014 dash\n", "s = \"quoted\" - dash", "s = 'new'",
     "s = 'new'\n"),  # Unicode punctuation read as ASCII
    ("a\u00a0b\n", "a b", "ab", "ab\n"),  # a no-break space read as a space
])
def test_tiers(ctx: ToolContext, root: Path, file_text: str, old: str, new: str,
               expected: str) -> None:
    (root / "f.txt").write_text(file_text)
    got = apply_patch(ctx, update("f.txt", "@@", f"-{old}", f"+{new}"))
    assert (root / "f.txt").read_text() == expected
    assert got["files"][0]["action"] == "update"


def test_the_first_tier_with_a_fit_wins_and_must_be_unique(ctx: ToolContext,
                                                           root: Path) -> None:
    (root / "f.txt").write_text("x  \nx\n")  # exact fits line 2 only; rstrip would fit both
    apply_patch(ctx, update("f.txt", "@@", "-x", "+y"))
    assert (root / "f.txt").read_text() == "x  \ny\n"


def test_indentation_is_mapped_through_the_core(ctx: ToolContext, root: Path) -> None:
    (root / "m.py").write_text("class A:\n\tdef f(self):\n\t\treturn 1\n")
    apply_patch(ctx, update("m.py", "@@", "-    def f(self):", "-        return 1",
                            "+    def f(self):", "+        return 2"))
    assert (root / "m.py").read_text() == "class A:\n\tdef f(self):\n\t\treturn 2\n"


def test_crlf_file_keeps_crlf(ctx: ToolContext, root: Path) -> None:
    (root / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    apply_patch(ctx, update("w.txt", "@@", " one", "-two", "+2", "+2b"))
    assert (root / "w.txt").read_bytes() == b"one\r\n2\r\n2b\r\nthree\r\n"


def test_legacy_encoding_is_kept_byte_for_byte(ctx: ToolContext, root: Path) -> None:
    (root / "l.txt").write_bytes("caf\u00e9\nna\u00efve\n".encode("latin-1"))
    apply_patch(ctx, update("l.txt", "@@", "-na\u00efve", "+r\u00e9sum\u00e9"))
    assert (root / "l.txt").read_bytes() == "caf\u00e9\nr\u00e9sum\u00e9\n".encode("latin-1")
    err = fails(ctx, update("l.txt", "@@", "-caf\u00e9", "+\u20ac"), "invalid_params")
    assert err.details["line"] == 2 and "cannot represent" in err.message


def test_a_file_without_a_final_line_break_keeps_it_so(ctx: ToolContext, root: Path) -> None:
    (root / "n.txt").write_text("a\nb")
    apply_patch(ctx, update("n.txt", "@@", " a", "-b", "+c"))
    assert (root / "n.txt").read_text() == "a\nc"


# anchors and uniqueness ------------------------------------------------------------------

def test_context_that_fits_two_places_is_not_unique(ctx: ToolContext, root: Path) -> None:
    (root / "two.py").write_text(TWO)
    err = fails(ctx, update("two.py", "@@", "-    return 1", "+    return 2"),
                "find_not_unique")
    assert {k: err.details[k] for k in ("path", "count", "lines", "line", "patch_index")} == {
        "path": "two.py", "count": 2, "lines": [2, 5], "line": 3, "patch_index": 0}
    assert (root / "two.py").read_text() == TWO


def test_the_anchor_decides(ctx: ToolContext, root: Path) -> None:
    (root / "two.py").write_text(TWO)
    apply_patch(ctx, update("two.py", "@@ def f():", "-    return 1", "+    return 2"))
    assert (root / "two.py").read_text() == TWO.replace("1", "2", 1)


def test_an_ambiguous_anchor_whose_chains_differ_is_not_unique(ctx: ToolContext,
                                                               root: Path) -> None:
    text = "class A:\n    def run(self):\n        pass\nclass B:\n    def run(self):\n" \
           "        pass\n"
    (root / "c.py").write_text(text)
    err = fails(ctx, update("c.py", "@@     def run(self):", "-        pass", "+        x"),
                "find_not_unique")
    assert err.details["lines"] == [3, 6]
    apply_patch(ctx, update("c.py", "@@ class B:", "@@     def run(self):", "-        pass",
                            "+        x"))
    assert (root / "c.py").read_text() == text[:-13] + "        x\n"


def test_an_ambiguous_anchor_whose_chains_agree_is_fine(ctx: ToolContext, root: Path) -> None:
    (root / "c.py").write_text("def run():\n    a\ndef run():\n    b\n")
    apply_patch(ctx, update("c.py", "@@ def run():", "-    b", "+    c"))
    assert (root / "c.py").read_text() == "def run():\n    a\ndef run():\n    c\n"


def test_hunks_are_searched_after_the_one_before(ctx: ToolContext, root: Path) -> None:
    (root / "two.py").write_text(TWO)
    apply_patch(ctx, update("two.py", "@@", " def f():", "-    return 1", "+    return 2",
                            "@@", "-    return 1", "+    return 3"))
    assert (root / "two.py").read_text() == TWO.replace("1", "2", 1).replace("1", "3")


def test_not_found_carries_the_hint_and_the_patch_line(ctx: ToolContext, root: Path) -> None:
    (root / "h.py").write_text("def area(r):\n    return 3.14 * r * r\n")
    err = fails(ctx, update("h.py", "@@", "-    return 3.14 * r ** 2", "+    return pi"),
                "find_not_found")
    assert err.details["line"] == 3 and err.details["patch_index"] == 0
    assert err.details["hint"]["start_line"] == 2
    assert err.message.startswith("Failed to find expected lines in h.py:")


def test_an_anchor_found_nowhere(ctx: ToolContext, root: Path) -> None:
    (root / "h.py").write_text("x\n")
    err = fails(ctx, update("h.py", "@@ def nope():", "-x", "+y"), "find_not_found")
    assert err.details["anchor"] is True and "Failed to find context" in err.message


def test_end_of_file_hunk_matches_only_at_the_end(ctx: ToolContext, root: Path) -> None:
    (root / "e.txt").write_text("end\nmiddle\nend\n")
    apply_patch(ctx, update("e.txt", "@@", "-end", "+END", "*** End of File"))
    assert (root / "e.txt").read_text() == "end\nmiddle\nEND\n"


def test_pure_addition_appends_or_follows_its_anchor(ctx: ToolContext, root: Path) -> None:
    (root / "p.py").write_text("class A:\n    x = 1\n\nz = 2\n")
    apply_patch(ctx, update("p.py", "@@", "+tail = 3"))
    assert (root / "p.py").read_text().endswith("z = 2\ntail = 3\n")
    apply_patch(ctx, update("p.py", "@@ class A:", "+    first = 0"))
    assert (root / "p.py").read_text().startswith("class A:\n    first = 0\n    x = 1\n")


def test_a_final_empty_context_line_may_stand_for_the_last_line_break(
        ctx: ToolContext, root: Path) -> None:
    (root / "t.txt").write_text("a\nb\n")
    apply_patch(ctx, update("t.txt", "@@", "-b", "+c", ""))
    assert (root / "t.txt").read_text() == "a\nc\n"


# operations ------------------------------------------------------------------------------

def test_add_creates_directories_and_replaces_like_codex(ctx: ToolContext, root: Path) -> None:
    got = apply_patch(ctx, patch("*** Add File: deep/er/new.txt", "+hello"))
    assert (root / "deep/er/new.txt").read_text() == "hello\n"
    assert got["output"] == "Success. Updated the following files:\nA deep/er/new.txt\n"
    apply_patch(ctx, patch("*** Add File: deep/er/new.txt", "+again"))
    assert (root / "deep/er/new.txt").read_text() == "again\n"


def test_delete_and_move(ctx: ToolContext, root: Path) -> None:
    (root / "gone.txt").write_text("bye\n")
    (root / "src.txt").write_text("one\n")
    (root / "taken.txt").write_text("old\n")
    got = apply_patch(ctx, patch("*** Delete File: gone.txt", "*** Update File: src.txt",
                                 "*** Move to: sub/dst.txt", "@@", "-one", "+two",
                                 "*** Update File: taken.txt", "*** Move to: src.txt", "@@",
                                 "-old", "+new"))
    assert not (root / "gone.txt").exists() and not (root / "taken.txt").exists()
    assert (root / "sub/dst.txt").read_text() == "two\n"
    assert (root / "src.txt").read_text() == "new\n"
    assert got["output"] == ("Success. Updated the following files:\nM sub/dst.txt\n"
                             "M src.txt\nD gone.txt\n")
    assert [(f["path"], f["action"], f.get("from")) for f in got["files"]] == [
        ("gone.txt", "delete", None), ("sub/dst.txt", "update", "src.txt"),
        ("src.txt", "update", "taken.txt")]
    assert got["files"][0]["version"] is None and got["files"][1]["version"]


def test_operations_on_one_file_chain(ctx: ToolContext, root: Path) -> None:
    apply_patch(ctx, patch("*** Add File: c.txt", "+a", "+b", "*** Update File: c.txt",
                           "@@", "-b", "+B", "*** Update File: c.txt", "@@", " a", "+mid"))
    assert (root / "c.txt").read_text() == "a\nmid\nB\n"


@pytest.mark.parametrize("text, code", [
    (patch("*** Delete File: missing.txt"), "file_not_found"),
    (patch("*** Update File: missing.txt", "@@", "-a", "+b"), "file_not_found"),
    (patch("*** Update File: d", "@@", "-a", "+b"), "is_directory"),
    (patch("*** Delete File: d"), "is_directory"),
    (patch("*** Update File: d/", "@@", "-a", "+b"), "is_directory"),
    (patch("*** Update File: img.png", "@@", "-a", "+b"), "binary_file"),
    (patch("*** Add File: .chorus-tmp-0123456789abcdef", "+x"), "invalid_params"),
    (patch("*** Add File: keep.txt/inner", "+x"), "not_a_directory"),
    (patch("*** Add File: ../escape.txt", "+x"), "path_outside_workspace"),
    (patch("*** Update File: keep.txt", "*** Move to: ../out.txt", "@@", "-changed",
           "+x"), "path_outside_workspace"),
])
def test_refusals_change_nothing(ctx: ToolContext, root: Path, text: str, code: str) -> None:
    (root / "d").mkdir()
    (root / "keep.txt").write_text("keep\n")
    (root / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 8)
    before = sorted(os.listdir(root)), (root / "keep.txt").read_bytes()
    fails(ctx, patch("*** Update File: keep.txt", "@@", "-keep", "+changed",
                     *text.splitlines()[1:-1]), code)
    assert (sorted(os.listdir(root)), (root / "keep.txt").read_bytes()) == before
    assert not (root.parent / "escape.txt").exists() and not (root.parent / "out.txt").exists()


def test_a_later_failing_hunk_leaves_every_file_untouched(ctx: ToolContext,
                                                          root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    fails(ctx, patch("*** Update File: a.txt", "@@", "-a", "+A", "*** Add File: new.txt",
                     "+n", "*** Delete File: b.txt", "*** Update File: b.txt", "@@", "-b",
                     "+B"), "file_not_found")
    assert (root / "a.txt").read_text() == "a\n" and (root / "b.txt").read_text() == "b\n"
    assert not (root / "new.txt").exists()


def test_the_write_limit_is_checked_before_anything_is_written(root: Path,
                                                               ctx: ToolContext) -> None:
    small = ToolContext(ctx.ws, limits=type(ctx.limits)(max_write_bytes=10))
    (root / "a.txt").write_text("a\n")
    fails(small, patch("*** Update File: a.txt", "@@", "-a", "+A",
                       "*** Add File: big.txt", "+" + "x" * 20), "file_too_large")
    assert (root / "a.txt").read_text() == "a\n" and not (root / "big.txt").exists()


def test_the_audit_slot_names_every_file(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    ctx.record = {}
    apply_patch(ctx, patch("*** Update File: a.txt", "@@", "-a", "+A",
                           "*** Delete File: b.txt"))
    assert ctx.record == {
        "sha256_before": sha256_hex(b"a\n"), "sha256_after": sha256_hex(b"A\n"), "bytes": 4,
        "files": [{"path": "a.txt", "sha256_before": sha256_hex(b"a\n"),
                   "sha256_after": sha256_hex(b"A\n"), "bytes": 2},
                  {"path": "b.txt", "sha256_before": sha256_hex(b"b\n"),
                   "sha256_after": None, "bytes": 2}]}
    ctx.record = None


def _in_child_with_file_size_limit(ctx: ToolContext, text: str, limit: int) -> dict:
    """apply_patch in a forked child whose files may not grow past `limit` bytes
    (RLIMIT_FSIZE: the kernel refuses the write with EFBIG, even for root)."""
    import json
    import resource
    import signal
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        try:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
            try:
                out = {"ok": apply_patch(ctx, text)}
            except ToolError as err:
                out = {"code": err.code, "details": err.details}
            os.write(write_end, json.dumps(out, default=str).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        got = json.loads(pipe.read())
    os.waitpid(pid, 0)
    return got


def test_a_failing_write_restores_deleted_files_links_and_edits(ctx: ToolContext,
                                                                 root: Path) -> None:
    """The last file's write fails for real (EFBIG, said file_too_large): the deleted file
    comes back with its mode, the removed symlink comes back, the edited file and the
    created directory are undone."""
    (root / "gone.txt").write_text("gone\n")
    os.chmod(root / "gone.txt", 0o604)
    (root / "target.txt").write_text("target\n")
    (root / "link").symlink_to("target.txt")
    (root / "edit.txt").write_text("edit\n")
    before = {p: (p.read_bytes() if p.is_file() and not p.is_symlink() else os.readlink(p),
                  os.lstat(p).st_mode) for p in root.iterdir()}
    got = _in_child_with_file_size_limit(ctx, patch(
        "*** Delete File: gone.txt", "*** Delete File: link", "*** Update File: edit.txt",
        "@@", "-edit", "+edited", "*** Add File: new/dir/big.txt", "+" + "x" * 5000), 1000)
    assert got["code"] == "file_too_large", got  # the core's word for EFBIG
    assert got["details"]["restored"] == ["gone.txt", "link", "edit.txt"]
    assert "not_restored" not in got["details"]
    after = {p: (p.read_bytes() if p.is_file() and not p.is_symlink() else os.readlink(p),
                 os.lstat(p).st_mode) for p in root.iterdir()}
    assert after == before


def test_an_appended_hunk_does_not_move_the_search(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("a\nb\n")
    apply_patch(ctx, update("a.txt", "@@", "+end", "@@", "-a", "+A"))
    assert (root / "a.txt").read_text() == "A\nb\nend\n"


def test_an_insertion_and_a_replacement_at_one_line(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("head\nx\n")
    apply_patch(ctx, update("a.txt", "@@ head", "+inserted", "@@", "-x", "+y"))
    assert (root / "a.txt").read_text() == "head\ninserted\ny\n"


def test_a_moved_file_keeps_its_permission_bits(ctx: ToolContext, root: Path) -> None:
    (root / "run.sh").write_text("echo hi\n")
    os.chmod(root / "run.sh", 0o751)
    got = apply_patch(ctx, patch("*** Update File: run.sh", "*** Move to: bin/run.sh", "@@",
                                 "-echo hi", "+echo bye"))
    assert os.stat(root / "bin/run.sh").st_mode & 0o777 == 0o751
    assert got["files"][0]["version"] == version_of(os.stat(root / "bin/run.sh"))


def test_absolute_paths_inside_the_workspace(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    got = apply_patch(ctx, patch(f"*** Update File: {root}/a.txt", f"*** Move to: {root}/b.txt",
                                 "@@", "-a", "+b"))
    assert got["output"] == "Success. Updated the following files:\nM b.txt\n"
    assert (root / "b.txt").read_text() == "b\n" and not (root / "a.txt").exists()
