"""file.search on both engines: every option and error, on real files."""

from __future__ import annotations

import dataclasses
import os
import pickle
from pathlib import Path
from typing import Any

import pytest

from chorus_tools.tools.context import Limits, ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.walk.fanout import FanOut
from chorus_tools.tools.search.search import FIRST_FILES, search
from fanout_runner import ENGINES, RG_PATH, RG_PCRE2, run_search
from chorus_tools.rpc.process.worker import resolve

@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return request.param


def write(root: Path, rel: str, data: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data)
    else:
        path.write_bytes(data)
    return path


def test_ripgrep_is_found_with_the_package() -> None:
    assert RG_PATH is not None and os.access(RG_PATH, os.X_OK)


def test_seed_example_context_format(ctx: ToolContext, root: Path, engine: str) -> None:
    body = "".join(f"line {n}\n" for n in range(1, 40))
    body += "    # Establish database connection\ndef connect(host, port):\n"
    body += "    return Client(host, port)\n"
    write(root, "src/db/connection.py", body)
    write(root, "src/db/notes.txt", "def connect(x):\n")
    result = run_search(ctx, engine, pattern="def\\s+connect", glob="**/*.py",
                        context_lines=2)
    assert result == {"matches": [{
        "path": "src/db/connection.py", "line": 41,
        "content": "    line 39\n        # Establish database connection\n"
                   "--> def connect(host, port):\n        return Client(host, port)"}],
        "truncated": False, "files_searched": 1, "engine": engine}


def test_content_mode_lines_in_path_then_line_order(ctx: ToolContext, root: Path,
                                                    engine: str) -> None:
    write(root, "b.txt", "x\nfoo 1\nfoo 2\n")
    write(root, "a/z.txt", "foo 3\n")
    write(root, "a.txt", "foo 4\r\n")
    result = run_search(ctx, engine, pattern="foo")
    assert [(m["path"], m["line"], m["content"]) for m in result["matches"]] == [
        ("a.txt", 1, "foo 4"), ("a/z.txt", 1, "foo 3"), ("b.txt", 2, "foo 1"),
        ("b.txt", 3, "foo 2")]
    assert result["truncated"] is False and result["engine"] == engine


def test_max_results_keeps_the_first_and_sets_truncated(ctx: ToolContext, root: Path,
                                                        engine: str) -> None:
    for n in range(60):
        write(root, f"d{n:02}/f.txt", "hit\nhit\n")
    write(root, "d0.txt", "hit\n")  # '.' sorts before '0': first in string order
    result = run_search(ctx, engine, pattern="hit", max_results=3)
    assert [(m["path"], m["line"]) for m in result["matches"]] == [
        ("d0.txt", 1), ("d00/f.txt", 1), ("d00/f.txt", 2)]
    assert result["truncated"] is True
    exact = run_search(ctx, engine, pattern="hit", max_results=121)
    assert len(exact["matches"]) == 121 and exact["truncated"] is False


def test_early_stop_keeps_string_order_where_rg_walks_differently(
        ctx: ToolContext, root: Path, engine: str) -> None:
    for n in range(50):
        write(root, f"a/f{n:02}.txt", "hit\n")
    write(root, "a.txt", "hit\nhit\nhit\n")  # rg walks a/ first; the reply puts a.txt first
    for mode, key in (("content", "matches"), ("files_with_matches", "files")):
        result = run_search(ctx, engine, pattern="hit", max_results=2, output_mode=mode)
        expected = ([{"path": "a.txt", "line": n, "content": "hit"} for n in (1, 2)]
                    if mode == "content" else ["a.txt", "a/f00.txt"])
        assert result[key] == expected and result["truncated"] is True
        # stopped early: the files up to the one holding the first item past the reply
        assert result["files_searched"] == (1 if mode == "content" else 3)


