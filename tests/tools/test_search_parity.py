"""Engine parity: the same query on the same tree gives the same reply from ripgrep and
from the python engine (apart from `engine`)."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any, Iterator

import pytest

from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.search import rg_reader, ripgrep
from chorus_tools.tools.search.results import Shape

from fanout_runner import RG_PATH, run_search

WORDS = ["alpha", "beta", "gamma", "Delta", "needle", "NEEDLE", "café", "naïve", "日本語",
         "foo_bar", "x1", "ÉCOLE", "straße", "tab\there", "end.", "(paren)", "a+b", "def",
         "class", "return", "  indented", "TODO:", "FIXME", "über"]


def _line(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 8)))


def build_tree(root: Path, seed: int = 7) -> None:
    """Several hundred files: unicode, CRLF, long lines, binaries, nested ignore files,
    hidden files and directories, names that sort differently per component."""
    rng = random.Random(seed)
    dirs = ["", "src", "src/pkg", "src/pkg.d", "src/pkg-old", "docs", "docs/ünï",
            ".hidden", "build", "logs", "deep/a/b/c", "a", "a.b"]
    (root / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    for d in dirs:
        (root / d).mkdir(parents=True, exist_ok=True)
    (root / "src/.gitignore").write_text("generated_*\n/pkg-old/skip*\n")
    (root / "docs/.ignore").write_text("draft*\n")
    for n in range(420):
        d = rng.choice(dirs)
        kind = rng.random()
        name = rng.choice(["f", "generated_", "draft", "skip", ".h", "keep", "mod", "é"])
        ext = rng.choice([".txt", ".py", ".md", ".log", ""])
        path = root / d / f"{name}{n}{ext}"
        lines = [_line(rng) for _ in range(rng.randint(0, 30))]
        text = "\n".join(lines) + ("\n" if rng.random() < 0.8 else "")
        if kind < 0.1:
            path.write_bytes(text.replace("\n", "\r\n").encode())
        elif kind < 0.15:
            path.write_bytes(text.encode() + b"\0" + b"needle\n")
        elif kind < 0.18:
            path.write_bytes(("needle " + "z" * 3000 + "\n" + text).encode())
        elif kind < 0.2:
            path.write_bytes(text.encode("utf-16"))
        else:
            path.write_text(text)
    (root / "logs/keep.log").write_text("needle kept\n")


QUERIES: list[dict[str, Any]] = [
    {"pattern": "needle"},
    {"pattern": "needle", "case_sensitive": False},
    {"pattern": "NEEDLE|Delta", "max_results": 7},
    {"pattern": "a+b", "literal": True},
    {"pattern": r"\bdef\b\s+\w+", "glob": "*.py"},
    {"pattern": "alpha", "glob": ["*.txt", "!src/**"]},
    {"pattern": "gamma", "glob": "src/**/*.md"},
    {"pattern": "café|über|日本語", "context_lines": 2, "max_results": 40},
    {"pattern": "straße", "case_sensitive": False},
    {"pattern": r"^\s+indented", "context_lines": 1},
    {"pattern": r"beta$"},
    {"pattern": "x1", "output_mode": "files_with_matches"},
    {"pattern": "x1", "output_mode": "files_with_matches", "max_results": 5},
    {"pattern": "TODO", "output_mode": "count"},
    {"pattern": "TODO", "output_mode": "count", "max_results": 3},
    {"pattern": "needle", "include_hidden": True},
    {"pattern": "needle", "include_ignored": True, "output_mode": "count"},
    {"pattern": "needle", "include_hidden": True, "include_ignored": True,
     "output_mode": "files_with_matches"},
    {"pattern": r"alpha\s*\n\s*beta", "multiline": True},
    {"pattern": r"def\s+class", "multiline": True, "context_lines": 1},
    {"pattern": r"(?s)TODO.*?FIXME", "multiline": True, "output_mode": "count"},
    {"pattern": r"(\w+) \1"},
    {"pattern": r"needle(?= kept)", "include_ignored": True},
    {"pattern": r"[[:upper:]]{5,}", "max_results": 25},
    {"pattern": "alpha", "path": "src"},
    {"pattern": "e", "path": "src/pkg", "max_results": 3, "context_lines": 3},
    {"pattern": r"\p{Greek}|\x{65e5}", "output_mode": "count"},
    {"pattern": "z{100}", "max_results": 2},
    {"pattern": r"\(paren\)|end\.", "max_results": 60},
    {"pattern": "", "path": "docs", "max_results": 10},
    # the core additions the seed dialects need (`--tools` in docs/protocol.md)
    {"pattern": "needle", "before_context": 2, "max_results": 30},
    {"pattern": "alpha", "after_context": 3, "context_lines": 1, "max_results": 30},
    {"pattern": "e", "type": "py", "max_results": 40},
    {"pattern": "a", "type": ["py", "markdown"], "output_mode": "count"},
    {"pattern": "beta", "type": "py", "glob": "*.txt", "output_mode": "files_with_matches"},
    {"pattern": "needle", "type": "txt", "include_ignored": True, "output_mode": "count"},
    {"pattern": "needle", "type": "log", "output_mode": "files_with_matches"},
]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("parity")
    build_tree(root)
    return root


@pytest.fixture(scope="module")
def tree_ctx(tree: Path) -> Iterator[ToolContext]:
    """One context on `tree` for every search of the module, its root closed after (a
    context a search made each lost a descriptor: hundreds over the module)."""
    ctx = ToolContext(ws=Workspace(str(tree)))
    yield ctx
    os.close(ctx.ws.root_fd)


@pytest.mark.parametrize("query", QUERIES, ids=[str(i) for i in range(len(QUERIES))])
def test_both_engines_agree(tree_ctx: ToolContext, query: dict[str, Any]) -> None:
    replies = {}
    for engine in ("ripgrep", "python"):
        reply = run_search(tree_ctx, engine, **query)
        assert reply.pop("engine") in ("ripgrep", "python")
        replies[engine] = reply
    assert replies["ripgrep"] == replies["python"]
    assert any(replies["ripgrep"].get(k) for k in ("matches", "files", "counts")), \
        "a parity query should find something"


@pytest.mark.skipif(RG_PATH is None, reason="needs ripgrep")
@pytest.mark.parametrize("query", QUERIES + [{"pattern": "e", "max_results": 10**6},
                                             {"pattern": "a", "context_lines": 1,
                                              "max_results": 10**6}],
                         ids=[str(i) for i in range(len(QUERIES) + 2)])
def test_ripgrep_sorted_and_unsorted_agree(tree_ctx: ToolContext, query: dict[str, Any],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """rg with --sort=path and early stops, and rg on all threads with the reply sorted
    (and pruned to max_results) at the end, give the same reply; 0 makes every query
    unsorted, so small max_results exercise the pruning."""
    replies = []
    for unsorted_from in (10**9, 0):
        monkeypatch.setattr(ripgrep, "UNSORTED_FROM", unsorted_from)
        replies.append(run_search(tree_ctx, "ripgrep", **query))
    assert replies[0] == replies[1]


def test_unsorted_pruning_keeps_every_file_the_reply_can_show() -> None:
    """Pruning keeps the files, in path order, up to and including the one holding item
    max_results + 1 (so `truncated` is still known); no fewer."""
    shape = Shape("content", 0, 0, False, 4, 2000)
    reader = rg_reader.Reader(None, ".", -1, shape, True)  # type: ignore[arg-type]
    sizes = {"d": 2, "a": 1, "c": 2, "b": 1, "e": 1}
    reader.done = [{"path": p, "entries": [[1, "x"]] * n, "count": n} for p, n in sizes.items()]
    reader._keep_first()
    assert [r["path"] for r in reader.done] == ["a", "b", "c", "d"]  # 4 items, then 6
    assert reader.count == 6


EARLY: list[dict[str, Any]] = [
    {"pattern": "needle"},
    {"pattern": "e", "output_mode": "files_with_matches"},
    {"pattern": "a", "output_mode": "count"},
    {"pattern": "alpha", "context_lines": 2},
    {"pattern": r"e\s*\n\s*\w", "multiline": True},
    {"pattern": "TODO", "output_mode": "count", "multiline": True},
    {"pattern": "x1", "glob": ["*.txt", "!src/**"], "include_hidden": True},
    {"pattern": "e", "path": "src", "include_ignored": True},
]


@pytest.mark.parametrize("query", EARLY, ids=[str(i) for i in range(len(EARLY))])
def test_early_stop_is_the_full_searchs_first_results(tree_ctx: ToolContext,
                                                      query: dict[str, Any]) -> None:
    """Issue 32: a search that stops at max_results answers the first max_results items
    of the full search, and `truncated` says whether one more exists, on both engines;
    its files_searched is the same on both, at least the files holding its results and
    at most every file covered (docs/protocol.md, file.search)."""
    key = {"content": "matches", "files_with_matches": "files",
           "count": "counts"}[query.get("output_mode", "content")]
    for engine in ("ripgrep", "python"):
        if engine == "ripgrep" and RG_PATH is None:
            continue
        full = run_search(tree_ctx, engine,
                          **{**query, "max_results": 10**6})
        every = full[key]
        assert len(every) > 20, "the query should find plenty"
        for cap in (1, 2, 7, 20, len(every) - 1, len(every), len(every) + 1):
            replies = [run_search(tree_ctx, e,
                                  **{**query, "max_results": cap})
                       for e in ("ripgrep", "python") if e != "ripgrep" or RG_PATH]
            for reply in replies:
                assert reply[key] == every[:cap], (engine, cap)
                assert reply["truncated"] is (len(every) > cap)
                holding = {item if isinstance(item, str) else item["path"]
                           for item in reply[key]}
                assert len(holding) <= reply["files_searched"] <= full["files_searched"]
                if not reply["truncated"]:
                    assert reply["files_searched"] == full["files_searched"]
                reply.pop("engine")
            assert all(reply == replies[0] for reply in replies), cap