def test_files_with_matches_and_count(ctx: ToolContext, root: Path, engine: str) -> None:
    write(root, "one.txt", "a\nb a\n")
    write(root, "two.txt", "nothing\n")
    write(root, "three.txt", "a a a\n")
    files = run_search(ctx, engine, pattern="a", output_mode="files_with_matches")
    assert files == {"files": ["one.txt", "three.txt"], "truncated": False,
                     "files_searched": 3, "engine": engine}
    counts = run_search(ctx, engine, pattern="a", output_mode="count")
    assert counts == {"counts": [{"path": "one.txt", "count": 2},
                                 {"path": "three.txt", "count": 1}],
                      "total": 3, "truncated": False, "files_searched": 3,
                      "engine": engine}
    capped = run_search(ctx, engine, pattern="a", output_mode="count", max_results=1)
    assert capped["counts"] == [{"path": "one.txt", "count": 2}]
    assert capped["total"] == 2 and capped["truncated"] is True
    capped = run_search(ctx, engine, pattern="a", output_mode="files_with_matches",
                        max_results=1)
    assert capped["files"] == ["one.txt"] and capped["truncated"] is True


def test_case_literal_and_glob_list(ctx: ToolContext, root: Path, engine: str) -> None:
    write(root, "a.py", "Foo.bar()\n")
    write(root, "b.py", "fooXbar\n")
    write(root, "c.txt", "foo.bar\n")
    write(root, "sub/d.py", "foo.bar\n")
    assert [m["path"] for m in run_search(ctx, engine, pattern="foo.bar")["matches"]] == [
        "b.py", "c.txt", "sub/d.py"]
    insensitive = run_search(ctx, engine, pattern="foo.bar", case_sensitive=False)
    assert [m["path"] for m in insensitive["matches"]] == ["a.py", "b.py", "c.txt", "sub/d.py"]
    literal = run_search(ctx, engine, pattern="foo.bar", literal=True)
    assert [m["path"] for m in literal["matches"]] == ["c.txt", "sub/d.py"]
    globbed = run_search(ctx, engine, pattern="foo", case_sensitive=False,
                         glob=["*.py", "!sub/**"])
    assert [m["path"] for m in globbed["matches"]] == ["a.py", "b.py"]


def test_path_limits_the_search(ctx: ToolContext, root: Path, engine: str) -> None:
    write(root, ".gitignore", "skip.txt\n")
    write(root, "sub/skip.txt", "needle\n")
    write(root, "sub/keep.txt", "needle\n")
    write(root, "other.txt", "needle\n")
    result = run_search(ctx, engine, pattern="needle", path="sub")
    assert [m["path"] for m in result["matches"]] == ["sub/keep.txt"]
    one = run_search(ctx, engine, pattern="needle", path="sub/skip.txt")
    assert [m["path"] for m in one["matches"]] == ["sub/skip.txt"]
    absolute = run_search(ctx, engine, pattern="needle", path=str(root / "sub"))
    assert [m["path"] for m in absolute["matches"]] == ["sub/keep.txt"]


def test_hidden_and_ignored_are_skipped_unless_asked(ctx: ToolContext, root: Path,
                                                     engine: str) -> None:
    write(root, ".gitignore", "build/\n*.log\n")
    write(root, "build/out.txt", "needle\n")
    write(root, "x.log", "needle\n")
    write(root, ".hidden/h.txt", "needle\n")
    write(root, "nested/.ignore", "secret.txt\n")
    write(root, "nested/secret.txt", "needle\n")
    write(root, "nested/plain.txt", "needle\n")

    def paths(**kw: Any) -> list[str]:
        return [m["path"] for m in run_search(ctx, engine, pattern="needle", **kw)["matches"]]

    assert paths() == ["nested/plain.txt"]
    assert paths(include_hidden=True) == [".hidden/h.txt", "nested/plain.txt"]
    assert paths(include_ignored=True) == ["build/out.txt", "nested/plain.txt",
                                           "nested/secret.txt", "x.log"]


def test_multiline_spans_and_merges_touching_matches(ctx: ToolContext, root: Path,
                                                     engine: str) -> None:
    write(root, "f.txt", "a1\r\nb2\na3\nb4\nc5\na6\nb7\n")
    result = run_search(ctx, engine, pattern=r"a\d\r?\nb", multiline=True)
    assert [(m["line"], m["content"]) for m in result["matches"]] == [
        (1, "a1\nb2\na3\nb4"), (6, "a6\nb7")]
    counted = run_search(ctx, engine, pattern=r"a\d\r?\nb", multiline=True,
                         output_mode="count")
    assert counted["counts"] == [{"path": "f.txt", "count": 6}]
    windows = run_search(ctx, engine, pattern=r"a6\nb", multiline=True, context_lines=1)
    assert windows["matches"] == [{"path": "f.txt", "line": 6,
                                   "content": "    c5\n--> a6\n--> b7"}]


def test_line_break_without_multiline_is_invalid(ctx: ToolContext, root: Path,
                                                 engine: str) -> None:
    write(root, "f.txt", "a\nb\n")
    for pattern, literal in ((r"a\nb", False), ("a\nb", True), (r"[\n]", False)):
        with pytest.raises(ToolError) as err:
            run_search(ctx, engine, pattern=pattern, literal=literal)
        assert err.value.code == "invalid_pattern" and err.value.details["reason"]


def test_classes_never_cross_lines_without_multiline(ctx: ToolContext, root: Path,
                                                     engine: str) -> None:
    write(root, "f.txt", "foo\nbar\nfoo  bar\n")
    result = run_search(ctx, engine, pattern=r"foo\s*bar|o[^x]b")
    assert [m["line"] for m in result["matches"]] == [3]


def test_invalid_pattern_carries_the_engine_reason(ctx: ToolContext, root: Path,
                                                   engine: str) -> None:
    write(root, "f.txt", "x\n")
    with pytest.raises(ToolError) as err:
        run_search(ctx, engine, pattern="(unclosed")
    assert err.value.code == "invalid_pattern"
    assert "reason" in err.value.details and err.value.details["reason"]
    with pytest.raises(ToolError) as err:
        run_search(ctx, engine, pattern="x", glob="a[")
    assert err.value.code == "invalid_pattern" and err.value.details["param"] == "glob"


def test_look_around_and_back_references(ctx: ToolContext, root: Path, engine: str) -> None:
    write(root, "f.txt", "foobar\nfoobaz\nabab\nabcd\n")
    look = run_search(ctx, engine, pattern="foo(?=baz)")
    assert [m["line"] for m in look["matches"]] == [2]
    back = run_search(ctx, engine, pattern=r"(ab)\1")
    assert [m["line"] for m in back["matches"]] == [3]
    assert back["engine"] == ("ripgrep" if engine == "ripgrep" and RG_PCRE2 else "python")


def test_ripgrep_without_pcre2_falls_back_for_look_around(ctx: ToolContext,
                                                          root: Path) -> None:
    write(root, "f.txt", "foobar\nfoobaz\n")
    ctx.search_engine, ctx.rg_path, ctx.rg_has_pcre2 = "auto", RG_PATH, False
    result = search(ctx, pattern="foo(?!bar)")
    assert result["engine"] == "python" and [m["line"] for m in result["matches"]] == [2]


def test_binary_files_contribute_nothing(ctx: ToolContext, root: Path, engine: str) -> None:
    write(root, "late-nul.bin", b"needle\n" + b"x" * 200_000 + b"\0\n")
    write(root, "early.bin", b"\0needle\n")
    write(root, "text.txt", "needle\n")
    write(root, "utf16.txt", "first\nneedle here\n".encode("utf-16"))
    result = run_search(ctx, engine, pattern="needle")
    assert [(m["path"], m["line"], m["content"]) for m in result["matches"]] == [
        ("text.txt", 1, "needle"), ("utf16.txt", 2, "needle here")]
    one = run_search(ctx, engine, pattern="needle", path="late-nul.bin")
    assert one["matches"] == []


def test_long_lines_are_cut_with_a_marker(ctx: ToolContext, root: Path, engine: str) -> None:
    write(root, "long.txt", "needle" + "x" * 5000 + "\n")
    ctx.limits = Limits(max_line_chars=100)
    content = run_search(ctx, engine, pattern="needle")["matches"][0]["content"]
    assert content == "needle" + "x" * 94 + "… [line truncated: showing 100 of 5006 characters]"


def test_non_utf8_bytes_show_as_replacement(ctx: ToolContext, root: Path,
                                            engine: str) -> None:
    write(root, "latin.txt", b"caf\xe9 needle\n")
    assert run_search(ctx, engine, pattern="needle")["matches"][0]["content"] == \
        "caf\ufffd needle"


def test_symlinks_are_not_followed_by_the_walk(ctx: ToolContext, root: Path, outside: Path,
                                               engine: str) -> None:
    write(root, "real/f.txt", "needle\n")
    (root / "link").symlink_to("real")
    (root / "filelink.txt").symlink_to("real/f.txt")
    (root / "out").symlink_to(outside)
    result = run_search(ctx, engine, pattern="needle|CANARY")
    assert [m["path"] for m in result["matches"]] == ["real/f.txt"]
    through = run_search(ctx, engine, pattern="needle", path="link")
    assert [m["path"] for m in through["matches"]] == ["link/f.txt"]


def test_path_errors(ctx: ToolContext, root: Path, outside: Path, engine: str) -> None:
    os.mkfifo(root / "fifo")
    (root / "abs").symlink_to(outside)
    cases = [("missing", "file_not_found"), ("../outside", "path_outside_workspace"),
             (str(outside), "path_outside_workspace"), ("abs", "path_outside_workspace"),
             ("fifo", "not_a_regular_file")]
    for path, code in cases:
        with pytest.raises(ToolError) as err:
            run_search(ctx, engine, pattern="x", path=path)
        assert err.value.code == code, path


def test_fifo_inside_the_tree_is_skipped(ctx: ToolContext, root: Path, engine: str) -> None:
    os.mkfifo(root / "pipe")
    write(root, "f.txt", "needle\n")
    assert [m["path"] for m in run_search(ctx, engine, pattern="needle")["matches"]] == [
        "f.txt"]


def test_temporary_files_of_writes_are_never_searched(ctx: ToolContext, root: Path,
                                                      engine: str) -> None:
    write(root, ".chorus-tmp-0123456789abcdef", "needle\n")
    write(root, "f.txt", "needle\n")
    result = run_search(ctx, engine, pattern="needle", include_hidden=True,
                        include_ignored=True)
    assert [m["path"] for m in result["matches"]] == ["f.txt"]


def test_python_engine_fans_out_on_larger_trees(ctx: ToolContext, root: Path) -> None:
    """Split across the pool in path order, the first part FIRST_FILES long when the
    search may stop early (its answer comes as soon as that part is done); one that wants
    every match splits evenly."""
    for n in range(400):
        write(root, f"f{n:03}.txt", "needle\n" if n % 10 == 0 else "hay\n")
    ctx.search_engine, ctx.rg_path = "python", None
    fan = search(ctx, pattern="needle")
    assert isinstance(fan, FanOut) and len(fan.parts) > 2
    assert [f for part in fan.parts for f in part["files"]] == [f"f{n:03}.txt"
                                                               for n in range(400)]
    assert len(fan.parts[0]["files"]) == FIRST_FILES < len(fan.parts[1]["files"])
    assert fan.sizes == [len(part["files"]) for part in fan.parts]
    merge = resolve(fan.merge)
    first = resolve(fan.part)(ctx, **pickle.loads(fan.shared), **fan.parts[0])
    one = {**fan.args, "shape": dataclasses.replace(fan.args["shape"], max_results=1)}
    done = merge(one).add(first)
    assert done["truncated"] is True and done["files_searched"] == 11  # f000..f010
    assert merge(fan.args).add(first) is None
    every = search(ctx, pattern="needle", max_results=10**6)
    assert isinstance(every, FanOut) and len(every.parts[0]["files"]) > FIRST_FILES


def test_catastrophic_pattern_times_out_on_the_python_engine(ctx: ToolContext,
                                                             root: Path) -> None:
    write(root, "evil.txt", "a" * 40 + "!\n")
    ctx.limits = Limits(search_file_timeout=0.2)
    ctx.search_engine, ctx.rg_path = "python", None
    with pytest.raises(ToolError) as err:
        search(ctx, pattern=r"^(\w|\w\w)+$")
    assert err.value.code == "timeout" and err.value.details["path"] == "evil.txt"


def test_python_engine_reason_counts_positions_in_the_clients_pattern(ctx, root):
    """Regression: the reason said 'position 6' for the one-character pattern '(' (it
    counted an internal prefix)."""
    (root / "a.txt").write_text("x\n")
    with pytest.raises(ToolError) as err:
        run_search(ctx, "python", pattern="(")
    assert err.value.code == "invalid_pattern"
    assert err.value.details["reason"] == "missing ) at position 1"


@pytest.mark.parametrize("glob", ["!", "/", "!/", "! ", ["*.txt", "!"]])
def test_a_glob_that_names_no_path_is_invalid_pattern_on_both_engines(
        ctx: ToolContext, root: Path, engine: str, glob: str | list[str]) -> None:
    """`glob: "!"` excluded every file on ripgrep and none on the python engine (`"/"` the
    other way round): a glob with nothing after its `!` or `/` is refused on both."""
    write(root, "a.txt", "alpha\n")
    with pytest.raises(ToolError) as err:
        run_search(ctx, engine, pattern="alpha", glob=glob)
    assert err.value.code == "invalid_pattern" and err.value.details["param"] == "glob"
    assert "names no path" in err.value.message
    assert run_search(ctx, engine, pattern="alpha", glob=["#note", " "])["matches"] == [
        {"path": "a.txt", "line": 1, "content": "alpha"}]


@pytest.mark.parametrize("odd", ["\x00", "\ud800", "\udcff"])
def test_a_nul_or_surrogate_in_the_pattern_or_a_glob_is_searched_not_a_crash(
        ctx: ToolContext, root: Path, engine: str, odd: str) -> None:
    """Found by fuzzing: ripgrep's argv cannot carry a NUL or a lone surrogate (both were
    internal_error); such a search runs on the python engine, with the same answer."""
    write(root, "a.txt", "alpha\n")
    found = run_search(ctx, engine, pattern=f"{odd}|alpha")
    assert [m["path"] for m in found["matches"]] == ["a.txt"] and found["engine"] == "python"
    assert run_search(ctx, engine, pattern="alpha", glob=f"{odd}*")["matches"] == []
    assert run_search(ctx, engine, pattern="")["engine"] == engine


@pytest.mark.parametrize("lines", [2**63, 2**64, 10**30])
@pytest.mark.parametrize("side", ["context_lines", "before_context", "after_context"])
def test_a_huge_context_is_the_whole_file_not_a_hang(ctx: ToolContext, root: Path,
                                                     engine: str, side: str,
                                                     lines: int) -> None:
    """Found by fuzzing: context_lines 2**63 walked the whole window line by line, so the
    call ran until its timeout; a window now ends at the file's end. And (the claude
    set's `-A` at 2**64): rg refused a count past 64 bits, which came back as
    internal_error; a count past any file's lines now reaches rg as its largest."""
    write(root, "a.txt", "one\ntwo\nthree\n")
    found = run_search(ctx, engine, pattern="two", **{side: lines})
    shown = {"context_lines": "    one\n--> two\n    three",
             "before_context": "    one\n--> two", "after_context": "--> two\n    three"}
    assert found["matches"] == [{"path": "a.txt", "line": 2, "content": shown[side]}]


@pytest.mark.parametrize("nest", ["[" * 3000, "(" * 3000], ids=["classes", "groups"])
def test_deeply_nested_pattern_is_invalid_pattern_not_internal_error(
        ctx: ToolContext, root: Path, engine: str, nest: str) -> None:
    write(root, "a.txt", "[[[ (((\n")
    with pytest.raises(ToolError) as raised:
        run_search(ctx, engine, pattern=nest)
    assert raised.value.code == "invalid_pattern"


def test_files_searched_counts_a_name_holding_a_newline_once(ctx: ToolContext, root: Path,
                                                             engine: str) -> None:
    """Found by the warm parity suite: ripgrep stopped early was counted again with
    `rg --files`, one name per newline."""
    write(root, "ok.txt", "TODO\n" * 150)
    write(root, "new\nline.txt", "nothing\n")
    found = run_search(ctx, engine, pattern="TODO", max_results=10)
    assert found["truncated"] and found["files_searched"] == 2


@pytest.mark.parametrize("max_results", [10, 1000])
def test_files_searched_leaves_out_files_a_root_anchored_deny_rule_hides(
        root: Path, engine: str, max_results: int) -> None:
    """Found by the warm parity suite: `--deny secrets/**` is applied after ripgrep (it
    cannot read it the same way from every start), and its files were counted."""
    from chorus_tools.tools.confine.deny import DenyRules
    from chorus_tools.tools.confine.sandbox import Workspace
    write(root, "ok.txt", "TODO\n" * 150)
    write(root, "secrets/token.txt", "TODO\n")
    ws = Workspace(str(root), deny=DenyRules(["secrets/**"]))
    try:
        found = run_search(ToolContext(ws=ws), engine, pattern="TODO", max_results=max_results)
    finally:
        os.close(ws.root_fd)
    assert found["files_searched"] == 1
    assert {m["path"] for m in found["matches"]} == {"ok.txt"}


def test_regression_a_search_with_max_results_reads_every_file(ctx: ToolContext, root: Path,
                                                               engine: str) -> None:
    """Issue 32: `max_results: 100` read the whole tree (files_searched: 201023 at 200k
    files); a search stops once it holds its results and knows one more exists, and
    counts the files up to the one holding that one (docs/protocol.md, file.search)."""
    for n in range(400):
        write(root, f"d{n // 40:02}/f{n:03}.txt", "hit\n")
    for mode, key in (("content", "matches"), ("files_with_matches", "files"),
                      ("count", "counts")):
        result = run_search(ctx, engine, pattern="hit", max_results=10, output_mode=mode)
        assert len(result[key]) == 10 and result["truncated"] is True
        assert result["files_searched"] == 11
    full = run_search(ctx, engine, pattern="hit", max_results=1000)
    assert full["files_searched"] == 400 and not full["truncated"]


def test_binary_files_count_and_list_nothing(ctx: ToolContext, root: Path,
                                             engine: str) -> None:
    """rg's -c and -l (issue 32) must not count what its -n would drop: a NUL past the
    first match, walked or named (a file given as the path is named to rg)."""
    write(root, "late-nul.bin", b"needle\n" + b"x" * 200_000 + b"\0needle\n")
    write(root, "early.bin", b"\0needle\n")
    write(root, "text.txt", "needle\nneedle\n")
    for path in (".", "late-nul.bin", "early.bin"):
        counted = run_search(ctx, engine, pattern="needle", path=path, output_mode="count")
        files = run_search(ctx, engine, pattern="needle", path=path,
                           output_mode="files_with_matches")
        wanted = ["text.txt"] if path == "." else []
        assert [c["path"] for c in counted["counts"]] == wanted, path
        assert files["files"] == wanted, path
